import Glibc
import Testing
import TestSupport

/// Two real replicas sharing a real redis-server and one fixture upstream.
@Suite(.serialized) struct SharedTierEndToEndTests {
    private func get(_ port: Int, _ target: String, from source: String) throws -> RawClient.Response {
        let c = try RawClient(port: port, source: source)
        try c.send("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
        return try c.readResponse()
    }

    @Test func anAnswerFetchedByOneReplicaIsServedByTheOtherAndCostsNoClientQuota() async throws {
        try await offPool {
            let redis = try RedisServerProcess()
            let a = try Harness(environment: ["REDIS_URL": redis.url, "CLIENT_MISS_RATE_PER_MIN": "600"])
            let u = a.upstream
            // Replica B: the same upstream, and a quota of one miss at a time per client.
            let b = try FeedProxyProcess(environment: [
                "REDIS_URL": redis.url, "CLIENT_MISS_RATE_PER_MIN": "6", "FLICKR_FEED_URL": u.flickrURL, "ITUNES_SEARCH_URL": u.itunesSearchURL,
                "ITUNES_LOOKUP_URL": u.itunesLookupURL, "KIVA_GRAPHQL_URL": u.kivaGraphQLURL,
            ])
            defer { _ = b.stop() }
            let terms = ["swift", "history", "music"]
            var etags: [String] = []
            for term in terms {
                let r = try get(a.port, "/podcasts?term=\(term)", from: "127.0.0.2")
                #expect(r.status == 200)
                etags.append(r.header("ETag") ?? "")
            }
            #expect(u.requestCount(for: "itunes") == 3)
            usleep(200_000)  // the fetching replica stores its answers right after replying
            for (term, etag) in zip(terms, etags) {
                let r = try get(b.port, "/podcasts?term=\(term)", from: "127.0.0.3")
                #expect(r.status == 200, "\(term): \(r.text)")
                #expect(r.header("ETag") == etag)  // the same content gives the same validator on every replica
                #expect(r.header("X-Cache") == "HIT")
            }
            #expect(u.requestCount(for: "itunes") == 3)
            var logged = false
            for _ in 0..<50 where !logged {  // access-log lines are written in 100 ms batches
                logged = b.logLines.contains { $0.contains("\"cache\":\"L2_HIT\"") }
                usleep(20_000)
            }
            #expect(logged)
            // A real miss on B still spends the quota: the second one in a row is refused.
            #expect(try get(b.port, "/podcasts?term=new1", from: "127.0.0.3").status == 200)
            #expect(try get(b.port, "/podcasts?term=new2", from: "127.0.0.3").status == 429)
        }
    }
}
