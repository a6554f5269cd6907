import Glibc
import Testing
import TestSupport

/// Issue 15: one client cannot spend everyone's upstream budget.
@Suite(.offPool) struct FairBudgetEndToEndTests {
    static func send(_ port: Int, _ target: String, forwardedFor: String, timeout: Double = 8) throws -> RawClient {
        let c = try RawClient(port: port, timeout: timeout)
        try c.send("GET \(target) HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: \(forwardedFor)\r\n\r\n")
        return c
    }

    @Test func aFloodingClientCannotStarveAnHonestOne() async throws {
        try await offPool {
            let h = try Harness(environment: ["RATE_LIMIT_ITUNES_PER_MIN": "20", "TRUSTED_PROXIES": "127.0.0.1/32", "CLIENT_MISS_RATE_PER_MIN": "30"])
            // Client A: 50 distinct searches at once (through the trusted proxy on loopback).
            var flood: [RawClient] = []
            for i in 0..<50 { flood.append(try Self.send(h.port, "/podcasts?term=flood\(i)", forwardedFor: "198.51.100.1")) }
            usleep(100_000)
            // Client B: one honest search, 100 ms later.
            let start = ContinuousClock.now
            let honest = try Self.send(h.port, "/podcasts?term=honest", forwardedFor: "203.0.113.5, 198.51.100.2", timeout: 60).readResponse()
            let waited = (ContinuousClock.now - start) / .seconds(1)
            // Behind the flood it would wait past UPSTREAM_QUEUE_WAIT_MS (3 s) and get a 503: its
            // 200 is the fairness. The bound only catches a server that hangs (a busy machine,
            // or ThreadSanitizer, can stretch a fair turn past seconds).
            #expect(honest.status == 200, "\(honest.text)")
            #expect(waited < 60, "the honest client waited \(waited) s")

            var statuses: [Int: Int] = [:]
            for c in flood {
                let r = try c.readResponse()
                statuses[r.status, default: 0] += 1
                if r.status != 200 {
                    #expect(r.status == 429 || r.status == 503, "\(r.status) \(r.text)")
                    #expect(Int(r.header("Retry-After") ?? "") ?? 0 >= 1)
                    let code = r.status == 429 ? "client_rate_limited" : "upstream_rate_limited"
                    #expect(r.text.contains("\"code\":\"\(code)\""))
                }
            }
            #expect(statuses[200, default: 0] >= 4)  // the upstream's burst was not wasted
            #expect(statuses[429, default: 0] >= 40)  // the client's own quota stopped most of it
            #expect(h.upstream.requestCount(for: "itunes") <= 6)  // the upstream budget held

            let metrics = try h.get("/metrics").text
            #expect(metrics.contains("feedproxy_rejected_requests_total{source=\"itunes\",status=\"429\",reason=\"client_rate_limited\"}"))
            #expect(metrics.contains("feedproxy_upstream_queue_waits_total{source=\"itunes\",result=\"granted\"} "))
            #expect(metrics.contains("feedproxy_upstream_queue_depth{source=\"itunes\"} 0"))
            usleep(100_000)
            let logs = h.proxy.logLines
            #expect(logs.contains { $0.contains("\"path\":\"/podcasts?term=honest\"") && $0.contains("\"client\":\"198.51.100.2\"") })
            #expect(logs.contains { $0.contains("\"status\":429") && $0.contains("\"client\":\"198.51.100.1\"") })
        }
    }

    @Test func aMissRefusedBeforeTheUpstreamCostsTheClientNothing() async throws {
        try await offPool {
            // Two misses at once per client; the iTunes budget allows one, and no waiting for it.
            let h = try Harness(environment: ["CLIENT_MISS_RATE_PER_MIN": "12", "RATE_LIMIT_ITUNES_PER_MIN": "1", "UPSTREAM_QUEUE_WAIT_MS": "0"])
            #expect(try h.get("/podcasts?term=swift").status == 200)
            // Refused by our own rate budget: 503 each time, never 429 (the quota is given back).
            for term in ["history", "daily", "news"] {
                let r = try h.get("/podcasts?term=\(term)")
                #expect(r.status == 503 && r.text.contains("\"code\":\"upstream_rate_limited\""), "\(term): \(r.status) \(r.text)")
            }
        }
    }

