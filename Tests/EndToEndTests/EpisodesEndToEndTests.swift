import Foundation
import Testing
import TestSupport

@Suite(.serialized) struct EpisodesEndToEndTests {
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
            let limited = try h.get("/podcasts/1200361736/episodes?limit=2")
            #expect(h.json(limited)["count"] as? Int == 2)
            #expect(try h.get("/podcasts/1200361736/episodes").header("X-Cache") == "HIT")
            #expect(h.upstream.requestCount(for: "rss") == 2)
            let atom = h.json(try h.get("/podcasts/1526489823/episodes"))
            #expect(atom["title"] as? String == "Swift over Coffee")
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
