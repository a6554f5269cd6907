import Primitives

/// A token bucket: `capacity` requests at once, refilled at `perSecond`.
/// Keeps FeedProxy under an upstream's published rate limit.
public final class TokenBucket: TokenSource {
    public let capacity: Double
    public let perSecond: Double
    private let state: Locked<TokenCount>

    public init(capacity: Double, perSecond: Double, now: Double) {
        self.capacity = capacity
        self.perSecond = perSecond
        state = Locked(TokenCount(capacity: capacity, now: now))
    }

    /// Takes a token, or says how long until one is available.
    public func take(now: Double) -> (granted: Bool, retryAfter: Double) {
        state.withLock { $0.take(now: now, capacity: capacity, perSecond: perSecond) }
    }
}