    @Test func aSpoofedForwardedForBuysNoFreshQuota() async throws {
        try await offPool {
            let h = try Harness(environment: ["CLIENT_MISS_RATE_PER_MIN": "6"])  // one miss at once per client
            #expect(try h.get("/podcasts?term=swift", headers: ["X-Forwarded-For: 203.0.113.1"]).status == 200)
            let refused = try h.get("/podcasts?term=history", headers: ["X-Forwarded-For: 203.0.113.2"])
            #expect(refused.status == 429)
            #expect(refused.text.contains("\"code\":\"client_rate_limited\""))
            #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1)
            // Hits never count against the quota.
            #expect(try h.get("/podcasts?term=swift").header("X-Cache") == "HIT")
            usleep(100_000)
            #expect(h.proxy.logLines.contains { $0.contains("\"status\":429") && $0.contains("\"client\":\"127.0.0.1\"") })
            #expect(!h.proxy.logLines.contains { $0.contains("203.0.113.") && $0.contains("\"client\"") && !$0.contains("\"client\":\"127.0.0.1\"") })
        }
    }

    @Test func aTrustedProxysForwardedForIsHonoured() async throws {
        try await offPool {
            let h = try Harness(environment: ["CLIENT_MISS_RATE_PER_MIN": "6", "TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1/32"])
            #expect(try h.get("/podcasts?term=swift", headers: ["X-Forwarded-For: 203.0.113.1"]).status == 200)
            #expect(try h.get("/podcasts?term=history", headers: ["X-Forwarded-For: 203.0.113.1"]).status == 429)
            #expect(try h.get("/podcasts?term=daily", headers: ["X-Forwarded-For: 203.0.113.2, 10.1.2.3"]).status == 200)
            // Garbage is not an identity: the trusted peer itself is the client.
            #expect(try h.get("/podcasts?term=garbage", headers: ["X-Forwarded-For: ]]not an address[["]).status == 200)
            #expect(try h.get("/podcasts?term=garbage2", headers: ["X-Forwarded-For: <script>"]).status == 429)
            usleep(100_000)
            #expect(h.proxy.logLines.contains { $0.contains("term=daily") && $0.contains("\"client\":\"203.0.113.2\"") })
        }
    }

    @Test func distinctPeersAreDistinctClients() async throws {
        try await offPool {
            let h = try Harness(environment: ["CLIENT_MISS_RATE_PER_MIN": "6"])
            func get(_ target: String, from source: String) throws -> Int {
                let c = try RawClient(port: h.port, source: source)
                try c.send("GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n")
                return try c.readResponse().status
            }
            #expect(try get("/podcasts?term=swift", from: "127.0.0.2") == 200)
            #expect(try get("/podcasts?term=history", from: "127.0.0.2") == 429)
            #expect(try get("/podcasts?term=daily", from: "127.0.0.3") == 200)
            usleep(100_000)
            #expect(h.proxy.logLines.contains { $0.contains("term=history") && $0.contains("\"client\":\"127.0.0.2\"") })
            #expect(h.proxy.logLines.contains { $0.contains("term=daily") && $0.contains("\"client\":\"127.0.0.3\"") })
        }
    }

    @Test func badTrustedProxiesStopStartup() async throws {
        try await offPool {
            let r = try FeedProxyProcess.run(["--trusted-proxies", "10.0.0.0/8,10.0.0.0/40"])
            #expect(r.status == 2)
            #expect(r.stderr.contains("TRUSTED_PROXIES") && r.stderr.contains("10.0.0.0/40"))
        }
    }
}
