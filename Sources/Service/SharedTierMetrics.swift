import Locking
import Synchronization

/// What the shared tier (Redis) and the rate limiter did, for `/metrics`. Only the miss
/// path and the Redis thread touch these; the hit path never does.
final class SharedTierMetrics: Sendable {
    private let counts = Locked<[String: Int]>([:])
    private let redisUp = Atomic<Int>(-1)  // -1: no Redis configured

    func redisCommand(operation: String, outcome: String) {
        counts.withLock { $0["feedproxy_redis_commands_total{operation=\"\(operation)\",outcome=\"\(outcome)\"}", default: 0] += 1 }
    }

    func redisState(up: Bool) { redisUp.store(up ? 1 : 0, ordering: .relaxed) }

    func l2(_ event: String) {
        counts.withLock { $0["feedproxy_l2_events_total{event=\"\(event)\"}", default: 0] += 1 }
    }

    func rateDecision(upstream: String, mode: String, granted: Bool) {
        counts.withLock {
            $0["feedproxy_rate_limit_decisions_total{upstream=\"\(upstream)\",mode=\"\(mode)\",decision=\"\(granted ? "granted" : "refused")\"}", default: 0] +=
                1
        }
    }

    private static let help: [(String, String)] = [
        ("feedproxy_redis_commands_total", "Redis commands by operation and outcome (ok, error, timeout, unavailable)."),
        ("feedproxy_l2_events_total", "Shared cache (L2) results: hit, miss, wait, wait_timed_out, stale_served, stored, skipped_too_large."),
        ("feedproxy_rate_limit_decisions_total", "Upstream budget decisions by upstream and mode (local, shared, fallback)."),
    ]

    func render(into out: inout String) {
        let up = redisUp.load(ordering: .relaxed)
        if up >= 0 {
            out += "# HELP feedproxy_redis_up 1 while the Redis connection works.\n# TYPE feedproxy_redis_up gauge\nfeedproxy_redis_up \(up)\n"
        }
        let all = counts.withLock { $0 }
        for (name, help) in Self.help {
            let series = all.filter { $0.key.hasPrefix(name + "{") }.sorted { $0.key < $1.key }
            guard !series.isEmpty else { continue }
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
            for (key, n) in series { out += "\(key) \(n)\n" }
        }
    }
}
