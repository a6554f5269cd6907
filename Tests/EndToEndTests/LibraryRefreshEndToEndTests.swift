import Foundation
import Testing
import Primitives
import TestSupport

/// Issue 40: a podcast app's library refreshed in one request (`GET /episodes?podcasts=…`).
@Suite(.serialized, .offPool) struct LibraryRefreshEndToEndTests {
    static let library = "1200361736,1526489823,1603012345,999,1580000001"

    static func items(_ h: Harness, _ r: RawClient.Response) -> [[String: Any]] { h.json(r)["items"] as? [[String: Any]] ?? [] }

    @Test func aLibraryIsOneRequestOneLookupAndOneDownloadPerFeed() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let r = try h.get("/episodes?podcasts=\(Self.library),1200361736&limit=100")
            #expect(r.status == 200, "\(r.text)")
            let body = h.json(r)
            let podcasts = body["podcasts"] as? [[String: Any]] ?? []
            // One entry per id asked, in that order (the repeat ignored), each with its status.
            #expect(podcasts.compactMap { $0["id"] as? Int } == [1_200_361_736, 1_526_489_823, 1_603_012_345, 999, 1_580_000_001])
            #expect(podcasts.compactMap { $0["status"] as? String } == ["ok", "ok", "error", "error", "ok"])
            #expect((podcasts[2]["error"] as? [String: Any])?["code"] as? String == "feed_unavailable")
            #expect((podcasts[3]["error"] as? [String: Any])?["code"] as? String == "podcast_not_found")
            #expect(podcasts[0]["title"] as? String == "Swift by Sundell" && podcasts[0]["episodeCount"] as? Int == 5)
            // Newest first across podcasts, undated last, each episode with its podcast.
            let items = Self.items(h, r)
            #expect(items.count == 9 && (body["page"] as? [String: Any])?["total"] as? Int == 9)
            let dates = items.map { $0["published"] as? String ?? "0000" }  // undated sorts last
            #expect(dates == dates.sorted(by: >), "\(dates)")
            #expect(items.allSatisfy { $0["podcastId"] is Int })
            #expect(items.last?["published"] is NSNull)
            // One iTunes lookup for every id, one download per feed that has one.
            #expect(h.upstream.requestCount(for: "itunes-lookup") == 1)
            #expect(h.upstream.requestCount(for: "rss") == 3)

