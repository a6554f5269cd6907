import Observability
import Primitives
import TestSupport
import Testing
@testable import Service
@testable import Upstream

/// Trace export reads OpenTelemetry's own variables, as its SDKs do.
@Suite(.offPool) struct TraceExportTests {
    static func settings(_ environment: [String: String]) throws -> SpanExporter.Settings? {
        TraceExport.settings(try ConfigurationParserTests.parse([], environment))
    }

    @Test func offUnlessAnEndpointIsSetAndNothingTurnsItOff() throws {
        #expect(try Self.settings([:]) == nil)
        #expect(try Self.settings(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"])?.url == "http://collector:4318/v1/traces")
        #expect(try Self.settings(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"])?.url == "http://collector:4318/v1/traces")
        let both = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b.example/otlp/traces"]
        #expect(try Self.settings(both)?.url == "https://b.example/otlp/traces", "the signal's own URL is used as it is")
        #expect(try Self.settings(both.merging(["OTEL_SDK_DISABLED": "true"]) { $1 }) == nil)
        #expect(try Self.settings(both.merging(["OTEL_TRACES_EXPORTER": "none"]) { $1 }) == nil)
        #expect(throws: ConfigurationError.self) { try Self.settings(["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]) }
        #expect(throws: ConfigurationError.self) { try Self.settings(["OTEL_TRACES_SAMPLER": "sometimes"]) }
        #expect(throws: ConfigurationError.self) { try Self.settings(["OTEL_TRACES_SAMPLER_ARG": "1.5"]) }
    }

    @Test func headersResourceAndServiceName() throws {
        let s = try #require(
            try Self.settings([
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s%3Dcret, x-team = feeds",
                "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-resource,deployment.environment.name=prod", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                "OTEL_TRACES_SAMPLER_ARG": "0.01", "OTEL_EXPORTER_OTLP_COMPRESSION": "none",
            ]))
        #expect(s.headers.map { "\($0.0)=\($0.1)" } == ["api-key=s=cret", "x-team=feeds"])
        #expect(s.resource.first.map { "\($0.0)=\($0.1)" } == "service.name=string(\"from-resource\")")
        #expect(s.resource.contains { $0.0 == "deployment.environment.name" && $0.1 == .string("prod") })
        #expect(s.sampler == TraceSampler(followsParent: true, ratio: 0.01) && !s.gzip)
        let named = try #require(try Self.settings(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SERVICE_NAME": "feeds-eu"]))
        #expect(named.resource.first.map { "\($0.0)=\($0.1)" } == "service.name=string(\"feeds-eu\")")
        #expect(throws: ConfigurationError.self) { try Self.settings(["OTEL_EXPORTER_OTLP_HEADERS": "novalue"]) }
    }

    /// `url.full` carries no credentials and no secret-looking query values.
    @Test func upstreamURLsAreRedactedOnSpans() {
        #expect(
            UpstreamSpan.redacted("https://user:pw@feeds.example/rss?token=abc&page=2#x")
                == "https://REDACTED:REDACTED@feeds.example/rss?token=REDACTED&page=2#x")
        #expect(UpstreamSpan.redacted("https://itunes.apple.com/search?term=swift&key=") == "https://itunes.apple.com/search?term=swift&key=REDACTED")
        #expect(UpstreamSpan.redacted("http://h/p?Signature=1&sig") == "http://h/p?Signature=REDACTED&sig")
        #expect(UpstreamURL.host("https://user@[::1]:8443/x") == "[::1]" && UpstreamURL.host("http://a.example:80") == "a.example")
    }
}
