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

    /// Refills to `now` (at `perSecond`, up to `capacity`), then takes a token if there is
    /// one: granted, or the seconds until one is due.
    public mutating func take(now: Double, capacity: Double, perSecond: Double) -> (granted: Bool, retryAfter: Double) {
        tokens = min(capacity, tokens + max(0, now - updated) * perSecond)
        updated = max(updated, now)
        if tokens >= 1 {
            tokens -= 1
            return (true, 0)
        }
        return (false, (1 - tokens) / perSecond)
    }

    /// Gives back one token taken for work that cost nothing.
    public mutating func giveBack(capacity: Double) { tokens = min(capacity, tokens + 1) }
}
