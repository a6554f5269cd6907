import Locking

/// Where an upstream's tokens come from: a local bucket today, a shared one (Redis) later.
/// The fair queue in front of it only takes tokens and asks when the next one is due.
public protocol TokenSource: Sendable {
    /// Steady refill rate in tokens per second (for wait estimates).
    var perSecond: Double { get }
    /// Takes a token, or says how many seconds until one is available.
    func take(now: Double) -> (granted: Bool, retryAfter: Double)
}

/// A token bucket: `capacity` requests at once, refilled at `perSecond`.
/// Keeps FeedProxy under an upstream's published rate limit.
public final class TokenBucket: TokenSource {
    private struct State {
        var tokens: Double
        var updated: Double
    }

    public let capacity: Double
    public let perSecond: Double
    private let state: Locked<State>

    public init(capacity: Double, perSecond: Double, now: Double) {
        self.capacity = capacity
        self.perSecond = perSecond
        state = Locked(State(tokens: capacity, updated: now))
    }

    /// Takes a token, or says how long until one is available.
    public func take(now: Double) -> (granted: Bool, retryAfter: Double) {
        state.withLock { s in
            s.tokens = min(capacity, s.tokens + max(0, now - s.updated) * perSecond)
            s.updated = max(s.updated, now)
            if s.tokens >= 1 {
                s.tokens -= 1
                return (true, 0)
            }
            return (false, (1 - s.tokens) / perSecond)
        }
    }
}
