import Primitives
import Synchronization
import Upstream

/// Everything `/metrics` reports. Routes and sources are fixed at startup, so the
/// hot path only touches atomics.
public final class Metrics: Sendable {
    /// Per route pattern, in the router's order (the feeds first). A list, not a dictionary:
    /// a dozen patterns, most short enough that comparing is comparing two words, where
    /// hashing the per-request lookup cost hundreds of instructions. /metrics sorts them.
    private let routes: [(pattern: String, stats: RouteStats)]
    private let unmatched: RouteStats
    let caches: [String: CacheStats]
    /// Upstream outcomes and rejections (error and miss paths only, so a lock is fine).
    private let counters = LabelledCounters()
    private let upstreamLatency: [String: Histogram]
    let shared = SharedTierMetrics()
    /// The trace exporter's counters, when export is on.
    let tracing: TraceMetrics?
    /// The image proxy's counters, when it is on.
    let images: ImageMetrics?

    init(routes: [String], sources: [String], tracing: TraceMetrics? = nil, images: ImageMetrics? = nil) {
        self.tracing = tracing
        self.images = images
        var all: [(pattern: String, stats: RouteStats)] = []
        for route in routes + ["(unmatched)", "(invalid)", "*"] where !all.contains(where: { $0.pattern == route }) {
            all.append((route, RouteStats()))
        }
        self.routes = all
        unmatched = all.first { $0.pattern == "(unmatched)" }?.stats ?? RouteStats()
        var c: [String: CacheStats] = [:]
        var h: [String: Histogram] = [:]
        for s in sources {
            c[s] = CacheStats()
            h[s] = Histogram()
        }
        caches = c
        upstreamLatency = h
    }

    func recordRequest(route: String, status: Int, seconds: Double) {
        for i in routes.indices where routes[i].pattern == route {
            return routes[i].stats.record(status: status, seconds: seconds)
        }
        unmatched.record(status: status, seconds: seconds)
    }

    func recordUpstream(source: String, outcome: String, seconds: Double) {
        counters.add("feedproxy_upstream_requests_total", "source=\"\(source)\",outcome=\"\(outcome)\"")
        if outcome != "rate_limited" && outcome != "circuit_open" { upstreamLatency[source]?.observe(seconds) }
    }

    func recordRejection(source: String, status: Int, reason: String) {
        counters.add("feedproxy_rejected_requests_total", "source=\"\(source)\",status=\"\(status)\",reason=\"\(reason)\"")
    }

    struct Gauges {
        var openConnections: Int
        var requestsInFlight = 0
        var cacheDeadlineWaits = 0
        var loopConnections: [Int] = []
        var connectionsMoved = 0
        var cacheBytes: Int
        var cacheEntries: Int
        var breakers: [(host: String, state: Int)]
        var feedBreakers = BreakerCounts()
        var draining: Bool
        var droppedLogLines: Int
        var queues: [(upstream: String, stats: FairQueue.Stats)] = []
        var hostSlots = HostSlots.Stats()
        var trackedClients = 0
        var untrustedForwarded = 0
        var eventStreams = 0
        var watchedFeeds = 0
        var events = 0
        var eventsComposed = 0
        var sharedTierEmptied = 0
        var watchRefreshes = 0
        var pings = 0
        var websub: (subscriptions: Int, accepted: Int, refused: Int, denied: Int, verified: Int, notifications: Int, forged: Int, keptForOthers: Int)?
    }

