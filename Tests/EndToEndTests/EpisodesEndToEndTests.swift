import Foundation
import Testing
import TestSupport

@Suite(.serialized, .offPool) struct EpisodesEndToEndTests {
    @Test func episodesFromTheFeedThenCached() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let r = try h.get("/podcasts/1200361736/episodes")
            #expect(r.status == 200)
            let body = h.json(r)
            #expect(body["source"] as? String == "rss")
            #expect(body["title"] as? String == "Swift by Sundell")
            #expect(body["count"] as? Int == 5)
            let first = (body["items"] as? [[String: Any]])?.first ?? [:]
            #expect(first["id"] as? String == "sundell-145")
            #expect(first["duration"] as? Int == 3723)
            #expect(first["audioBytes"] as? Int == 48_213_004)
            #expect(first["published"] as? String == "2025-11-03T14:20:05Z")
            #expect((body["page"] as? [String: Any])?["total"] as? Int == 5)
            // One feed, one fetch: every page size is cut from the same download and parse.
            for limit in [2, 5, 20, 500] {
                let limited = try h.get("/podcasts/1200361736/episodes?limit=\(limit)")
                #expect(h.json(limited)["count"] as? Int == min(limit, 5))
                #expect(limited.header("X-Cache") == "HIT", "limit \(limit): cut from the cached feed")
            }
            #expect(try h.get("/podcasts/1200361736/episodes").header("X-Cache") == "HIT")
            // The podcast itself is the lookup the episodes were found with.
            let podcast = try h.get("/podcasts/1200361736")
            #expect(podcast.status == 200 && podcast.header("X-Cache") == "HIT")
            #expect((h.json(podcast)["item"] as? [String: Any])?["title"] as? String == "Swift by Sundell")
            #expect(h.upstream.requestCount(for: "rss") == 1)
            #expect(h.upstream.requestCount(for: "itunes-lookup") == 1)
            let atom = h.json(try h.get("/podcasts/1526489823/episodes"))
            #expect(atom["title"] as? String == "Swift over Coffee")
        }
    }

    /// A podcast looked up first (`/podcasts/{id}`) names its feed: its episodes cost no
    /// second lookup.
    @Test func thePodcastFirstThenItsEpisodesIsOneLookup() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            #expect(try h.get("/podcasts/1526489823").status == 200)
            let episodes = try h.get("/podcasts/1526489823/episodes")
            #expect(episodes.status == 200 && h.json(episodes)["count"] as? Int == 2)
            #expect(h.upstream.requestCount(for: "itunes-lookup") == 1)
            #expect(h.upstream.requestCount(for: "rss") == 1)
            // In a library too: the known podcast's feed is fetched without a lookup of its own.
            let library = try h.get("/episodes?podcasts=1526489823,1200361736")
            #expect((h.json(library)["podcasts"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String } == ["ok", "ok"])
        }
    }

    /// Every episode reachable page by page: the cursor walk covers the list once, in order,
    /// with `page.total`, `page.next` and `Link: rel="next"` until the last page; `since`
    /// keeps only what is newer; a cursor is checked like any parameter.
    @Test func episodesArePagedWithACursorAndFilteredBySince() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let all = (h.json(try h.get("/podcasts/1200361736/episodes"))["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(all.count == 5)
            var walked: [String] = []
            var target: String? = "/podcasts/1200361736/episodes?limit=2"
            var pages = 0
            while let t = target, pages < 10 {
                let r = try h.get(t)
                #expect(r.status == 200, "\(t): \(r.text)")
                let body = h.json(r)
                walked += (body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                let page = body["page"] as? [String: Any] ?? [:]
                #expect(page["total"] as? Int == 5 && page["size"] as? Int == 2)
                target = page["next"] as? String
                if let next = target {
                    #expect(r.header("Link") == "<\(next)>; rel=\"next\"")
                    #expect(next.contains("cursor=\(page["nextCursor"] as? String ?? "-")"))
                } else {
                    #expect(r.header("Link") == nil)
                }
                pages += 1
            }
            #expect(pages == 3)
            #expect(walked == all)
            #expect(h.upstream.requestCount(for: "rss") == 1)

            // The feed lists Nov 3, Nov 4, Oct 29, Oct 15 and one undated: one is after Nov 3 14:20:05Z,
            // however the time is spelt (an unescaped `+` arrives as a space), and four after 1970.
            for since in ["2025-11-03T14:20:05Z", "2025-11-03T15:20:05%2B01:00", "2025-11-03T15:20:05+01:00", "1762179605"] {
                let r = try h.get("/podcasts/1200361736/episodes?since=\(since)")
                #expect(r.status == 200, "\(since): \(r.text)")
                #expect(h.json(r)["count"] as? Int == 1, "\(since)")
                #expect((h.json(r)["page"] as? [String: Any])?["total"] as? Int == 1)
            }
            #expect(h.json(try h.get("/podcasts/1200361736/episodes?since=0"))["count"] as? Int == 4)
            for bad in ["since=yesterday", "since=", "since=99999999999999", "cursor=abc", "cursor=AAAAAAAAAAAAAAAAAAAAAAA"] {
                let r = try h.get("/podcasts/1200361736/episodes?\(bad)")
                #expect(r.status == 400, "\(bad)")
                #expect((h.json(r)["error"] as? [String: Any])?["code"] as? String == "invalid_parameter")
            }
            // A cursor of one podcast is not one of another's.
            let cursor = try #require((h.json(try h.get("/podcasts/1200361736/episodes?limit=1"))["page"] as? [String: Any])?["nextCursor"] as? String)
            #expect(try h.get("/podcasts/1526489823/episodes?cursor=\(cursor)").status == 400)
        }
    }

    @Test func feedsInEveryEncodingReadRight() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            func firstItem(_ id: String) throws -> [String: Any] {
                let r = try h.get("/podcasts/\(id)/episodes")
                #expect(r.status == 200, "\(id): \(r.text)")
                return (h.json(r)["items"] as? [[String: Any]])?.first ?? [:]
            }
            #expect(try firstItem("1580000001")["title"] as? String == "Episodio 42: La canción de São Paulo")  // ISO-8859-1
            #expect(try firstItem("1580000002")["title"] as? String == "Folge 118: „Der Euro“ – wer zahlt 1.000 € für Brot?")  // Windows-1252
            #expect(try firstItem("1580000003")["title"] as? String == "Episódio 7: Ação e reação em São Paulo 🎙")  // UTF-16
            #expect(try firstItem("1580000004")["summary"] as? String == "Julián Martínez on cartography… — and why “north” wasn’t always up.")
            // No encoding declared: the charset of the recorded Content-Type applies.
            #expect(try firstItem("1580000005")["title"] as? String == "Economia: o preço do café subiu 2 €")
            let broken = try h.get("/podcasts/1580000006/episodes")
            #expect(broken.status == 502)
            #expect(broken.text.contains("\"code\":\"bad_upstream_response\""))
            #expect(broken.text.contains("not valid UTF-8: undecodable bytes at line 4, column 13"))
        }
    }

    @Test func episodeErrors() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let unknown = try h.get("/podcasts/999/episodes")
            #expect(unknown.status == 404)
            #expect(unknown.text.contains("\"code\":\"podcast_not_found\""))
            let noFeed = try h.get("/podcasts/1603012345/episodes")
            #expect(noFeed.status == 404)
            #expect(noFeed.text.contains("\"code\":\"feed_unavailable\""))
            let broken = try h.get("/podcasts/1437212345/episodes")
            #expect(broken.status == 502)
            #expect(broken.text.contains("\"code\":\"bad_upstream_response\""))
            let html = try h.get("/podcasts/1000123456/episodes")
            #expect(html.status == 502)
            #expect(try h.get("/podcasts/abc/episodes").status == 400)
            #expect(try h.get("/podcasts/1200361736/episodes?limit=0").status == 400)
            // A not-found answer is remembered briefly instead of asking iTunes again.
            _ = try h.get("/podcasts/999/episodes")
            #expect(h.upstream.requestCount(for: "itunes-lookup") == 4)
        }
    }

    @Test(arguments: [nil, "http://10.0.0.1/feed.xml", "http://169.254.169.254/latest/meta-data/", "http://[::1]/feed.xml", "http://0.0.0.0/feed.xml"])
    func feedsOnNonPublicAddressesAreRefusedByDefault(_ override: String?) async throws {
        try await offPool {
            let h = try Harness()
            if let override { h.upstream.setFeedURL(override, forPodcast: "1200361736") }
            let r = try h.get("/podcasts/1200361736/episodes")
            #expect(r.status == 502)
            #expect(r.text.contains("\"code\":\"upstream_forbidden_address\""))
            #expect(h.upstream.requestCount(for: "rss") == 0)
        }
    }

    @Test func redirectToLoopbackIsRefusedByDefault() async throws {
        try await offPool {
            let h = try Harness()
            // The feed URL names loopback only after a redirect; the address check still applies.
            h.upstream.setFeedURL(h.upstream.baseURL + "/redirect?to=http://127.0.0.1:1/feed.xml", forPodcast: "1200361736")
            let r = try h.get("/podcasts/1200361736/episodes")
            #expect(r.status == 502)
            #expect(r.text.contains("\"code\":\"upstream_forbidden_address\""))
        }
    }
}
