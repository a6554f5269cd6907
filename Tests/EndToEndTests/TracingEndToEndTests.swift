import Foundation
import Testing
import TestSupport

/// Spans as an SRE sees them in a real collector: the request's server span continuing the
/// caller's trace, and under it the cache, the upstream calls (client spans, libcurl's
/// times) and the parse; a background refresh as its own trace linked to its request; and a
/// collector that fails, pauses or dies costing spans, never answers.
@Suite(.serialized, .offPool) struct TracingEndToEndTests {
    static let caller = "0af7651916cd43dd8448eb211c80319c"
    static let callerSpan = "b7ad6b7169203331"

    static func environment(_ receiver: OTLPReceiverProcess, _ extra: [String: String] = [:]) -> [String: String] {
        ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_SERVICE_NAME": "feedproxy-test"].merging(extra) { $1 }
    }

    static func attributes(_ span: [String: Any]) -> [String: Any] { span["attributes"] as? [String: Any] ?? [:] }

    @Test func aRequestIsATreeOfSpansInTheCallersTrace() async throws {
        let receiver = try await offPool { try OTLPReceiverProcess() }
        let h = try await offPool { try Harness(environment: Self.environment(receiver)) }
        let status = try await offPool { try h.get("/podcasts?term=swift", headers: ["traceparent: 00-\(Self.caller)-\(Self.callerSpan)-01"]).status }
        #expect(status == 200)
        #expect(await eventually { receiver.spans.contains { Self.attributes($0)["http.route"] as? String == "/podcasts" } })
        let spans = receiver.spans.filter { $0["traceId"] as? String == Self.caller }
        let server = try #require(spans.first { $0["kind"] as? Int == 2 })
        #expect(server["parentSpanId"] as? String == Self.callerSpan && server["name"] as? String == "GET /podcasts")
        let a = Self.attributes(server)
        #expect(a["http.request.method"] as? String == "GET" && a["http.response.status_code"] as? Int == 200)
        #expect(a["url.path"] as? String == "/podcasts" && a["client.address"] as? String == "127.0.0.1" && a["feedproxy.cache"] as? String == "MISS")
        #expect((server["resource"] as? [String: Any])?["service.name"] as? String == "feedproxy-test")
        // Every other span hangs, through its parents, under the server span.
        let byID = Dictionary(spans.map { ($0["spanId"] as? String ?? "", $0) }) { a, _ in a }
        func underServer(_ span: [String: Any]) -> Bool {
            var current = span
            for _ in 0..<10 {
                guard let parent = current["parentSpanId"] as? String else { return false }
                if parent == server["spanId"] as? String { return true }
                guard let next = byID[parent] else { return false }
                current = next
            }
            return false
        }
        let names = Set(spans.compactMap { $0["name"] as? String })
        #expect(names.isSuperset(of: ["GET /podcasts", "cache fetch", "cache fill", "GET", "parse"]), "\(names)")
        #expect(spans.filter { $0["kind"] as? Int != 2 }.allSatisfy(underServer))
        let client = try #require(spans.first { $0["kind"] as? Int == 3 })
        let c = Self.attributes(client)
        #expect((c["url.full"] as? String)?.contains("/search?term=swift") == true && c["http.response.status_code"] as? Int == 200)
        #expect(c["server.address"] as? String == "127.0.0.1" && c["feedproxy.upstream"] as? String == "itunes")
        #expect(Self.attributes(spans.first { $0["name"] as? String == "cache fetch" } ?? [:])["feedproxy.cache.outcome"] as? String == "miss")
        // Exported as the collector expects it: gzip, protobuf.
        let headers = receiver.received()["headers"] as? [[String: String]] ?? []
        #expect(headers.first?["content-encoding"] == "gzip" && headers.first?["content-type"] == "application/x-protobuf")
        // A hit is one server span; a caller that does not sample is followed (nothing recorded).
        _ = try await offPool { try h.get("/podcasts?term=swift", headers: ["traceparent: 00-\(Self.caller)-\(Self.callerSpan)-01"]).status }
        _ = try await offPool { try h.get("/podcasts?term=swift", headers: ["traceparent: 00-1af7651916cd43dd8448eb211c80319c-\(Self.callerSpan)-00"]).status }
        _ = try await offPool { try h.get("/healthz").status }
        #expect(await eventually { receiver.spans.contains { Self.attributes($0)["http.route"] as? String == "/healthz" } })
        let hits = receiver.spans.filter { Self.attributes($0)["feedproxy.cache"] as? String == "HIT" }
        #expect(hits.count == 1 && hits.first?["traceId"] as? String == Self.caller)
        #expect(!receiver.spans.contains { $0["traceId"] as? String == "1af7651916cd43dd8448eb211c80319c" })
    }

