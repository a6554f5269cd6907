import EpisodeSync
import Foundation
import Primitives
import TestSupport
import Testing

@testable import Feeds

/// Issue 40: a podcast's episodes kept as data once, pages cut from it with a cursor and `since`.
@Suite(.offPool) struct EpisodePagingTests {
    @Test func base64URLRoundTripsAndRefusesWhatNoEncodingGives() {
        var rng = SplitMix(seed: 7)
        for length in 0..<40 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        for bad in ["a", "abcde", "ab=c", "ab+c", "ab/c", "é"] { #expect(Base64URL.decode(bad) == nil, "\(bad)") }
    }

    @Test func aCursorIsValidForItsOwnListOnly() throws {
        let cursor = EpisodeCursor(index: 42, anchor: 0xDEAD_BEEF_0123_4567)
        let text = cursor.encoded(scope: "1200361736")
        #expect(text.utf8.count == 23)
        #expect(try EpisodeCursor.decode(text, scope: "1200361736") == cursor)
        #expect(throws: ClientError.self) { try EpisodeCursor.decode(text, scope: "1526489823") }
        var mangled = Array(text.utf8)
        mangled[5] = mangled[5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: ClientError.self) { try EpisodeCursor.decode(String(decoding: mangled, as: UTF8.self), scope: "1200361736") }
    }

    /// Walking an unchanged list visits each entry once, in order; a walk resumed after new
    /// entries were put in front continues after the last one it had, skipping nothing.
    @Test func aWalkNeitherRepeatsNorSkips() {
        let anchors: [UInt64] = (0..<10).map { 1000 + UInt64($0) }
        var seen: [UInt64] = []
        var cursor: EpisodeCursor?
        repeat {
            let page = EpisodePage(count: anchors.count, limit: 3, cursor: cursor, anchor: { anchors[$0] }, matches: { _ in true })
            #expect(page.total == 10)
            seen += page.picked.map { anchors[$0] }
            cursor = page.next
        } while cursor != nil
        #expect(seen == anchors)

        let first = EpisodePage(count: anchors.count, limit: 4, cursor: nil, anchor: { anchors[$0] }, matches: { _ in true })
        let grown: [UInt64] = [1, 2] + anchors  // two new episodes at the top
        let resumed = EpisodePage(count: grown.count, limit: 100, cursor: first.next, anchor: { grown[$0] }, matches: { _ in true })
        #expect(resumed.picked.map { grown[$0] } == Array(anchors[4...]))
        #expect(resumed.next == nil)
    }

    @Test func sinceKeepsTheNewerAndCountsThemInTheTotal() {
        let published: [Int64] = [500, 400, 300, EpisodeFeedData.undated, 200]
        let page = EpisodePage(
            count: 5, limit: 10, cursor: nil, anchor: { UInt64($0) }, matches: { published[$0] != EpisodeFeedData.undated && published[$0] > 250 })
        #expect(page.picked == [0, 1, 2])
        #expect(page.total == 3)
    }

    /// A page is the same JSON the encoder would write for the same episodes: the bytes are
    /// assembled from pieces, so this keeps them honest.
    @Test func aCutPageIsWhatTheEncoderWrites() throws {
        let feed = fixture("rss/1200361736.xml")
        let blob = try EpisodeFeedData.build(feed: feed, contentType: nil, lookupTitle: nil, base: "https://example.com/feed.xml", maxBytes: 1 << 20)
        let data = try #require(EpisodeFeedData(blob))
        #expect(data.entries.count == 5)
        #expect(data.title == "Swift by Sundell")
        let output = try #require(data.page(podcastID: 7, limit: 2, since: nil, cursor: nil))
        let parsed = try RSSParser.parse(feed, limit: 500, base: "https://example.com/feed.xml")
        let next = try #require(output.link.flatMap { $0.split(separator: "cursor=").last.map { String($0.prefix(23)) } })
        let envelope = EpisodesEnvelope(
            title: parsed.title, updated: parsed.episodes.first?.published, description: parsed.description, author: parsed.author,
            imageUrl: parsed.imageUrl, link: parsed.link, language: parsed.language, podcastGuid: parsed.podcastGuid, locked: parsed.locked,
            funding: parsed.funding, persons: parsed.persons, newFeedUrl: parsed.newFeedUrl, count: 2, items: Array(parsed.episodes.prefix(2)),
            page: CursorPageInfo(size: 2, total: 5, next: "/podcasts/7/episodes?limit=2&cursor=\(next)", nextCursor: next),
            syncToken: SyncToken([7: SyncToken.Position(through: data.changes.current)]).encoded)
        #expect(output.body == (try FeedJSON.encode(envelope)))
    }

    /// A daily show of eight years: every one of its 3,000 episodes is reached page by page,
    /// with the total on each page.
    @Test func everyEpisodeOfALongFeedIsReachable() throws {
        var xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Daily</title>"#
        for n in stride(from: 3000, to: 0, by: -1) {
            xml += "<item><guid>ep-\(n)</guid><title>Episode \(n)</title><pubDate>\(Timestamp.format(1_500_000_000 + n * 86_400))</pubDate></item>"
        }
        xml += "</channel></rss>"
        let blob = try EpisodeFeedData.build(feed: Array(xml.utf8), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 8 << 20)
        let data = try #require(EpisodeFeedData(blob))
        #expect(data.entries.count == 3000)
        var ids: [String] = []
        var cursor: EpisodeCursor?
        var pages = 0
        repeat {
            let output = try #require(data.page(podcastID: 42, limit: 500, since: nil, cursor: cursor))
            let body = json(output.body)
            #expect((body["page"] as? [String: Any])?["total"] as? Int == 3000)
            ids += (body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = ((body["page"] as? [String: Any])?["nextCursor"] as? String).flatMap { try? EpisodeCursor.decode($0, scope: "42") }
            pages += 1
        } while cursor != nil && pages < 20
        #expect(pages == 6)
        #expect(ids == stride(from: 3000, to: 0, by: -1).map { "ep-\($0)" })
    }

    /// Episode data may come back from the shared tier damaged: any cut of it reads as
    /// nothing (or as less), never a trap.
    @Test func damagedDataReadsAsNothing() throws {
        let blob = try EpisodeFeedData.build(feed: fixture("rss/1200361736.xml"), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20)
        for length in stride(from: 0, to: blob.count, by: 7) { #expect(EpisodeFeedData(Array(blob.prefix(length))) == nil, "\(length) bytes") }
        var rng = SplitMix(seed: 11)
        for _ in 0..<300 {
            var damaged = blob
            let at = Int(rng.next() % UInt64(min(200, damaged.count)))
            damaged[at] = UInt8(truncatingIfNeeded: rng.next())
            if let data = EpisodeFeedData(damaged) {
                _ = data.page(podcastID: 1, limit: 3, since: 0, cursor: EpisodeCursor(index: 2, anchor: 9))
            }
        }
        // The data stops before its byte limit rather than growing past it.
        let small = try EpisodeFeedData.build(feed: fixture("rss/1200361736.xml"), contentType: nil, lookupTitle: nil, base: nil, maxBytes: blob.count - 1)
        #expect(small.count < blob.count)
        #expect((EpisodeFeedData(small)?.entries.count ?? 99) < 5)
    }
}

extension EpisodePagingTests {
    /// Issue 57: a long-running daily show of 5,000 episodes with notes is whole within a budget
    /// its JSON is three times larger than (kept in compressed blocks): every episode reachable,
    /// the total true, nothing said to be left out. Past the budget even compressed, the oldest
    /// are left out and the data says so. (make bench builds a 30 MB, 5,000-episode feed with
    /// 6 KB of notes each within the default budget.)
    @Test func aFiveThousandEpisodeFeedWithNotesIsWholeWhenItsJSONIsNot() async throws {
        try await offPool { try Self.fiveThousandEpisodes() }  // seconds of work: not on the test pool
    }

    static func fiveThousandEpisodes() throws {
        var rng = SplitMix(seed: 57)
        let words = [
            "podcast", "episode", "today", "we", "talk", "about", "the", "server", "cache", "feeds", "and", "with", "our", "guest", "history",
            "interview", "listener", "questions", "news", "week", "show", "notes", "links", "sponsor", "thanks", "music", "archive", "science",
        ]
        var xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Daily</title>"#
        for n in stride(from: 5000, to: 0, by: -1) {
            var notes = "<p>"
            while notes.utf8.count < 1500 { notes += words[Int(rng.next() % UInt64(words.count))] + (rng.next() % 12 == 0 ? ".</p><p>" : " ") }
            xml += "<item><guid>ep-\(n)</guid><title>Episode \(n)</title><pubDate>\(Timestamp.format(1_300_000_000 + n * 86_400))</pubDate>"
            xml += "<description><![CDATA[\(notes)</p>]]></description></item>"
        }
        let feed = Array((xml + "</channel></rss>").utf8)
        let budget = 4 << 20
        let blob = try EpisodeFeedData.build(feed: feed, contentType: nil, lookupTitle: nil, base: nil, maxBytes: budget)
        #expect(blob.count <= budget)
        let data = try #require(EpisodeFeedData(blob))
        #expect(data.entries.count == 5000, "\(data.entries.count) kept in \(blob.count) bytes")
        #expect(!data.truncated)
        var ids: [String] = []
        var cursor: EpisodeCursor?
        var pages = 0
        repeat {
            let body = json(try #require(data.page(podcastID: 42, limit: 500, since: nil, cursor: cursor)).body)
            #expect((body["page"] as? [String: Any])?["total"] as? Int == 5000 && body["truncated"] as? Bool == false, "\(body["page"] ?? "")")
            ids += (body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = ((body["page"] as? [String: Any])?["nextCursor"] as? String).flatMap { try? EpisodeCursor.decode($0, scope: "42") }
            pages += 1
        } while cursor != nil && pages < 20
        #expect(ids == stride(from: 5000, to: 0, by: -1).map { "ep-\($0)" }, "\(ids.count) ids walked")
        // Its JSON is more than three times the budget: the blocks are what made it fit.
        #expect(data.entries.reduce(0) { $0 + $1.length + $1.chaptersLength } > 3 * budget)
        // Past the budget even compressed, the oldest are left out and the data says so.
        let small = try #require(EpisodeFeedData(try EpisodeFeedData.build(feed: feed, contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20)))
        #expect(small.truncated && small.entries.count < 5000 && small.entries.count > 500, "\(small.entries.count)")
        #expect(json(try #require(small.page(podcastID: 42, limit: 1, since: nil, cursor: nil)).body)["truncated"] as? Bool == true)
        // A feed of exactly the most kept is whole; one more item, and it says so.
        let three = Array(
            #"<rss version="2.0"><channel><item><guid>a</guid></item><item><guid>b</guid></item><item><guid>c</guid></item></channel></rss>"#.utf8)
        #expect(try RSSParser.parse(three, limit: 3).reachedLimit == false)
        #expect(try RSSParser.parse(three, limit: 2).reachedLimit == true)
    }
}
