import Primitives
import Upstream

/// The per-upstream rate limits as one budget for all replicas: a GCRA evaluated
/// atomically in Redis on Redis' clock. Keys carry no schema fingerprint, so old and
/// new pods share one budget during a rolling deploy.
public final class RedisRateBudget: SharedRateBudget {
    private let redis: RedisConnection
    private let prefix: String
    /// The longest wait a reply may name (one emission interval, at most an hour).
    static let maxWaitMs = 3_600_000

    public init(connection: RedisConnection, prefix: String = "feedproxy") {
        redis = connection
        self.prefix = prefix
    }

    public func take(_ upstream: String, perMinute: Double, burst: Int) async -> RateDecision? {
        guard perMinute > 0 else { return RateDecision(granted: false, retryAfter: 60) }
        let interval = Saturating.int((60_000 / perMinute).rounded(), in: 1...Int(Int32.max))
        let reply = await redis.script(
            RedisScripts.rateTakeIndex, keys: [Array("\(prefix):rate:\(upstream)".utf8)],
            args: [Array(String(interval).utf8), Array(String(max(1, burst)).utf8)], operation: "rate")
        guard case .success(let value) = reply, let fields = value.elements, fields.count == 2,
            let granted = fields[0].int, let retryMs = fields[1].int
        else { return nil }
        // Validated like network input: the script answers {1, 0} or {0, wait} with the wait
        // in 1 ms...one interval. Anything else (a {0, 0} would make every miss ask again at
        // once, spinning until its deadline) is no reply this code wrote: read as unavailable.
        switch (granted, retryMs) {
        case (1, 0): return RateDecision(granted: true, retryAfter: 0)
        case (0, 1...min(interval, Self.maxWaitMs)): return RateDecision(granted: false, retryAfter: Double(retryMs) / 1000)
        default: return nil
        }
    }
}