            // Nothing new: the same answer from the cache, and a 304 with its ETag.
            let again = try h.get("/episodes?podcasts=\(Self.library)&limit=100")
            #expect(again.header("X-Cache") == "HIT")
            let etag = try #require(again.header("ETag"))
            let unchanged = try h.get("/episodes?podcasts=\(Self.library)&limit=100", headers: ["If-None-Match: \(etag)"])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty)
            // The single route is cut from the same data: no further download.
            #expect(try h.get("/podcasts/1526489823/episodes").header("X-Cache") == "HIT")
            // So is each podcast: the batch's one lookup answered /podcasts/{id} too.
            #expect(try h.get("/podcasts/1580000001").header("X-Cache") == "HIT")
            #expect(h.upstream.requestCount(for: "rss") == 3)
            #expect(h.upstream.requestCount(for: "itunes-lookup") == 1)
        }
    }

    @Test func onlyWhatIsNewAndEveryEpisodeByPage() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let all = Self.items(h, try h.get("/episodes?podcasts=\(Self.library)")).compactMap { $0["id"] as? String }
            var walked: [String] = []
            var target: String? = "/episodes?podcasts=\(Self.library)&limit=4"
            var pages = 0
            while let t = target, pages < 10 {
                let r = try h.get(t)
                #expect(r.status == 200, "\(t): \(r.text)")
                walked += Self.items(h, r).compactMap { $0["id"] as? String }
                target = (h.json(r)["page"] as? [String: Any])?["next"] as? String
                #expect(target == nil ? r.header("Link") == nil : r.header("Link") == "<\(target ?? "")>; rel=\"next\"")
                pages += 1
            }
            #expect(pages == 3 && walked == all)
            // Since the newest date of the library: nothing; since Nov 3 08:00Z: only what is later.
            #expect(Self.items(h, try h.get("/episodes?podcasts=\(Self.library)&since=2025-11-04T08:00:00Z")).isEmpty)
            let newer = Self.items(h, try h.get("/episodes?podcasts=\(Self.library)&since=2025-11-03T08:00:00Z"))
            #expect(newer.compactMap { $0["published"] as? String } == ["2025-11-04T08:00:00Z", "2025-11-03T14:20:05Z"])
        }
    }

    @Test(arguments: [
        ("/episodes", "missing_parameter"), ("/episodes?podcasts=", "missing_parameter"), ("/episodes?podcasts=12,abc", "'abc'"),
        ("/episodes?podcasts=12,-3", "'-3'"), ("/episodes?podcasts=12&limit=0", "limit"), ("/episodes?podcasts=12&since=soon", "since"),
        ("/episodes?podcasts=12&cursor=AQAAAAMj3j4rWJxmDMB8Y-M", "cursor"),
        ("/episodes?podcasts=" + (1...501).map(String.init).joined(separator: ","), "at most 500"),
    ])
    func badBatchesAre400NamingWhatIsWrong(_ target: String, _ named: String) async throws {
        try await offPool {
            let h = try Harness()
            let r = try h.get(target)
            #expect(r.status == 400, "\(target): \(r.text)")
            #expect(r.text.contains(named), "\(r.text)")
        }
    }

    /// Feeds not ready by the deadline are pending (with Retry-After); their fetches go on,
    /// and the next refresh finds them without downloading again.
    @Test func slowFeedsArePendingAndTheirFetchesGoOn() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "EPISODES_BATCH_DEADLINE_S": "0.5", "UPSTREAM_TIMEOUT_MS": "30000"])
            h.upstream.setMode(.slow)  // every upstream answer takes 3 s
            let r = try h.get("/episodes?podcasts=1200361736,1526489823")
            #expect(r.status == 200)
            let statuses = (h.json(r)["podcasts"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
            #expect(statuses == ["pending", "pending"])
            #expect(r.header("Retry-After") != nil)
            var ready = false
            for _ in 0..<300 where !ready {
                usleep(100_000)
                ready = h.upstream.requestCount(for: "rss") == 2 && (try? h.get("/episodes?podcasts=1200361736,1526489823"))?.header("X-Cache") == "HIT"
            }
            #expect(ready)
            // The pending answer's ETag does not stand for the loaded one.
            let done = try h.get("/episodes?podcasts=1200361736,1526489823", headers: ["If-None-Match: \(r.header("ETag") ?? "-")"])
            #expect(done.status == 200)
            #expect((h.json(done)["podcasts"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String } == ["ok", "ok"])
            #expect(done.header("Retry-After") == nil)
            #expect(h.upstream.requestCount(for: "rss") == 2)
        }
    }

    /// A library refresh costs its client in proportion to the feeds it has fetched: a whole
    /// library of 500 cold podcasts fits a full allowance; a flood of batches from one
    /// address after it is throttled (client_rate_limited, Retry-After).
    @Test func aBatchCostsItsClientInProportionToTheFeedsItFetches() async throws {
        try await offPool {
            // 0.01 a minute (the least the setting takes): an allowance of one (500 feeds), refilled
            // by a feed every 12 s, so a slow machine (TSan) between the library and the flood
            // refills one feed at most. (At 0.06, a feed every 2 s, a TSan run refilled two.)
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "CLIENT_MISS_RATE_PER_MIN": "0.01", "EPISODES_BATCH_DEADLINE_S": "60"])
            let library = "/episodes?podcasts=" + (1_590_000_001...1_590_000_500).map(String.init).joined(separator: ",") + "&limit=1"
            let first = try h.get(library)
            let statuses = (h.json(first)["podcasts"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
            #expect(statuses.count == 500 && statuses.allSatisfy { $0 == "ok" }, "\(first.text.prefix(2000))")
            #expect(h.upstream.requestCount(for: "rss") == 500)
            let flood = try h.get("/episodes?podcasts=1200361736,1526489823,1580000001,1580000002,1580000009")
            let refused = (h.json(flood)["podcasts"] as? [[String: Any]] ?? []).filter {
                ($0["error"] as? [String: Any])?["code"] as? String == "client_rate_limited"
            }
            #expect(refused.count >= 4, "\(flood.text)")
            #expect(flood.header("Retry-After") != nil)
            // What is cached costs nothing: the library answers in full.
            #expect(try h.get(library).header("X-Cache") == "HIT")
        }
    }

    /// Issue 55: an app following docs/API.md's recipe (keep syncToken, send it as sync) never
    /// misses an episode, whatever order the feeds are refreshed in; `since` would.
    @Test func anAppFollowingTheRecipeNeverMissesAnEpisode() async throws {
        try await offPool {
            // Every feed expires after a second and is refreshed by the next request that needs it.
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "CACHE_TTL_EPISODES": "1", "CACHE_SWR_FACTOR": "0"])
            let (a, b) = (1_590_000_001, 1_590_000_002)
            let library = "/episodes?podcasts=\(a),\(b),1590000003"
            func ids(_ r: RawClient.Response) -> [String] { Self.items(h, r).compactMap { $0["id"] as? String } }
            let first = try h.get(library)
            #expect(first.status == 200 && ids(first).count == 36)
            var token = try #require(h.json(first)["syncToken"] as? String)
            let newestSeen = try #require(Self.items(h, first).first?["published"] as? String)
            // B publishes an episode an hour after the library's newest; only B's feed is read again.
            let base = try #require(Timestamp.parseISO8601(newestSeen))
            h.upstream.publish(podcast: b, at: base + 3600)
            usleep(1_100_000)
            #expect(try h.get("/podcasts/\(b)/episodes?limit=1").status == 200)
            var answer = try h.get(library + "&sync=\(token)")
            #expect(ids(answer) == ["lib-\(b)-13"], "\(answer.text)")
            token = try #require(h.json(answer)["syncToken"] as? String)
            // A publishes one dated before B's; its feed is read later.
            h.upstream.publish(podcast: a, at: base + 1800)
            usleep(1_100_000)
            answer = try h.get(library + "&sync=\(token)")
            #expect(ids(answer) == ["lib-\(a)-13"], "\(answer.text)")
            let since = try h.get(library + "&since=\(base + 3600)")
            #expect(ids(since).isEmpty)  // what the `since` recipe would have been sent: A's episode lost
            // Nothing new: asked with the last token and the ETag of the answer that gave it, a 304.
            token = try #require(h.json(answer)["syncToken"] as? String)
            let etag = try #require(answer.header("ETag"))
            let unchanged = try h.get(library + "&sync=\(token)", headers: ["If-None-Match: \(etag)"])
            #expect(unchanged.status == 304, "\(unchanged.text)")
            // Without the ETag: a 200 with nothing in it, the same token.
            let empty = try h.get(library + "&sync=\(token)")
            #expect(ids(empty).isEmpty && h.json(empty)["syncToken"] as? String == token)
            // The podcast route keeps its own token the same way.
            let single = try h.get("/podcasts/\(a)/episodes?limit=5")
            let singleToken = try #require(h.json(single)["syncToken"] as? String)
            h.upstream.publish(podcast: a, at: base + 7200)
            usleep(1_100_000)
            let changed = try h.get("/podcasts/\(a)/episodes?limit=5&sync=\(singleToken)")
            #expect(ids(changed) == ["lib-\(a)-14"], "\(changed.text)")
            let moved = try #require(h.json(changed)["syncToken"] as? String)
            let same = try h.get("/podcasts/\(a)/episodes?limit=5&sync=\(moved)", headers: ["If-None-Match: \(changed.header("ETag") ?? "-")"])
            #expect(same.status == 304, "\(same.text)")
            // A mangled token is a 400; sync with since is a 400.
            #expect(try h.get(library + "&sync=AAAAAAAAAA").status == 400)
            #expect(try h.get(library + "&sync=\(token)&since=100").status == 400)
        }
    }

    /// Issue 55: podcasts looked up meanwhile share lookups: two batches and single podcasts
    /// asked at once make one iTunes lookup, not one per request.
    @Test func lookupsAskedMeanwhileGoOutTogether() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let targets =
                ["/episodes?podcasts=1590000001,1590000002,1590000003", "/episodes?podcasts=1590000003,1590000004"]
                + (1_590_000_005...1_590_000_008).map { "/podcasts/\($0)/episodes?limit=1" } + ["/podcasts/1590000009"]
            let statuses = Locked<[Int]>([])
            let group = DispatchGroup()
            for target in targets {
                group.enter()
                Thread.detachNewThread {
                    let status = (try? h.get(target).status) ?? 0
                    statuses.withLock { $0.append(status) }
                    group.leave()
                }
            }
            group.wait()
            #expect(statuses.withLock { $0 }.allSatisfy { $0 == 200 }, "\(statuses.withLock { $0 })")
            // Nine podcasts, seven requests at once: the ids went out together (a request after the
            // 25 ms of quiet would be a second lookup: a busy machine may make it two).
            #expect((1...2).contains(h.upstream.requestCount(for: "itunes-lookup")), "\(h.upstream.requestCount(for: "itunes-lookup"))")
            #expect(h.upstream.requestCount(for: "rss") == 8)
        }
    }
}
