import Foundation
import Testing
import TestSupport

@Suite(.serialized) struct EpisodesEndToEndTests {
    @Test func episodesFromTheFeedThenCached() throws {
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
        let limited = try h.get("/podcasts/1200361736/episodes?limit=2")
        #expect(h.json(limited)["count"] as? Int == 2)
        #expect(try h.get("/podcasts/1200361736/episodes").header("X-Cache") == "HIT")
        #expect(h.upstream.requestCount(for: "rss") == 2)
        let atom = h.json(try h.get("/podcasts/1526489823/episodes"))
        #expect(atom["title"] as? String == "Swift over Coffee")
    }

    @Test func episodeErrors() throws {
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

    @Test(arguments: [nil, "http://10.0.0.1/feed.xml", "http://169.254.169.254/latest/meta-data/", "http://[::1]/feed.xml", "http://0.0.0.0/feed.xml"])
    func feedsOnNonPublicAddressesAreRefusedByDefault(_ override: String?) throws {
        let h = try Harness()
        if let override { h.upstream.setFeedURL(override, forPodcast: "1200361736") }
        let r = try h.get("/podcasts/1200361736/episodes")
        #expect(r.status == 502)
        #expect(r.text.contains("\"code\":\"upstream_forbidden_address\""))
        #expect(h.upstream.requestCount(for: "rss") == 0)
    }

    @Test func redirectToLoopbackIsRefusedByDefault() throws {
        let h = try Harness()
        // The feed URL names loopback only after a redirect; the address check still applies.
        h.upstream.setFeedURL(h.upstream.baseURL + "/redirect?to=http://127.0.0.1:1/feed.xml", forPodcast: "1200361736")
        let r = try h.get("/podcasts/1200361736/episodes")
        #expect(r.status == 502)
        #expect(r.text.contains("\"code\":\"upstream_forbidden_address\""))
    }
}
