import Primitives
import Synchronization

/// What the shared tier (Redis) and the rate limiter did, for `/metrics`. Only the miss
/// path and the Redis thread touch these; the hit path never does.
package final class SharedTierMetrics: Sendable {
    private let counters = LabelledCounters()
    private let redisUp = Atomic<Int>(-1)  // -1: no Redis configured
    private let reconnects = Counter()
    private let failovers = Counter()
    /// 1 when `maxmemory-policy` is volatile-*, 0 when it is not, -1 when unknown (CONFIG refused).
    private let evictionPolicyOK = Atomic<Int>(-1)
    /// Round trips of the Redis operations FeedProxy sends (others are not timed).
    package static let timedOperations = ["get", "probe", "watch", "put", "lock", "unlock", "rate", "ping"]
    private let latency: [String: Histogram] = Dictionary(
        uniqueKeysWithValues: timedOperations.map { ($0, Histogram(bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25])) })

    package func redisLatency(operation: String, seconds: Double) { latency[operation]?.observe(seconds) }
    package func redisReconnected() { reconnects.add() }
    package func redisFailover() { failovers.add() }
    package func redisEvictionPolicy(ok: Bool?) { evictionPolicyOK.store(ok.map { $0 ? 1 : 0 } ?? -1, ordering: .relaxed) }

    package func redisCommand(operation: String, outcome: String) {
        counters.add("feedproxy_redis_commands_total", "operation=\"\(operation)\",outcome=\"\(outcome)\"")
    }

    package func redisState(up: Bool) { redisUp.store(up ? 1 : 0, ordering: .relaxed) }
    /// Whether the Redis connection works now; nil without Redis.
    package var redisIsUp: Bool? {
        let up = redisUp.load(ordering: .relaxed)
        return up < 0 ? nil : up == 1
    }

    package func l2(_ event: String) { counters.add("feedproxy_l2_events_total", "event=\"\(event)\"") }

    package func rateDecision(upstream: String, mode: String, granted: Bool) {
        counters.add("feedproxy_rate_limit_decisions_total", "upstream=\"\(upstream)\",mode=\"\(mode)\",decision=\"\(granted ? "granted" : "refused")\"")
    }

    package func render(into out: inout String) {
        let up = redisUp.load(ordering: .relaxed)
        if up >= 0 {
            out += "# HELP feedproxy_redis_up 1 while the Redis connection works.\n# TYPE feedproxy_redis_up gauge\nfeedproxy_redis_up \(up)\n"
            out += "# HELP feedproxy_redis_reconnects_total Connections to Redis made again after one was lost.\n"
            out += "# TYPE feedproxy_redis_reconnects_total counter\nfeedproxy_redis_reconnects_total \(reconnects.current)\n"
            out += "# HELP feedproxy_redis_failovers_total Primary changes followed (Sentinel, or a READONLY/LOADING/MASTERDOWN step-down).\n"
            out += "# TYPE feedproxy_redis_failovers_total counter\nfeedproxy_redis_failovers_total \(failovers.current)\n"
            let policy = evictionPolicyOK.load(ordering: .relaxed)
            if policy >= 0 {
                out += "# HELP feedproxy_redis_eviction_policy_ok 1 when Redis evicts the cache and keeps the records (volatile-*), 0 when not.\n"
                out += "# TYPE feedproxy_redis_eviction_policy_ok gauge\nfeedproxy_redis_eviction_policy_ok \(policy)\n"
            }
            out += "# HELP feedproxy_redis_command_duration_seconds Redis round trips by operation, as the caller waited.\n"
            out += "# TYPE feedproxy_redis_command_duration_seconds histogram\n"
            for op in Self.timedOperations { latency[op]?.render("feedproxy_redis_command_duration_seconds", labels: "operation=\"\(op)\"", into: &out) }
        }
        counters.render(
            "feedproxy_redis_commands_total", help: "Redis commands by operation and outcome (ok, error, timeout, unavailable).", always: false,
            into: &out)
        counters.render(
            "feedproxy_l2_events_total",
            help:
                "Shared cache (L2) results: hit, miss, wait, wait_timed_out, stale_served, stored, skipped_too_large, fetched_unlocked (fetched without the key's lock: the tier unreachable or not answering).",
            always: false, into: &out)
        counters.render(
            "feedproxy_rate_limit_decisions_total", help: "Upstream budget decisions by upstream and mode (local, shared, fallback).", always: false,
            into: &out)
    }
}
