import Foundation
import Testing
import TestSupport

/// One episode, complete: its chapters and transcript in one request, read from the files
/// the feed points to, each fetched once and cached; a broken or missing file is a problem
/// in the answer, never a failed episode.
@Suite(.serialized, .offPool) struct EpisodeDetailEndToEndTests {
    static let environment = ["ALLOW_PRIVATE_FEED_HOSTS": "true"]

    @Test func chaptersAndTranscriptInOneRequestThenCached() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            let r = try h.get("/podcasts/1580000009/episodes/ct-json?include=chapters,transcript")
            #expect(r.status == 200)
            let body = h.json(r)
            #expect(body["podcastId"] as? Int == 1_580_000_009)
            let item = body["item"] as? [String: Any] ?? [:]
            #expect(item["id"] as? String == "ct-json" && item["duration"] as? Int == 1800)
            let chapters = body["chapters"] as? [[String: Any]] ?? []
            #expect(chapters.map { $0["title"] as? String } == ["Intro", "Hearing Aids", "Progress Report", "Image only", "Donations & Thanks", "Outro"])
            let transcript = body["transcript"] as? [String: Any] ?? [:]
            #expect(transcript["type"] as? String == "text/vtt", "the timed WebVTT is preferred over the JSON and HTML ones")
            #expect((transcript["segments"] as? [[String: Any]])?.first?["speaker"] as? String == "Ada Host")
            #expect((body["problems"] as? [Any])?.isEmpty == true)
            #expect(h.upstream.requestCount(for: "episode-files") == 2)
            // Again: the whole answer is kept; nothing is fetched or read again.
            let again = try h.get("/podcasts/1580000009/episodes/ct-json?include=transcript,chapters")
            #expect(again.status == 200 && again.header("X-Cache") == "HIT" && again.body == r.body)
            // An ETag the client holds is a 304.
            let etag = try #require(again.header("ETag"))
            #expect(try h.get("/podcasts/1580000009/episodes/ct-json?include=chapters,transcript", headers: ["If-None-Match: \(etag)"]).status == 304)
            // Without `include`, the episode alone; and the list is cut from the same feed download.
            let bare = h.json(try h.get("/podcasts/1580000009/episodes/ct-json"))
            #expect(bare["chapters"] is NSNull && bare["transcript"] is NSNull)
            #expect(try h.get("/podcasts/1580000009/episodes").header("X-Cache") == "HIT")
            #expect(h.upstream.requestCount(for: "rss") == 1 && h.upstream.requestCount(for: "itunes-lookup") == 1)
            #expect(h.upstream.requestCount(for: "episode-files") == 2)
        }
    }

    /// Issue 57: each part on its own clock. A chapters file that never answers is a problem
    /// once its share of the budget is spent; the transcript beside it is served.
    @Test func aHangingChaptersFileCostsTheTranscriptNothing() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment.merging(["UPSTREAM_TIMEOUT_MS": "2000"]) { $1 })
            let r = try h.get("/podcasts/1580000009/episodes/ct-hang?include=chapters,transcript")
            #expect(r.status == 200, "\(r.text)")
            let body = h.json(r)
            #expect((body["transcript"] as? [String: Any])?["type"] as? String == "text/vtt", "\(r.text)")
            #expect(body["chapters"] is NSNull)
            let problems = body["problems"] as? [[String: Any]] ?? []
            #expect(problems.map { $0["part"] as? String } == ["chapters"] && problems.first?["code"] as? String == "upstream_timeout", "\(problems)")
            #expect(h.upstream.requestCount(for: "hang") == 1)
        }
    }

    /// Issue 57: a transcript larger than EPISODE_FILE_MAX_BYTES is read up to it and served
    /// cut (`truncated`), not refused: the first hours of a long interview.
    @Test func aFiftyMebibyteTranscriptIsServedCut() async throws {
        try await offPool {
            // A generous budget, the server's and the client's: the fixture host makes up the
            // file and the server reads 50 MiB of it on a machine that may be busy.
            let h = try Harness(environment: Self.environment.merging(["UPSTREAM_TIMEOUT_MS": "60000"]) { $1 })
            let r = try h.get("/podcasts/1580000009/episodes/ct-long?include=transcript", timeout: 60)
            #expect(r.status == 200, "\(r.text.prefix(500))")
            let transcript = h.json(r)["transcript"] as? [String: Any] ?? [:]
            #expect(transcript["truncated"] as? Bool == true, "\(r.text.prefix(500))")
            let segments = transcript["segments"] as? [[String: Any]] ?? []
            // Every segment served is whole, in order from the start.
            #expect(segments.count > 1000 && segments.first?["text"] as? String == "Word 0 of a long interview.")
            #expect(segments.allSatisfy { ($0["text"] as? String)?.hasSuffix("of a long interview.") == true })
            #expect((h.json(r)["problems"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func brokenAndMissingFilesAreProblemsAndTheNextTranscriptIsTried() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            let target = "/podcasts/1580000009/episodes/ct-broken?include=chapters,transcript"
            let body = h.json(try h.get(target))
            #expect(body["chapters"] is NSNull)
            #expect((body["transcript"] as? [String: Any])?["type"] as? String == "application/json")
            let problems = body["problems"] as? [[String: Any]] ?? []
            #expect(problems.map { $0["part"] as? String } == ["chapters", "transcript"])
            #expect(problems.first?["code"] as? String == "chapters_unreadable")
            #expect(problems.allSatisfy { ($0["message"] as? String)?.isEmpty == false })
            let fetched = h.upstream.requestCount(for: "episode-files")
            #expect(fetched == 3)
            // The broken and the missing file are remembered like any absence: not fetched again.
            let again = h.json(try h.get(target))
            #expect((again["problems"] as? [Any])?.count == 2)
            #expect(h.upstream.requestCount(for: "episode-files") == fetched)
        }
    }

    @Test func podloveChaptersHostileFilesAndEncodedIds() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            let podlove = h.json(try h.get("/podcasts/1580000009/episodes/ct-podlove?include=chapters"))
            #expect((podlove["chapters"] as? [[String: Any]])?.map { $0["start"] as? Double } == [0, 90.5, 465])
            #expect(podlove["transcript"] is NSNull)
            let hostile = h.json(try h.get("/podcasts/1580000009/episodes/ct-hostile?include=chapters,transcript"))
            let text = String(decoding: try JSONSerialization.data(withJSONObject: hostile), as: UTF8.self)
            #expect(!text.contains("javascript:") && !text.contains("<script") && !text.contains("file:"))
            #expect((hostile["chapters"] as? [Any])?.count == 3 && (hostile["problems"] as? [Any])?.isEmpty == true)
            // The id as the list gives it, URL-encoded into the path.
            let id = "https://example.com/episodes/4?part=a&b=c".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let encoded = try h.get("/podcasts/1580000009/episodes/\(id)?include=transcript")
            #expect(encoded.status == 200)
            #expect((h.json(encoded)["transcript"] as? [String: Any])?["type"] as? String == "text/html")
            // An episode without either: nulls, and no problem.
            let plain = h.json(try h.get("/podcasts/1580000009/episodes/ct-plain?include=chapters,transcript"))
            #expect(plain["chapters"] is NSNull && plain["transcript"] is NSNull && (plain["problems"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func badRequestsAreClearErrors() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment)
            let unknown = try h.get("/podcasts/1580000009/episodes/no-such-episode")
            #expect(unknown.status == 404 && (h.json(unknown)["error"] as? [String: Any])?["code"] as? String == "episode_not_found")
            for include in ["video", "", "chapters,", "Chapters"] {
                let refused = try h.get("/podcasts/1580000009/episodes/ct-json?include=\(include)")
                #expect(refused.status == 400 && (h.json(refused)["error"] as? [String: Any])?["code"] as? String == "invalid_parameter", "\(include)")
            }
            #expect(try h.get("/podcasts/abc/episodes/ct-json").status == 400)
            let long = String(repeating: "x", count: 3000)
            #expect(try h.get("/podcasts/1580000009/episodes/\(long)").status == 400)
            let noPodcast = try h.get("/podcasts/1999999999/episodes/ct-json")
            #expect(noPodcast.status == 404 && (h.json(noPodcast)["error"] as? [String: Any])?["code"] as? String == "podcast_not_found")
        }
    }
}

