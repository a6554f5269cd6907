import Observability
import Upstream

/// The upstream client's queues, busy hosts and circuit breakers.
struct UpstreamGauges: MetricsPart {
    var queues: [(upstream: String, stats: FairQueue.Stats)] = []
    var hostSlots = HostSlots.Stats()
    /// Per API host: 0 closed, 1 half-open, 2 open.
    var breakers: [(host: String, state: Int)] = []
    var feedBreakers = BreakerCounts()

    init(breakers: [(host: String, state: Int)] = []) { self.breakers = breakers }

    init(_ upstream: UpstreamClient) {
        queues = upstream.queueStats()
        hostSlots = upstream.hostSlotStats()
        feedBreakers = upstream.feedBreakerCounts()
        breakers = upstream.breakerStates().map { b -> (host: String, state: Int) in
            switch b.state {
            case .closed: (b.host, 0)
            case .halfOpen: (b.host, 1)
            case .open: (b.host, 2)
            }
        }
    }

    func render(into out: inout String) {
        MetricsText.family("feedproxy_upstream_queue_depth", "gauge", "Cache misses waiting for an upstream token, by upstream.", into: &out)
        for q in queues { out += "feedproxy_upstream_queue_depth{source=\"\(q.upstream)\"} \(q.stats.depth)\n" }
        MetricsText.family("feedproxy_upstream_queue_waits_total", "counter", "Waits in an upstream's fair queue by result.", into: &out)
        for q in queues {
            for (result, n) in [("granted", q.stats.waitsGranted), ("timeout", q.stats.waitsTimedOut), ("cancelled", q.stats.waitsCancelled)] {
                out += "feedproxy_upstream_queue_waits_total{source=\"\(q.upstream)\",result=\"\(result)\"} \(n)\n"
            }
        }
        MetricsText.family("feedproxy_upstream_queue_wait_seconds_total", "counter", "Seconds granted waiters spent queued, by upstream.", into: &out)
        for q in queues { out += "feedproxy_upstream_queue_wait_seconds_total{source=\"\(q.upstream)\"} \(q.stats.waitSeconds)\n" }
        MetricsText.family("feedproxy_upstream_queue_rejections_total", "counter", "Requests the fair queue refused, by upstream and reason.", into: &out)
        for q in queues {
            for (reason, n) in q.stats.rejected.sorted(by: { $0.key < $1.key }) {
                out += "feedproxy_upstream_queue_rejections_total{source=\"\(q.upstream)\",reason=\"\(reason)\"} \(n)\n"
            }
        }
        MetricsText.single(
            "feedproxy_upstream_host_waiting", "gauge", "Upstream requests waiting for a connection to a busy host.", hostSlots.waiting, into: &out)
        MetricsText.family(
            "feedproxy_upstream_host_waits_total", "counter", "Waits for a connection to a busy host, by result (turns are fair between clients).", into: &out)
        out += "feedproxy_upstream_host_waits_total{result=\"granted\"} \(hostSlots.waitsGranted)\n"
        out += "feedproxy_upstream_host_waits_total{result=\"timeout\"} \(hostSlots.waitsTimedOut)\n"
        MetricsText.family(
            "feedproxy_upstream_host_wait_seconds_total", "counter", "Seconds granted requests waited for a connection to a busy host.", into: &out)
        out += "feedproxy_upstream_host_wait_seconds_total \(hostSlots.waitSeconds)\n"
        MetricsText.family("feedproxy_circuit_breaker_state", "gauge", "Circuit breaker per upstream host: 0 closed, 1 half-open, 2 open.", into: &out)
        for b in breakers { out += "feedproxy_circuit_breaker_state{host=\"\(Metrics.labelValue(b.host))\"} \(b.state)\n" }
        MetricsText.family(
            "feedproxy_feed_circuit_breakers", "gauge", "Podcast feed URLs by circuit state (each feed URL has its own breaker; bounded LRU).", into: &out)
        for (state, n) in [("closed", feedBreakers.closed), ("half_open", feedBreakers.halfOpen), ("open", feedBreakers.open)] {
            out += "feedproxy_feed_circuit_breakers{state=\"\(state)\"} \(n)\n"
        }
    }
}
