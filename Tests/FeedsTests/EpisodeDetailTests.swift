import FeedFormats
import Foundation
import Primitives
import TestSupport
import Testing
@testable import Feeds

/// Chapters and transcripts are written by strangers: each format is read from published
/// examples, and nothing hostile in them comes out as a bad time, a bad URL or markup.
@Suite(.offPool) struct EpisodeDetailTests {
    static let base = "https://cdn.example/ep/"

    static func chapters(_ file: String, duration: Int? = 1800) throws -> [[String: Any]] {
        let part = EpisodePart(.chapters, url: base + "chapters.json", duration: duration)
        let out = try part.read(fixture("episode-files/" + file))
        return try #require(JSONSerialization.jsonObject(with: Data(out)) as? [[String: Any]])
    }

    static func transcript(_ bytes: [UInt8], _ format: TranscriptFormat, duration: Int? = 1800) throws -> [String: Any] {
        let part = EpisodePart(.transcript(format, language: "en"), url: base + "t", duration: duration)
        return json(try part.read(bytes))
    }

    static func segments(_ t: [String: Any]) -> [[String: Any]] { t["segments"] as? [[String: Any]] ?? [] }

    @Test func jsonChaptersAreReadSortedAndEnded() throws {
        let c = try Self.chapters("chapters.json")
        #expect(c.map { $0["start"] as? Double } == [0, 168, 260, 410, 462.5, 1500])
        // Each ends where the next table-of-contents chapter starts, or at its stated end, or the episode's.
        #expect(c.map { $0["end"] as? Double } == [168, 260, 462.5, 462.5, 600, 1800])
        #expect(c[4]["title"] as? String == "Donations & Thanks")
        #expect(c[4]["url"] as? String == "https://cdn.example/donate")
        #expect(c[3]["imageUrl"] as? String == "https://cdn.example/ep/img/progress.jpg")
        #expect(c[3]["toc"] as? Bool == false && c[0]["toc"] as? Bool == true)
        #expect(c[0]["url"] is NSNull)
    }

    @Test func hostileChaptersComeOutCheckedOrNotAtAll() throws {
        let c = try Self.chapters("hostile-chapters.json", duration: 3600)
        #expect(c.map { $0["start"] as? Double } == [5, 10, 60])
        for mark in c {
            for key in ["url", "imageUrl"] {
                if let url = mark[key] as? String { #expect(url.hasPrefix("https://") || url.hasPrefix("http://"), "\(url)") }
            }
            let end = try #require(mark["end"] as? Double)
            #expect(end > mark["start"] as? Double ?? 0 && end <= 3600)
            #expect(!((mark["title"] as? String) ?? "").contains("<"))
        }
        #expect(c[2]["title"] as? String == "Ends before it starts")
        #expect(c[2]["url"] is NSNull && c[2]["imageUrl"] is NSNull)
        #expect(c[2]["end"] as? Double == 3600, "an end before the start is no end")
        #expect(c[1]["end"] as? Double == 3600, "an end past the episode is cut to it")
        #expect(throws: ClientError.self) { try Self.chapters("broken-chapters.json") }
        #expect(throws: ClientError.self) { try Self.chapters("transcript.vtt") }
    }

    @Test func tooManyChaptersAreCut() throws {
        let many = "{\"chapters\":[" + (0..<5000).map { "{\"startTime\":\($0)}" }.joined(separator: ",") + "]}"
        let part = EpisodePart(.chapters, url: Self.base, duration: nil)
        let c = try #require(JSONSerialization.jsonObject(with: Data(try part.read(Array(many.utf8)))) as? [Any])
        #expect(c.count == ChapterList.maxChapters)
    }

    @Test func podloveChaptersAreReadFromTheFeed() throws {
        let feed = fixture("rss/1580000009.xml")
        let parsed = try RSSParser.parse(feed, limit: 10, base: "https://feeds.example/ct.xml")
        let episode = try #require(parsed.episodes.first { $0.id == "ct-podlove" })
        #expect(episode.inlineChapters.map(\.start) == [0, 90.5, 465])
        #expect(episode.inlineChapters.map(\.end) == [90.5, 465, 600])
        #expect(episode.inlineChapters[1].title == "Main & topic" && episode.inlineChapters[1].imageUrl == "https://example.com/topic.jpg")
        #expect(episode.inlineChapters[2].url == nil)
        // Not in the list's JSON: only the one-episode answer carries them.
        #expect(!String(decoding: try FeedJSON.encode(episode), as: UTF8.self).contains("inlineChapters"))
    }

    @Test func webVTTGivesSpeakersAndPlainText() throws {
        let t = try Self.transcript(fixture("episode-files/transcript.vtt"), .webVTT)
        let s = Self.segments(t)
        #expect(t["type"] as? String == "text/vtt" && t["language"] as? String == "en" && t["truncated"] as? Bool == false)
        #expect(s.map { $0["speaker"] as? String } == ["Ada Host", "Grace Guest", "Ada Host"])
        #expect(
            s.map { $0["text"] as? String } == ["Welcome back to the show.", "Thanks for having me & my notes.", "Let's talk about chapters and transcripts."])
        #expect(s.map { $0["start"] as? Double } == [0, 4.5, 9.25])
        #expect(s.map { $0["end"] as? Double } == [4.5, 9.25, 15])
        #expect(throws: ClientError.self) { try Self.transcript(Array("WEBVTTX\n\n00:00.000 --> 00:01.000\nx".utf8), .webVTT) }
        #expect(throws: ClientError.self) { try Self.transcript(fixture("episode-files/transcript.srt"), .webVTT) }
    }