extension EpisodeDetailEndToEndTests {
    /// A file larger than `EPISODE_FILE_MAX_BYTES` is read up to it (issue 57): the chapters
    /// that arrived whole, the transcript's whole cues, `truncated`; no problem.
    @Test func aFileOverTheCapIsReadUpToIt() async throws {
        try await offPool {
            let h = try Harness(environment: Self.environment.merging(["EPISODE_FILE_MAX_BYTES": "1024"]) { $1 })
            let body = h.json(try h.get("/podcasts/1580000009/episodes/ct-json?include=chapters,transcript"))
            let chapters = (body["chapters"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
            #expect(chapters == ["Intro", "Hearing Aids", "Progress Report", "Image only", "Donations & Thanks"], "\(body)")
            #expect((body["problems"] as? [Any])?.isEmpty == true)
            let transcript = body["transcript"] as? [String: Any] ?? [:]
            #expect(transcript["type"] as? String == "text/vtt" && transcript["truncated"] as? Bool == false)
        }
    }
}

extension EpisodeDetailEndToEndTests {
    /// Past their TTL, the files are asked for conditionally: a publisher's 304 renews them
    /// without a download or a parse.
    @Test func expiredFilesAreRefreshedConditionally() async throws {
        let h = try await offPool { try Harness(environment: Self.environment.merging(["CACHE_TTL_CHAPTERS": "1", "CACHE_TTL_TRANSCRIPTS": "1"]) { $1 }) }
        let target = "/podcasts/1580000009/episodes/ct-json?include=chapters,transcript"
        let first = try await offPool { try h.get(target).status }
        #expect(first == 200 && h.upstream.requestCount(for: "episode-files") == 2)
        try await Task.sleep(for: .seconds(1.5))
        // Stale now: served at once, refreshed in the background with the files' validators.
        let second = try await offPool { () -> Bool in
            let r = try h.get(target)
            return r.status == 200 && h.json(r)["chapters"] as? [Any] != nil
        }
        #expect(second)
        #expect(await eventually { h.upstream.requestCount(for: "episode-files-304") == 2 })
        #expect(h.upstream.requestCount(for: "episode-files") == 4)
    }
}