    /// A stream's own work (the loads of podcasts this replica had not read) records under
    /// its request's span, as deferred work does; the stream's server span is recorded when the
    /// stream closes.
    @Test func aStreamsLoadsAreSpansUnderItsRequest() async throws {
        let receiver = try await offPool { try OTLPReceiverProcess() }
        let h = try await offPool { try Harness(environment: Self.environment(receiver, ["ALLOW_PRIVATE_FEED_HOSTS": "true"])) }
        let trace = "2af7651916cd43dd8448eb211c80319c"
        try await offPool {
            let stream = try LibraryEventsEndToEndTests.EventStream(
                h, "podcasts=1590000011&limit=5", headers: ["traceparent: 00-\(trace)-\(Self.callerSpan)-01"])
            #expect(stream.head.status == 200)
            #expect(!LibraryEventsEndToEndTests.items(try stream.episodes().json).isEmpty)
            stream.client.close()
        }
        #expect(await eventually { receiver.spans.contains { $0["traceId"] as? String == trace && $0["kind"] as? Int == 2 } })
        let spans = receiver.spans.filter { $0["traceId"] as? String == trace }
        let server = try #require(spans.first { $0["kind"] as? Int == 2 })
        #expect(server["name"] as? String == "GET /episodes/events" && server["parentSpanId"] as? String == Self.callerSpan)
        let fetches = spans.filter { $0["name"] as? String == "cache fetch" }
        #expect(!fetches.isEmpty, "the stream's load is a span of its trace: \(spans.compactMap { $0["name"] as? String })")
        #expect(fetches.allSatisfy { $0["parentSpanId"] as? String == server["spanId"] as? String })
    }

    @Test func aBackgroundRefreshIsItsOwnTraceLinkedToItsRequest() async throws {
        let receiver = try await offPool { try OTLPReceiverProcess() }
        let h = try await offPool { try Harness(environment: Self.environment(receiver, ["CACHE_TTL_PODCASTS": "1"])) }
        _ = try await offPool { try h.get("/podcasts?term=swift").status }
        try await Task.sleep(for: .seconds(1.5))
        let stale = try await offPool { try h.get("/podcasts?term=swift", headers: ["traceparent: 00-\(Self.caller)-\(Self.callerSpan)-01"]).header("X-Cache") }
        #expect(stale == "STALE")
        #expect(await eventually { receiver.spans.contains { $0["name"] as? String == "cache refresh" } })
        let server = try #require(receiver.spans.first { $0["traceId"] as? String == Self.caller && $0["kind"] as? Int == 2 })
        let refresh = try #require(receiver.spans.first { $0["name"] as? String == "cache refresh" })
        #expect(refresh["traceId"] as? String != Self.caller && (refresh["parentSpanId"] as? String ?? "").isEmpty)
        let link = (refresh["links"] as? [[String: Any]])?.first
        #expect(link?["traceId"] as? String == Self.caller && link?["spanId"] as? String == server["spanId"] as? String)
        // Its upstream call is in its own trace.
        #expect(
            await eventually {
                receiver.spans.contains { $0["traceId"] as? String == refresh["traceId"] as? String && $0["kind"] as? Int == 3 }
            })
    }

    /// A collector answering 503 is retried after its Retry-After; one paused or killed while
    /// requests go on costs dropped spans (counted), never an answer.
    @Test func aFailingPausedOrDeadCollectorCostsSpansNotAnswers() async throws {
        let receiver = try await offPool { try OTLPReceiverProcess() }
        let h = try await offPool {
            try Harness(
                environment: Self.environment(
                    receiver, ["OTEL_BSP_MAX_QUEUE_SIZE": "64", "OTEL_BSP_EXPORT_TIMEOUT": "3000", "OTEL_EXPORTER_OTLP_TIMEOUT": "1000"]))
        }
        func metric(_ outcome: String, _ family: String = "feedproxy_trace_spans_total") throws -> Int {
            let text = String(decoding: try h.get("/metrics").body, as: UTF8.self)
            let line = text.split(separator: "\n").first { $0.hasPrefix("\(family){outcome=\"\(outcome)\"}") }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
        }
        try receiver.control("fail?status=503&retry_after=1&count=1")
        #expect(try await offPool { try h.get("/healthz").status } == 200)
        #expect(await eventually { receiver.spans.count >= 1 })
        #expect(try await offPool { try metric("retried", "feedproxy_trace_exports_total") } >= 1)
        #expect((receiver.received()["requests"] as? Int ?? 0) >= 2)

        receiver.pause()
        let statuses = try await offPool { try (0..<300).map { _ in try h.get("/healthz").status } }
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(await eventually { (try? metric("dropped_queue_full")) ?? 0 > 0 })
        receiver.resume()
        #expect(await eventually(30) { receiver.spans.count > 1 })

        receiver.stop()
        let afterDeath = try await offPool { try (0..<100).map { _ in try h.get("/healthz").status } }
        #expect(afterDeath.allSatisfy { $0 == 200 })
        #expect(await eventually(30) { (try? metric("dropped_export_failed")) ?? 0 > 0 })
    }
}

