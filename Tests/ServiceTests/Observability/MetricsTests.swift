import Observability
import TestSupport
import Testing
import Upstream
@testable import Service

@Suite(.offPool) struct MetricsTests {
    static func render(breakers: [(host: String, state: Int)] = []) -> String {
        let m = Metrics(routes: RouteDeclaration.all.map(\.name.path), sources: ["flickr"])
        m.recordRequest(route: "/photos", status: 200, seconds: 0.002)
        m.recordRequest(route: "/photos", status: 404, seconds: 0.001)
        m.recordRequest(route: "/nowhere", status: 404, seconds: 0.001)
        m.recordUpstream(source: "flickr", outcome: "ok", seconds: 0.05)
        return m.render([ConnectionGauges(open: 3), CacheGauges(bytes: 10, entries: 1), UpstreamGauges(breakers: breakers), LifecycleGauges()])
    }

    @Test func requestsAreCountedByRouteAndStatusWithUnknownRoutesFolded() {
        let text = Self.render()
        #expect(text.contains(#"feedproxy_http_requests_total{route="/photos",status="200"} 1"#))
        #expect(text.contains(#"feedproxy_http_requests_total{route="/photos",status="404"} 1"#))
        #expect(text.contains(#"feedproxy_http_requests_total{route="(unmatched)",status="404"} 1"#))
        #expect(text.contains(#"feedproxy_http_request_duration_seconds_count{route="/photos"} 2"#))
        #expect(text.contains(#"feedproxy_upstream_requests_total{source="flickr",outcome="ok"} 1"#))
        #expect(text.contains("feedproxy_open_connections 3\n"))
    }

    @Test func everyFamilyHasHelpAndTypeOnce() {
        let text = Self.render(breakers: [(host: "api.flickr.com", state: 2)])
        let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(Set(types).count == types.count, "a family is declared twice")
        for name in types { #expect(text.contains("# HELP \(name) ")) }
        #expect(text.contains(#"feedproxy_circuit_breaker_state{host="api.flickr.com"} 2"#))
    }

    /// Prometheus text format: `\`, `"` and line feed escaped in label values (issue 19).
    @Test func labelValuesAreEscaped() {
        #expect(Metrics.labelValue("api.flickr.com") == "api.flickr.com")
        #expect(Metrics.labelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd")
        #expect(Self.render(breakers: [(host: "evil\"}\n", state: 0)]).contains(#"feedproxy_circuit_breaker_state{host="evil\"}\n"} 0"#))
    }
}
