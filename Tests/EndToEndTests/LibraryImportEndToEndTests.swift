import Foundation
import Service
import Testing
import TestSupport

/// Issue 59: a library moved in from another app (OPML), named by feed URL, refreshed by the
/// ids the import gave, moved out again; through the real binary and the fixture upstream.
@Suite(.serialized, .offPool) struct LibraryImportEndToEndTests {
    /// Overcast's export, its feeds at this fixture upstream.
    static func overcast(_ h: Harness) throws -> [UInt8] {
        let file = FeedProxyProcess.repositoryRoot.appendingPathComponent("Fixtures/library/overcast.opml")
        let text = try String(contentsOf: file, encoding: .utf8)
        return Array(text.replacingOccurrences(of: "FIXTURES", with: "127.0.0.1:\(h.upstream.baseURL.split(separator: ":").last ?? "")").utf8)
    }

    static func importOPML(_ h: Harness, _ body: [UInt8]) throws -> RawClient.Response {
        try h.post("/library/opml", body: body, type: "text/x-opml", timeout: 30)
    }

    static func outlines(_ h: Harness, _ r: RawClient.Response) -> [[String: Any]] {
        h.json(r)["outlines"] as? [[String: Any]] ?? []
    }

    @Test func anOvercastExportImportsRefreshesAndExportsAgain() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true"])
            let imported = try Self.importOPML(h, try Self.overcast(h))
            #expect(imported.status == 200, "\(imported.text.prefix(500))")
            #expect(imported.header("Cache-Control") == "no-store")
            let outlines = Self.outlines(h, imported)
            let statuses = outlines.map { $0["status"] as? String ?? "-" }
            // Sundell, indie, Coffee, Sundell again, moved (301), announces a move, gone, relative,
            // javascript:, credentials, feed:// link.
            #expect(statuses == ["ok", "ok", "ok", "ok", "moved", "moved", "error", "error", "error", "error", "ok"], "\(imported.text)")
            let ids = outlines.map { $0["id"] as? Int }
            #expect(ids[0] != nil && ids[0] == ids[3], "one feed named twice is one podcast")
            #expect(ids.compactMap { $0 }.allSatisfy { (1_000_000_000_000_000...8_999_999_999_999_999).contains($0) })
            #expect((outlines[1]["title"] as? String)?.isEmpty == false, "a feed iTunes does not list is read all the same")
            let moved = outlines[5]["movedTo"] as? [String: Any]
            #expect((moved?["url"] as? String)?.hasSuffix("/rss/indie.xml") == true, "\(outlines[5])")
            #expect(moved?["id"] as? Int == ids[1], "the new address is a podcast the library already has")
            #expect((outlines[7]["error"] as? [String: Any])?["code"] as? String == "invalid_feed_url")
            let library = h.json(imported)["podcasts"] as? [Int] ?? []
            #expect(library.count == 7, "each feed once, the broken outlines left out")
            let downloads = h.upstream.requestCount(for: "rss")

            // The ids refresh the library at once, from what the import read.
            let refreshed = try h.get("/episodes?podcasts=" + library.map(String.init).joined(separator: ","))
            let batch = h.json(refreshed)["podcasts"] as? [[String: Any]] ?? []
            #expect(batch.count == 7)
            #expect(batch.filter { $0["status"] as? String == "ok" }.count == 6, "\(refreshed.text.prefix(1500))")
            #expect(h.upstream.requestCount(for: "rss") == downloads, "the import's reads are the refresh's")
            #expect(h.upstream.requestCount(for: "itunes-lookup") == 0, "feed ids are never sent to iTunes")

            // A feed id is a podcast like any other.
            let podcast = try h.get("/podcasts/\(library[1])")
            #expect(podcast.status == 200, "\(podcast.text.prefix(600))")
            #expect(h.json(podcast)["source"] as? String == "rss", "\(podcast.text.prefix(700))")
            #expect((h.json(podcast)["item"] as? [String: Any])?["title"] as? String == "Kitchen Table Radio")

            // Named by URL: the same id, from the registry once the feed is known.
            let url = "http://127.0.0.1:\(h.upstream.baseURL.split(separator: ":").last ?? "")/rss/indie.xml"
            let byURL = try h.get("/podcasts/byfeedurl?url=" + (url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
            #expect(byURL.status == 200, "\(byURL.text.prefix(500))")
            #expect((h.json(byURL)["item"] as? [String: Any])?["id"] as? Int == library[1], "\(byURL.text.prefix(500))")

            // Out and in again: the same library.
            let exported = try h.get("/library/opml?podcasts=" + library.map(String.init).joined(separator: ","))
            #expect(exported.status == 200, "\(exported.text.prefix(500))")
            #expect(exported.header("Content-Type")?.hasPrefix("text/x-opml") == true)
            let again = try Self.importOPML(h, exported.body)
            #expect(Set(h.json(again)["podcasts"] as? [Int] ?? []) == Set(library), "\(exported.text)")
        }
    }