extension TracingEndToEndTests {
    /// With the shared tier, each Redis round trip is a client span (`db.system.name` redis)
    /// under the request that waited for it.
    @Test func redisRoundTripsAreClientSpansUnderTheRequest() async throws {
        let receiver = try await offPool { try OTLPReceiverProcess() }
        let redis = try await offPool { try RedisServerProcess() }
        let h = try await offPool { try Harness(environment: Self.environment(receiver, ["REDIS_URL": redis.url])) }
        let status = try await offPool { try h.get("/photos", headers: ["traceparent: 00-\(Self.caller)-\(Self.callerSpan)-01"]).status }
        #expect(status == 200)
        // Spans reach the receiver in batches: wait until every Redis span's parent has come too.
        func trace() -> (all: [[String: Any]], redis: [[String: Any]]) {
            let all = receiver.spans.filter { $0["traceId"] as? String == Self.caller }
            return (all, all.filter { Self.attributes($0)["db.system.name"] as? String == "redis" })
        }
        #expect(
            await eventually {
                let (all, redis) = trace()
                let ids = Set(all.compactMap { $0["spanId"] as? String })
                return !redis.isEmpty && all.contains { $0["kind"] as? Int == 2 } && redis.allSatisfy { ids.contains($0["parentSpanId"] as? String ?? "") }
            }, "each Redis span under a span of the request")
        #expect(trace().redis.allSatisfy { $0["kind"] as? Int == 3 && Self.attributes($0)["db.operation.name"] is String })
    }
}

extension TracingEndToEndTests {
    /// Two people asking for the same thing at once: one fetch, and each trace says which
    /// request fetched and which joined it.
    @Test func aRequestThatJoinsAnotherOnesFetchSaysSo() async throws {
        let receiver = try await offPool { try OTLPReceiverProcess() }
        let h = try await offPool { try Harness(environment: Self.environment(receiver)) }
        h.upstream.setMode(.slow)
        let first = "2af7651916cd43dd8448eb211c80319c", second = "3af7651916cd43dd8448eb211c80319c"
        async let a = offPool { try h.get("/photos", headers: ["traceparent: 00-\(first)-\(Self.callerSpan)-01"]).status }
        try await Task.sleep(for: .milliseconds(300))
        async let b = offPool { try h.get("/photos", headers: ["traceparent: 00-\(second)-\(Self.callerSpan)-01"]).status }
        #expect(try await [a, b] == [200, 200])
        #expect(h.upstream.requestCount(for: "flickr") == 1)
        func outcome(_ trace: String) -> String? {
            receiver.spans.first { $0["traceId"] as? String == trace && $0["name"] as? String == "cache fetch" }
                .flatMap { Self.attributes($0)["feedproxy.cache.outcome"] as? String }
        }
        #expect(await eventually { outcome(first) != nil && outcome(second) != nil })
        #expect(Set([outcome(first), outcome(second)]) == ["miss", "coalesced"])
    }
}
