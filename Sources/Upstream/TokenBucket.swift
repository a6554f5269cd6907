import Locking

/// A token bucket: `capacity` requests at once, refilled at `perSecond`.
/// Keeps FeedProxy under an upstream's published rate limit.
final class TokenBucket: Sendable {
    private struct State {
        var tokens: Double
        var updated: Double
    }

    let capacity: Double
    let perSecond: Double
    private let state: Locked<State>

    init(capacity: Double, perSecond: Double, now: Double) {
        self.capacity = capacity
        self.perSecond = perSecond
        state = Locked(State(tokens: capacity, updated: now))
    }

    /// Takes a token, or says how long until one is available.
    func take(now: Double) -> (granted: Bool, retryAfter: Double) {
        state.withLock { s in
            s.tokens = min(capacity, s.tokens + (now - s.updated) * perSecond)
            s.updated = now
            if s.tokens >= 1 {
                s.tokens -= 1
                return (true, 0)
            }
            return (false, (1 - s.tokens) / perSecond)
        }
    }
}
