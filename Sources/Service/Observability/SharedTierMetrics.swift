import Synchronization

/// What the shared tier (Redis) and the rate limiter did, for `/metrics`. Only the miss
/// path and the Redis thread touch these; the hit path never does.
final class SharedTierMetrics: Sendable {
    private let counters = LabelledCounters()
    private let redisUp = Atomic<Int>(-1)  // -1: no Redis configured

    func redisCommand(operation: String, outcome: String) {
        counters.add("feedproxy_redis_commands_total", "operation=\"\(operation)\",outcome=\"\(outcome)\"")
    }

    func redisState(up: Bool) { redisUp.store(up ? 1 : 0, ordering: .relaxed) }

    func l2(_ event: String) { counters.add("feedproxy_l2_events_total", "event=\"\(event)\"") }

    func rateDecision(upstream: String, mode: String, granted: Bool) {
        counters.add("feedproxy_rate_limit_decisions_total", "upstream=\"\(upstream)\",mode=\"\(mode)\",decision=\"\(granted ? "granted" : "refused")\"")
    }

    func render(into out: inout String) {
        let up = redisUp.load(ordering: .relaxed)
        if up >= 0 {
            out += "# HELP feedproxy_redis_up 1 while the Redis connection works.\n# TYPE feedproxy_redis_up gauge\nfeedproxy_redis_up \(up)\n"
        }
        counters.render(
            "feedproxy_redis_commands_total", help: "Redis commands by operation and outcome (ok, error, timeout, unavailable).", always: false,
            into: &out)
        counters.render(
            "feedproxy_l2_events_total", help: "Shared cache (L2) results: hit, miss, wait, wait_timed_out, stale_served, stored, skipped_too_large.",
            always: false, into: &out)
        counters.render(
            "feedproxy_rate_limit_decisions_total", help: "Upstream budget decisions by upstream and mode (local, shared, fallback).", always: false,
            into: &out)
    }
}
