/// An upstream budget shared by every replica (Redis in production), behind a protocol
/// the client owns so it does not know what implements it.
public protocol SharedRateBudget: Sendable {
    /// One request's worth of `upstream`'s budget (`perMinute`, at most `burst` at once),
    /// or nil when the shared budget cannot be reached: the caller falls back to a local one.
    func take(_ upstream: String, perMinute: Double, burst: Int) async -> RateDecision?
}

public struct RateDecision: Sendable, Equatable {
    public var granted: Bool
    /// Seconds until a request would be granted (0 when granted).
    public var retryAfter: Double

    public init(granted: Bool, retryAfter: Double) {
        self.granted = granted
        self.retryAfter = retryAfter
    }
}

/// Observes each rate-limit decision: upstream, mode (`local`, `shared`, `fallback`), granted.
public typealias RateDecisionObserver = @Sendable (_ upstream: String, _ mode: String, _ granted: Bool) -> Void