    func render(_ g: Gauges) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) { out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        func single(_ name: String, _ type: String, _ help: String, _ value: Int) {
            family(name, type, help)
            out += "\(name) \(value)\n"
        }
        family("feedproxy_http_requests_total", "counter", "HTTP requests answered, by route and status.")
        let sorted = routes.sorted { $0.pattern < $1.pattern }
        for (route, stats) in sorted {
            for (status, n) in stats.counts() { out += "feedproxy_http_requests_total{route=\"\(route)\",status=\"\(status)\"} \(n)\n" }
        }
        family("feedproxy_http_request_duration_seconds", "histogram", "Time from request parsed to response queued, by route.")
        for (route, stats) in sorted where !stats.counts().isEmpty {
            stats.latency.render("feedproxy_http_request_duration_seconds", labels: "route=\"\(route)\"", into: &out)
        }
        family("feedproxy_cache_requests_total", "counter", "Cache lookups by source and result.")
        for (source, stats) in caches.sorted(by: { $0.key < $1.key }) {
            for (result, n) in [("hit", stats.hits.current), ("miss", stats.misses.current), ("stale", stats.stale.current)] {
                out += "feedproxy_cache_requests_total{source=\"\(source)\",result=\"\(result)\"} \(n)\n"
            }
        }
        single("feedproxy_cache_bytes", "gauge", "Bytes held by the response cache.", g.cacheBytes)
        single("feedproxy_cache_entries", "gauge", "Entries in the response cache.", g.cacheEntries)
        single(
            "feedproxy_cache_deadline_waits", "gauge", "Requests waiting on a cache load with a deadline (each holds a timer; 0 when idle).",
            g.cacheDeadlineWaits)
        counters.render("feedproxy_upstream_requests_total", help: "Upstream attempts by source and outcome.", into: &out)
        family("feedproxy_upstream_request_duration_seconds", "histogram", "Upstream attempt duration by source.")
        for (source, h) in upstreamLatency.sorted(by: { $0.key < $1.key }) {
            h.render("feedproxy_upstream_request_duration_seconds", labels: "source=\"\(source)\"", into: &out)
        }
        counters.render("feedproxy_rejected_requests_total", help: "429 and 503 answers by source and reason.", into: &out)
        family("feedproxy_upstream_queue_depth", "gauge", "Cache misses waiting for an upstream token, by upstream.")
        for q in g.queues { out += "feedproxy_upstream_queue_depth{source=\"\(q.upstream)\"} \(q.stats.depth)\n" }
        family("feedproxy_upstream_queue_waits_total", "counter", "Waits in an upstream's fair queue by result.")
        for q in g.queues {
            for (result, n) in [
                ("granted", q.stats.waitsGranted), ("timeout", q.stats.waitsTimedOut), ("cancelled", q.stats.waitsCancelled),
            ] {
                out += "feedproxy_upstream_queue_waits_total{source=\"\(q.upstream)\",result=\"\(result)\"} \(n)\n"
            }
        }
        family("feedproxy_upstream_queue_wait_seconds_total", "counter", "Seconds granted waiters spent queued, by upstream.")
        for q in g.queues { out += "feedproxy_upstream_queue_wait_seconds_total{source=\"\(q.upstream)\"} \(q.stats.waitSeconds)\n" }
        family("feedproxy_upstream_queue_rejections_total", "counter", "Requests the fair queue refused, by upstream and reason.")
        for q in g.queues {
            for (reason, n) in q.stats.rejected.sorted(by: { $0.key < $1.key }) {
                out += "feedproxy_upstream_queue_rejections_total{source=\"\(q.upstream)\",reason=\"\(reason)\"} \(n)\n"
            }
        }
        single("feedproxy_upstream_host_waiting", "gauge", "Upstream requests waiting for a connection to a busy host.", g.hostSlots.waiting)
        family("feedproxy_upstream_host_waits_total", "counter", "Waits for a connection to a busy host, by result (turns are fair between clients).")
        out += "feedproxy_upstream_host_waits_total{result=\"granted\"} \(g.hostSlots.waitsGranted)\n"
        out += "feedproxy_upstream_host_waits_total{result=\"timeout\"} \(g.hostSlots.waitsTimedOut)\n"
        family("feedproxy_upstream_host_wait_seconds_total", "counter", "Seconds granted requests waited for a connection to a busy host.")
        out += "feedproxy_upstream_host_wait_seconds_total \(g.hostSlots.waitSeconds)\n"
        single("feedproxy_clients_tracked", "gauge", "Clients whose miss quota is held in memory.", g.trackedClients)
        single(
            "feedproxy_untrusted_forwarded_for_total", "counter",
            "Misses carrying X-Forwarded-For from a peer outside TRUSTED_PROXIES while the per-client quota is on (a proxy FeedProxy does not trust).",
            g.untrustedForwarded)
        single("feedproxy_open_connections", "gauge", "Client connections currently open.", g.openConnections)
        single(
            "feedproxy_requests_in_flight", "gauge", "Requests whose handler is running (misses, batches; hits are answered on the loop).",
            g.requestsInFlight)
        single("feedproxy_event_streams", "gauge", "Open /episodes/events streams.", g.eventStreams)
        single("feedproxy_watched_feeds", "gauge", "Podcasts the open event streams watch (kept warm by background reads).", g.watchedFeeds)
        single("feedproxy_events_sent_total", "counter", "Episode events sent to event streams.", g.events)
        single(
            "feedproxy_events_composed_total", "counter", "Episode events worked out for streams (an event shared by streams at one position counts once).",
            g.eventsComposed)
        single(
            "feedproxy_shared_tier_emptied_total", "counter",
            "Times this replica saw the shared tier (Redis) come back empty and read its watched feeds again.", g.sharedTierEmptied)
        single(
            "feedproxy_watch_refreshes_total", "counter", "Background reads of watched feeds started (WATCH_REFRESHES_PER_MIN at most a minute).",
            g.watchRefreshes)
        single("feedproxy_pings_total", "counter", "Publishers' pings (/hub/notify) that started a read.", g.pings)
        if let w = g.websub {
            single("feedproxy_websub_subscriptions", "gauge", "WebSub subscriptions this replica holds (watched feeds that name a hub).", w.subscriptions)
            family("feedproxy_websub_requests_total", "counter", "Subscribe and unsubscribe requests sent to WebSub hubs, by how they ended.")
            out += "feedproxy_websub_requests_total{result=\"accepted\"} \(w.accepted)\n"
            out += "feedproxy_websub_requests_total{result=\"refused\"} \(w.refused)\n"
            single(
                "feedproxy_websub_unsubscribes_kept_total", "counter", "Unsubscriptions not sent: another replica still watched the feed.",
                w.keptForOthers)
            single("feedproxy_websub_denied_total", "counter", "Subscriptions a hub denied (hub.mode=denied).", w.denied)
            single("feedproxy_websub_verifications_total", "counter", "Hubs' verifications of intent confirmed.", w.verified)
            family("feedproxy_websub_notifications_total", "counter", "Content notifications from hubs, by their signature.")
            out += "feedproxy_websub_notifications_total{signature=\"valid\"} \(w.notifications)\n"
            out += "feedproxy_websub_notifications_total{signature=\"invalid\"} \(w.forged)\n"
        }
        family("feedproxy_loop_connections", "gauge", "Client connections each event loop owns (balance of the CPU steering).")
        for (loop, count) in g.loopConnections.enumerated() { out += "feedproxy_loop_connections{loop=\"\(loop)\"} \(count)\n" }
        single(
            "feedproxy_connections_moved_total", "counter", "Idle connections moved to the loop of the CPU their packets arrive on.", g.connectionsMoved)
        family("feedproxy_circuit_breaker_state", "gauge", "Circuit breaker per upstream host: 0 closed, 1 half-open, 2 open.")
        for b in g.breakers { out += "feedproxy_circuit_breaker_state{host=\"\(Self.labelValue(b.host))\"} \(b.state)\n" }
        family("feedproxy_feed_circuit_breakers", "gauge", "Podcast feed URLs by circuit state (each feed URL has its own breaker; bounded LRU).")
        for (state, n) in [("closed", g.feedBreakers.closed), ("half_open", g.feedBreakers.halfOpen), ("open", g.feedBreakers.open)] {
            out += "feedproxy_feed_circuit_breakers{state=\"\(state)\"} \(n)\n"
        }
        single("feedproxy_draining", "gauge", "1 while shutting down.", g.draining ? 1 : 0)
        single("feedproxy_log_lines_dropped_total", "counter", "Log lines dropped because stdout could not keep up.", g.droppedLogLines)
        shared.render(into: &out)
        tracing?.render(into: &out)
        images?.render(into: &out)
        ProcessMetrics.read().render(into: &out)
        BuildInfo.render(version: Configuration.version, into: &out)
        return out
    }

    /// A label value as the Prometheus text format wants it: backslash, double quote and
    /// line feed escaped (a host name comes from configuration or a redirect, not from us).
    static func labelValue(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A }) else { return value }
        var out = ""
        for ch in value.unicodeScalars {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}
