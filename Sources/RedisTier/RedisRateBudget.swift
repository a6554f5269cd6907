import Primitives
import Upstream

/// The per-upstream rate limits as one budget for all replicas: a GCRA evaluated
/// atomically in Redis on Redis' clock. Keys carry no schema fingerprint, so old and
/// new pods share one budget during a rolling deploy.
public final class RedisRateBudget: SharedRateBudget {
    private let redis: RedisConnection
    private let prefix: String

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
        // A wait past an hour is no GCRA state this replica wrote: read as unavailable.
        guard (0...3_600_000).contains(retryMs) else { return nil }
        return RateDecision(granted: granted == 1, retryAfter: Double(retryMs) / 1000)
    }
}