    @Test func hostileWebVTTIsBounded() throws {
        let s = Self.segments(try Self.transcript(fixture("episode-files/hostile-transcript.vtt"), .webVTT, duration: 3600))
        #expect(s.map { $0["start"] as? Double } == [0.5, 1, 5], "negative and unreadable times are dropped, the rest sorted")
        #expect(s[1]["end"] as? Double == 3600, "a cue that never ends is cut at the episode's end")
        #expect(s[2]["end"] is NSNull, "an end before the start is no end")
        #expect(s[0]["text"] as? String == "Overlaps the one above <b>" && s[0]["speaker"] as? String == "Overlapping Voice")
        #expect(s[1]["text"] as? String == "alert(1)A cue that never ends")
    }

    @Test func subRipJSONHTMLAndPlainTranscripts() throws {
        let srt = Self.segments(try Self.transcript(fixture("episode-files/transcript.srt"), .subRip))
        #expect(srt.map { $0["text"] as? String } == ["[music]", "Hello, and welcome to the show.", "Today: SubRip files."])
        #expect(srt.map { $0["start"] as? Double } == [0, 3, 7.5])
        let j = Self.segments(try Self.transcript(fixture("episode-files/transcript.json"), .json))
        #expect(j.map { $0["speaker"] as? String } == ["Ada Host", "Ada Host", "Grace Guest"])
        #expect(j.map { $0["text"] as? String } == ["Hello", "and welcome.", "Glad to be here."])
        let html = Self.segments(try Self.transcript(fixture("episode-files/transcript.html"), .html))
        #expect(html.count == 1 && html[0]["start"] is NSNull)
        let text = html[0]["text"] as? String ?? ""
        #expect(text.contains("Welcome & hello.") && !text.contains("never text") && !text.contains("<"))
        let plain = Self.segments(try Self.transcript(Array("  Line one.\n\n Line   two. ".utf8), .plain))
        #expect(plain.map { $0["text"] as? String } == ["Line one. Line two."])
        #expect(throws: ClientError.self) { try Self.transcript(Array("{\"no\":1}".utf8), .json) }
        #expect(throws: ClientError.self) { try Self.transcript(Array("no cues here".utf8), .subRip) }
    }

