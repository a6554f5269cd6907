import Primitives
import Synchronization

/// Everything `/metrics` reports. Routes and sources are fixed at startup, so the
/// hot path only touches atomics.
public final class Metrics: Sendable {
    /// Per route pattern, in the router's order (the feeds first). A list, not a dictionary:
    /// a dozen patterns, most short enough that comparing is comparing two words, where
    /// hashing the per-request lookup cost hundreds of instructions. /metrics sorts them.
    private let routes: [(pattern: String, stats: RouteStats)]
    private let unmatched: RouteStats
    package let caches: [String: CacheStats]
    /// Upstream outcomes and rejections (error and miss paths only, so a lock is fine).
    private let counters = LabelledCounters()
    private let upstreamLatency: [String: Histogram]
    package let shared = SharedTierMetrics()
    /// The trace exporter's counters, when export is on.
    package let tracing: TraceMetrics?
    /// The service's version (`feedproxy_build_info`).
    private let version: String

    package init(routes: [String], sources: [String], tracing: TraceMetrics? = nil, version: String = "") {
        self.tracing = tracing
        self.version = version
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

    package func recordRequest(route: String, status: Int, seconds: Double) {
        for i in routes.indices where routes[i].pattern == route {
            return routes[i].stats.record(status: status, seconds: seconds)
        }
        unmatched.record(status: status, seconds: seconds)
    }

    package func recordUpstream(source: String, outcome: String, seconds: Double) {
        counters.add("feedproxy_upstream_requests_total", "source=\"\(source)\",outcome=\"\(outcome)\"")
        if outcome != "rate_limited" && outcome != "circuit_open" { upstreamLatency[source]?.observe(seconds) }
    }

    package func recordRejection(source: String, status: Int, reason: String) {
        counters.add("feedproxy_rejected_requests_total", "source=\"\(source)\",status=\"\(status)\",reason=\"\(reason)\"")
    }

    /// The text of `/metrics`: the server's own families (requests, cache lookups, upstream
    /// attempts and rejections), then each subsystem's `parts` (the image proxy's among them),
    /// then the shared tier, traces, the process and the build.
    package func render(_ parts: [any MetricsPart]) -> String {
        var out = ""
        MetricsText.family("feedproxy_http_requests_total", "counter", "HTTP requests answered, by route and status.", into: &out)
        let sorted = routes.sorted { $0.pattern < $1.pattern }
        for (route, stats) in sorted {
            for (status, n) in stats.counts() { out += "feedproxy_http_requests_total{route=\"\(route)\",status=\"\(status)\"} \(n)\n" }
        }
        MetricsText.family("feedproxy_http_request_duration_seconds", "histogram", "Time from request parsed to response queued, by route.", into: &out)
        for (route, stats) in sorted where !stats.counts().isEmpty {
            stats.latency.render("feedproxy_http_request_duration_seconds", labels: "route=\"\(route)\"", into: &out)
        }
        MetricsText.family("feedproxy_cache_requests_total", "counter", "Cache lookups by source and result.", into: &out)
        for (source, stats) in caches.sorted(by: { $0.key < $1.key }) {
            for (result, n) in [("hit", stats.hits.current), ("miss", stats.misses.current), ("stale", stats.stale.current)] {
                out += "feedproxy_cache_requests_total{source=\"\(source)\",result=\"\(result)\"} \(n)\n"
            }
        }
        counters.render("feedproxy_upstream_requests_total", help: "Upstream attempts by source and outcome.", into: &out)
        MetricsText.family("feedproxy_upstream_request_duration_seconds", "histogram", "Upstream attempt duration by source.", into: &out)
        for (source, h) in upstreamLatency.sorted(by: { $0.key < $1.key }) {
            h.render("feedproxy_upstream_request_duration_seconds", labels: "source=\"\(source)\"", into: &out)
        }
        counters.render("feedproxy_rejected_requests_total", help: "429 and 503 answers by source and reason.", into: &out)
        for part in parts { part.render(into: &out) }
        shared.render(into: &out)
        tracing?.render(into: &out)
        ProcessMetrics.read().render(into: &out)
        BuildInfo.render(version: version, into: &out)
        return out
    }

    /// A label value as the Prometheus text format wants it: backslash, double quote and
    /// line feed escaped (a host name comes from configuration or a redirect, not from us).
    package static func labelValue(_ value: String) -> String {
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