    /// Issue 67: the single-node default keeps the feed ids it gave out across a restart
    /// (records in DATA_DIR, not in the cache): an imported library's ids still answer.
    @Test func feedIDsOutliveARestartOfASingleNode() async throws {
        try await offPool {
            let data = FileManager.default.temporaryDirectory.appendingPathComponent("feedproxy-restart-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: data) }
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "DATA_DIR": data])
            let url = "http://127.0.0.1:\(h.upstream.baseURL.split(separator: ":").last ?? "")/rss/indie.xml"
            let byURL = try h.get("/podcasts/byfeedurl?url=" + (url.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
            let id = try #require((h.json(byURL)["item"] as? [String: Any])?["id"] as? Int, "\(byURL.text.prefix(500))")
            h.proxy.stop()
            var env = Harness.upstreamEnvironment(h.upstream)
            for variable in UpstreamCatalog.rateLimitVariables { env[variable] = "6000" }
            env["CLIENT_MISS_RATE_PER_MIN"] = "0"
            env["ALLOW_PRIVATE_FEED_HOSTS"] = "true"
            func restarted(dataDir: String) throws -> (podcast: RawClient.Response, episodes: RawClient.Response) {
                env["DATA_DIR"] = dataDir
                let p = try FeedProxyProcess(environment: env)
                defer { p.stop() }
                return (try RawClient.get(port: p.port, "/podcasts/\(id)"), try RawClient.get(port: p.port, "/podcasts/\(id)/episodes", timeout: 10))
            }
            let kept = try restarted(dataDir: data)
            #expect(kept.podcast.status == 200, "\(kept.podcast.text.prefix(500))")
            #expect(kept.episodes.status == 200, "\(kept.episodes.text.prefix(500))")
            // The same restart without the records forgets the id (what the records are for).
            let forgotten = try restarted(dataDir: data + "-empty")
            #expect(forgotten.podcast.status == 404 && forgotten.podcast.text.contains("feed_id_unknown"), "\(forgotten.podcast.text.prefix(300))")
            try? FileManager.default.removeItem(atPath: data + "-empty")
        }
    }

    /// A library of 500 feeds (the most one request refreshes) imports and refreshes by a form
    /// POST (the ids do not fit a URL a proxy passes); each feed is downloaded once.
    @Test func aFiveHundredFeedLibraryImportsAndRefreshesByForm() async throws {
        try await offPool {
            let h = try Harness(environment: ["ALLOW_PRIVATE_FEED_HOSTS": "true", "EPISODES_BATCH_DEADLINE_S": "60"])
            let outlines = (1_590_000_001...1_590_000_500).map {
                "<outline type=\"rss\" text=\"Show \($0)\" xmlUrl=\"\(h.upstream.baseURL)/rss/library-\($0).xml\"/>"
            }
            let opml = "<?xml version=\"1.0\"?><opml version=\"2.0\"><head><title>Big</title></head><body>\(outlines.joined())</body></opml>"
            let imported = try Self.importOPML(h, Array(opml.utf8))
            let library = h.json(imported)["podcasts"] as? [Int] ?? []
            #expect(library.count == 500)
            #expect(Self.outlines(h, imported).allSatisfy { $0["status"] as? String == "ok" }, "\(imported.text.prefix(1000))")
            #expect(h.upstream.requestCount(for: "rss") == 500)

            let form = Array(("podcasts=" + library.map(String.init).joined(separator: "%2C") + "&limit=1").utf8)
            let refreshed = try h.post("/episodes", body: form, type: "application/x-www-form-urlencoded", timeout: 30)
            #expect(refreshed.status == 200)
            #expect(refreshed.header("Cache-Control") == "no-store")
            let statuses = (h.json(refreshed)["podcasts"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
            #expect(statuses.count == 500 && statuses.allSatisfy { $0 == "ok" })
            #expect(h.upstream.requestCount(for: "rss") == 500)

            // Issue 67: the whole library listens from its token, by a form (the token alone is 7 KB).
            let token = try #require(h.json(refreshed)["syncToken"] as? String)
            #expect(token.utf8.count > 4096)
            let stream = try LibraryEventsEndToEndTests.EventStream(
                port: h.port, form: "podcasts=" + library.map(String.init).joined(separator: "%2C") + "&limit=1&sync=" + token)
            #expect(stream.head.status == 200 && stream.head.header("Content-Type")?.hasPrefix("text/event-stream") == true)
            let first = try stream.episodes()
            #expect(LibraryEventsEndToEndTests.items(first.json).isEmpty, "nothing new since the token")
            #expect((first.json["podcasts"] as? [[String: Any]] ?? []).count == 500)
            #expect(h.upstream.requestCount(for: "rss") == 500, "listening read nothing again")

            // EventSource cannot POST: the library under a short name, then a GET of its stream.
            let made = try h.post(
                "/episodes/events/library", body: Array(("podcasts=" + library.map(String.init).joined(separator: "%2C") + "&limit=1&sync=" + token).utf8),
                type: "application/x-www-form-urlencoded")
            #expect(made.status == 201 && made.header("Cache-Control") == "no-store", "\(made.text.prefix(300))")
            let url = try #require(h.json(made)["url"] as? String)
            #expect(made.header("Location") == url && url.utf8.count < 100)
            let handled = try LibraryEventsEndToEndTests.EventStream(port: h.port, String(url.dropFirst("/episodes/events?".count)))
            let start = try handled.episodes()
            #expect(LibraryEventsEndToEndTests.items(start.json).isEmpty && (start.json["podcasts"] as? [[String: Any]] ?? []).count == 500)
            #expect(start.id == first.id, "the handle's position, as the token's")
            // A new episode of one of them (the eighth outline's feed) reaches the stream opened by its handle.
            #expect(h.upstream.publish(podcast: 1_590_000_008, at: Int(Date().timeIntervalSince1970)))
            #expect(try h.get("/hub/notify?id=\(library[7])").status == 202)
            let news = try handled.episodes()
            #expect(LibraryEventsEndToEndTests.items(news.json).compactMap { $0["podcastId"] as? Int } == [library[7]], "\(news.json)")
            // A handle nobody made: told as a problem event, and the stream ends.
            let unknown = try LibraryEventsEndToEndTests.EventStream(port: h.port, "library=AAAAAAAAAAAAAAAAAAAAAA")
            let problem = try unknown.next()
            #expect(problem["event"] == "problem" && problem["data"]?.contains("library_unknown") == true, "\(problem)")

            // Exported by a form too (500 feed ids do not fit a URL), and read back as the same library.
            let exported = try h.post("/library/opml/export", body: form, type: "application/x-www-form-urlencoded", timeout: 30)
            #expect(exported.status == 200, "\(exported.text.prefix(300))")
            #expect(exported.text.components(separatedBy: "<outline ").count - 1 == 500)
            #expect(h.json(try Self.importOPML(h, exported.body))["podcasts"] as? [Int] ?? [] == library)
            #expect(try h.get("/library/opml?podcasts=" + library.map(String.init).joined(separator: ",")).status == 414, "what the form is for")

            let json = try h.post("/episodes", body: Array("{\"podcasts\":[1]}".utf8), type: "application/json")
            #expect(json.status == 415)
            #expect((h.json(json)["error"] as? [String: Any])?["code"] != nil)
        }
    }

    /// A hostile file is refused whole, quickly; an unknown feed id is a 404 of its own; and
    /// with private hosts refused, a file naming one reaches nothing.
    @Test func hostileFilesAndUnknownIdsAreRefused() async throws {
        try await offPool {
            let h = try Harness()
            let laughs = """
                <?xml version="1.0"?><!DOCTYPE opml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\
                <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>\
                <opml version="2.0"><body><outline text="&d;&d;&d;&d;" xmlUrl="https://example.com/x.xml"/></body></opml>
                """
            let refused = try Self.importOPML(h, Array(laughs.utf8))
            #expect(refused.status == 400, "\(refused.text.prefix(300))")
            #expect((h.json(refused)["error"] as? [String: Any])?["code"] as? String == "invalid_opml")
            #expect(try Self.importOPML(h, Array("not xml".utf8)).status == 400)

            let unknown = try h.get("/podcasts/1234567890123456/episodes")
            #expect(unknown.status == 404)
            #expect((h.json(unknown)["error"] as? [String: Any])?["code"] as? String == "feed_id_unknown", "\(unknown.text)")

            let before = h.upstream.requestCount
            let imported = try Self.importOPML(h, try Self.overcast(h))
            let statuses = Self.outlines(h, imported).map { $0["status"] as? String ?? "-" }
            #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == "error" }, "\(imported.text.prefix(800))")
            #expect(h.upstream.requestCount == before, "a private address is refused before it is asked")
        }
    }
}