    /// Megabytes of cues, or one endless line: cut at the caps, flagged, quickly.
    @Test func hugeTranscriptsAreCutAndFlagged() throws {
        var vtt = Array("WEBVTT\n\n".utf8)
        for i in 0..<(TranscriptText.maxSegments + 500) {
            vtt += Array("\(i / 60):\(String(format: "%02d", i % 60)).000 --> \(i / 60):\(String(format: "%02d", i % 60)).500\nword \(i)\n\n".utf8)
        }
        let t = try Self.transcript(vtt, .webVTT, duration: nil)
        #expect(Self.segments(t).count == TranscriptText.maxSegments && t["truncated"] as? Bool == true)
        let endless = Array("WEBVTT\n\n00:00.000 --> 00:01.000\n".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 3 << 20)
        let e = try Self.transcript(endless, .webVTT)
        let text = Self.segments(e).first?["text"] as? String ?? ""
        #expect(text.utf8.count == CueFile.maxLineBytes)
        let plain = try Self.transcript([UInt8](repeating: UInt8(ascii: "b"), count: 3 << 20), .plain)
        #expect((Self.segments(plain).first?["text"] as? String)?.utf8.count == TranscriptText.maxTextBytes && plain["truncated"] as? Bool == true)
    }

    /// A file's host is a stranger's choice: fetched as feeds are (public addresses only, capped).
    @Test func filesAreFetchedLikeThirdPartyFeeds() {
        let part = EpisodePart(.chapters, url: "https://cdn.example/c.json", duration: nil)
        let request = EpisodePartLoader(maxFileBytes: 4096, allowPrivateHosts: false).prepared(part).upstreamRequest
        #expect(request.publicAddressesOnly && request.urlChosenByThirdParty && request.maxBodyBytes == 4096)
        #expect(!EpisodePartLoader(maxFileBytes: 4096, allowPrivateHosts: true).prepared(part).upstreamRequest.publicAddressesOnly)
    }

    @Test func clockTimes() {
        #expect(ClockTime.seconds("01:02:03.500") == 3723.5)
        #expect(ClockTime.seconds("02:03,25") == 123.25)
        #expect(ClockTime.seconds("90:00") == 5400)
        #expect(ClockTime.seconds("12.5") == 12.5)
        for bad in ["", "1:60", "1:2:3:4", "-1", "1e3", "00:00:00.0000000001", "::", "1:", "a:b", "999999999:00:00"] {
            #expect(ClockTime.seconds(bad) == nil, "\(bad)")
        }
    }

    @Test func transcriptFormatsAreRankedTimedFirst() {
        #expect(TranscriptFormat(type: "text/vtt; charset=utf-8", url: "") == .webVTT)
        #expect(TranscriptFormat(type: "application/srt", url: "") == .subRip)
        #expect(TranscriptFormat(type: nil, url: "https://x/t.SRT?x=1") == .subRip)
        #expect(TranscriptFormat(type: "audio/mpeg", url: "t.vtt") == nil)
        #expect([TranscriptFormat.plain, .json, .webVTT, .html, .subRip].sorted() == [.webVTT, .subRip, .json, .html, .plain])
    }

    /// The episode data keeps inline chapters beside each episode, and finds an episode by id.
    @Test func anEpisodeIsFoundInTheDataWithItsParts() throws {
        let blob = try EpisodeFeedData.build(
            feed: fixture("rss/1580000009.xml"), contentType: nil, lookupTitle: nil, base: "https://feeds.example/rss/ct.xml", maxBytes: 1 << 20)
        let data = try #require(EpisodeFeedData(blob))
        let json = try #require(EpisodeDetail(in: data, id: "ct-json"))
        #expect(json.chaptersFile?.url == "https://feeds.example/episode-files/chapters.json" && json.chaptersFile?.duration == 1800)
        #expect(json.transcripts.map { $0.url.split(separator: "/").last.map(String.init) } == ["transcript.vtt", "transcript.json", "transcript.html"])
        #expect(json.inlineChapters.isEmpty)
        let podlove = try #require(EpisodeDetail(in: data, id: "ct-podlove"))
        #expect((try JSONSerialization.jsonObject(with: Data(podlove.inlineChapters)) as? [Any])?.count == 3)
        #expect(EpisodeDetail(in: data, id: "https://example.com/episodes/4?part=a&b=c") != nil)
        #expect(EpisodeDetail(in: data, id: "nope") == nil)
        // Data of the previous layout (shared through Redis by an older replica) is not read as this one.
        var older = blob
        older[4] = 1
        #expect(EpisodeFeedData(older) == nil)
    }
}
