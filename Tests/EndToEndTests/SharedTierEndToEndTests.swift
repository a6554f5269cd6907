import Foundation
import Glibc
import Testing
import TestSupport

/// Two real replicas sharing a real redis-server and one fixture upstream.
@Suite(.serialized, .offPool) struct SharedTierEndToEndTests {
    private func get(_ port: Int, _ target: String, from source: String) throws -> RawClient.Response {
        let c = try RawClient(port: port, source: source)
        try c.send("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
        return try c.readResponse()
    }

    @Test func anAnswerFetchedByOneReplicaIsServedByTheOtherAndCostsNoClientQuota() async throws {
        try await offPool {
            let redis = try RedisServerProcess()
            let a = try Harness(environment: ["REDIS_URL": redis.url, "CLIENT_MISS_RATE_PER_MIN": "600", "REDIS_TIMEOUT_MS": "2000"])
            let u = a.upstream
            // Replica B: the same upstream, and a quota of one miss at a time per client.
            let b = try FeedProxyProcess(
                environment: Harness.upstreamEnvironment(u).merging(["REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "CLIENT_MISS_RATE_PER_MIN": "6"]) {
                    $1
                })
            defer { _ = b.stop() }
            let terms = ["swift", "history", "music"]
            var etags: [String] = []
            for term in terms {
                let r = try get(a.port, "/podcasts?term=\(term)", from: "127.0.0.2")
                #expect(r.status == 200)
                etags.append(r.header("ETag") ?? "")
            }
            #expect(u.requestCount(for: "itunes") == 3)
            // The fetching replica stores its answers in Redis right after replying: wait for
            // its count of them (a fixed sleep was too short on a loaded machine).
            #expect(waitUntil { a.sharedStores >= 3 })
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

    /// Issue 40: a long feed's episode data is larger than L2_MAX_VALUE_BYTES as it is, and is
    /// shared compressed: three replicas, one download of the feed.
    @Test func aLongFeedIsDownloadedOnceForThreeReplicas() async throws {
        try await offPool {
            let redis = try RedisServerProcess()
            // A generous Redis deadline: with the cores busy, a large put can miss the default 25 ms
            // (the replica then carries on alone, as it should); this test is about one download.
            let shared = ["REDIS_URL": redis.url, "L2_MAX_VALUE_BYTES": "262144", "ALLOW_PRIVATE_FEED_HOSTS": "true", "REDIS_TIMEOUT_MS": "2000"]
            let a = try Harness(environment: shared)
            let u = a.upstream
            let others = try (0..<2).map { _ in
                try FeedProxyProcess(
                    environment: shared.merging(Harness.upstreamEnvironment(u)) { $1 }.merging(["CLIENT_MISS_RATE_PER_MIN": "0"]) { $1 })
            }
            defer { for o in others { _ = o.stop() } }
            // The long daily show: 1,200 episodes, about 630 kB of episode JSON (31 kB compressed).
            let first = try get(a.port, "/podcasts/1590001000/episodes?limit=500", from: "127.0.0.2")
            #expect(first.status == 200 && first.body.count > 262_144)
            #expect(waitUntil { a.sharedStores >= 1 })  // the fetching replica stores the data right after replying
            var shared200 = 0
            for replica in others {
                var r = try get(replica.port, "/podcasts/1590001000/episodes?limit=2", from: "127.0.0.3")
                for _ in 0..<50 where r.header("X-Cache") != "L2_HIT" && u.requestCount(for: "rss") == 1 {
                    usleep(50_000)  // the fetching replica stores the data right after replying
                    r = try get(replica.port, "/podcasts/1590001000/episodes?limit=3", from: "127.0.0.3")
                }
                if r.status == 200, (h(r)["page"] as? [String: Any])?["total"] as? Int == 1200 { shared200 += 1 }
            }
            #expect(shared200 == 2)
            #expect(u.requestCount(for: "rss") == 1)
        }
    }

    private func h(_ r: RawClient.Response) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
    }
}
