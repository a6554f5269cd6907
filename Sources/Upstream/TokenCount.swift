import Primitives

/// The state of one token bucket, as a value: the shared-by-lock `TokenBucket` and the
/// per-client quota's table of buckets both refill and take through it.
public struct TokenCount: Sendable {
    public private(set) var tokens: Double
    private var updated: Double

    /// The burst a per-minute rate allows: a sixth of a minute's worth (at least 1), for the
    /// upstream budgets and the per-client quota alike.
    public static func burst(perMinute: Double) -> Int { Saturating.int((perMinute / 6).rounded(.up), in: 1...1_000_000) }

    /// A full bucket at `now`.
    public init(capacity: Double, now: Double) {
        tokens = capacity
        updated = now
    }

    /// Refills to `now` (at `perSecond`, up to `capacity`), then takes `cost` tokens (one by
    /// default) if there are as many: granted, or the seconds until they are due.
    public mutating func take(now: Double, capacity: Double, perSecond: Double, cost: Double = 1) -> (granted: Bool, retryAfter: Double) {
        tokens = min(capacity, tokens + max(0, now - updated) * perSecond)
        updated = max(updated, now)
        // A share of a token summed many times lands a rounding error short of the whole.
        if tokens >= cost - 1e-9 {
            tokens = max(0, tokens - cost)
            return (true, 0)
        }
        return (false, (cost - tokens) / perSecond)
    }

    /// Gives back what was taken for work that cost nothing.
    public mutating func giveBack(capacity: Double, cost: Double = 1) { tokens = min(capacity, tokens + cost) }
}
