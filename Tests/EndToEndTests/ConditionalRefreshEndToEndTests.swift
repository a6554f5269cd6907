import Foundation
import Glibc
import Testing
import TestSupport

/// Polite to publishers: every refresh of a feed is conditional on the validators it sent,
/// a 304 renews the entry without a download, and a feed that moved for good is asked at
/// its new address. (The fixture's feeds send ETag and Last-Modified and answer 304.)
@Suite(.serialized, .offPool) struct ConditionalRefreshEndToEndTests {
    static let episodes = "/podcasts/1200361736/episodes"

    static func metric(_ text: String, _ prefix: String) -> Int {
        text.split(separator: "\n").first { $0.hasPrefix(prefix + " ") }.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }

    @Test func sixLoadsOfAnUnchangedFeedDownloadItOnce() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let first = try h.get(Self.episodes)
            #expect(first.status == 200)
            let full = h.upstream.bodyBytes(for: "rss")
            #expect(full > 0)
            for _ in 0..<5 {
                // A client's no-cache revalidation: the refresh goes upstream, conditionally.
                let again = try h.get(Self.episodes, headers: ["Cache-Control: no-cache"])
                #expect(again.status == 200)
                #expect(again.header("ETag") == first.header("ETag"))
                #expect(again.body == first.body)
                #expect(again.header("Age") == "0")
            }
            #expect(h.upstream.requestCount(for: "rss") == 6)
            #expect(h.upstream.notModifiedCount == 5)
            #expect(h.upstream.bodyBytes(for: "rss") == full, "six loads cost \(h.upstream.bodyBytes(for: "rss")) bytes, one full fetch \(full)")
            let metrics = try h.get("/metrics").text
            #expect(Self.metric(metrics, #"feedproxy_upstream_requests_total{source="episodes",outcome="not_modified"}"#) == 5, "\(metrics)")
        }
    }

    @Test func anExpiredEntryIsRefreshedConditionallyToo() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "CACHE_TTL_EPISODES": "1"])
            #expect(try h.get(Self.episodes).status == 200)
            usleep(1_200_000)
            _ = try h.get(Self.episodes)  // stale: served at once, refreshed in the background
            var renewed = false
            for _ in 0..<100 where !renewed {
                renewed = h.upstream.notModifiedCount == 1
                usleep(20_000)
            }
            #expect(renewed)
            #expect(try h.get(Self.episodes).header("X-Cache") == "HIT")
        }
    }

    @Test func aFeedThatMovedForGoodIsAskedAtItsNewAddress() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            h.upstream.setFeedURL(h.upstream.baseURL + "/moved/1200361736.xml", forPodcast: "1200361736")
            for i in 0..<3 {
                let r = try h.get(Self.episodes, headers: i == 0 ? [] : ["Cache-Control: no-cache"])
                #expect(r.status == 200, "\(r.text)")
            }
            #expect(h.upstream.requestCount(for: "rss-moved") == 1)
            #expect(h.upstream.requestCount(for: "rss") == 3)
            #expect(h.upstream.notModifiedCount == 2)
        }
    }

    @Test func aReplicaRefreshingAnotherReplicasSharedEntrySendsItsValidator() async throws {
        try await offPool {
            let redis = try RedisServerProcess()
            let a = try Harness(environment: [
                "REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "CACHE_TTL_EPISODES": "1", "ALLOW_PRIVATE_FEED_HOSTS": "true",
            ])
            let u = a.upstream
            #expect(try a.get(Self.episodes).status == 200)
            #expect(waitUntil { a.sharedStores >= 1 })  // stored in Redis right after the answer
            usleep(1_500_000)  // then stale there
            let b = try FeedProxyProcess(
                environment: Harness.upstreamEnvironment(u).merging([
                    "REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "CACHE_TTL_EPISODES": "1", "CLIENT_MISS_RATE_PER_MIN": "0",
                    "ALLOW_PRIVATE_FEED_HOSTS": "true",
                ]) { $1 })
            defer { _ = b.stop() }
            let c = try RawClient(port: b.port)
            try c.send("GET \(Self.episodes) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try c.readResponse().status == 200)
            var renewed = false
            for _ in 0..<150 where !renewed {
                renewed = u.notModifiedCount == 1
                usleep(20_000)
            }
            #expect(renewed, "replica B's refresh of A's entry was not conditional (rss requests \(u.requestCount(for: "rss")))")
            #expect(u.requestCount(for: "rss") == 2)
        }
    }

    /// A client's no-cache on a replica that has no copy of its own: the refresh is
    /// conditional on the shared tier's entry all the same.
    @Test func aNoCacheRevalidationOnAColdReplicaUsesTheSharedEntrysValidator() async throws {
        try await offPool {
            let redis = try RedisServerProcess()
            let a = try Harness(environment: ["REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let u = a.upstream
            #expect(try a.get(Self.episodes).status == 200)
            #expect(waitUntil { a.sharedStores >= 1 })  // stored in Redis right after the answer
            let b = try FeedProxyProcess(
                environment: Harness.upstreamEnvironment(u).merging([
                    "REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "CLIENT_MISS_RATE_PER_MIN": "0", "ALLOW_PRIVATE_FEED_HOSTS": "true",
                ]) { $1 })
            defer { _ = b.stop() }
            let c = try RawClient(port: b.port)
            try c.send("GET \(Self.episodes) HTTP/1.1\r\nHost: x\r\nCache-Control: no-cache\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 200)
            #expect(u.requestCount(for: "rss") == 2)
            #expect(u.notModifiedCount == 1, "replica B's no-cache refresh was not conditional on A's shared entry")
        }
    }
}
