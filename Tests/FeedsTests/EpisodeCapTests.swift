import Foundation
import Primitives
import TestSupport
import Testing

@testable import Feeds

/// Issue 67: what a cap leaves out (`maxEpisodes`, the byte budget) is the oldest episodes by
/// date, whatever order the feed lists them in; the episodes kept stay in the feed's order.
@Suite(.offPool) struct EpisodeCapTests {
    /// A serial show of `maxEpisodes` + 50 episodes listed oldest first: the newest is served,
    /// the oldest 50 are the ones left out, and the data says so.
    @Test func aFeedListedOldestFirstKeepsItsNewestPastTheCap() async throws {
        try await offPool { try Self.oldestFirstPastTheCap() }  // seconds of work: not on the test pool
    }

    static func oldestFirstPastTheCap() throws {
        let cap = EpisodeFeedData.maxEpisodes, count = cap + 50
        var xml =
            #"<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Serial</title>"#
            + "<itunes:type>serial</itunes:type>"
        for n in 1...count {
            xml += "<item><guid>ep-\(n)</guid><title>Episode \(n)</title><pubDate>\(Timestamp.format(1_500_000_000 + n * 86_400))</pubDate></item>"
        }
        let feed = Array((xml + "</channel></rss>").utf8)
        let data = try #require(EpisodeFeedData(try EpisodeFeedData.build(feed: feed, contentType: nil, lookupTitle: nil, base: nil, maxBytes: 8 << 20)))
        #expect(data.truncated)
        #expect(data.entries.count == cap)
        var ids: [String] = []
        var cursor: EpisodeCursor?
        var pages = 0
        repeat {
            let body = json(try #require(data.page(podcastID: 67, limit: 500, since: nil, cursor: cursor)).body)
            #expect((body["page"] as? [String: Any])?["total"] as? Int == cap && body["truncated"] as? Bool == true, "\(body["page"] ?? "")")
            ids += (body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = ((body["page"] as? [String: Any])?["nextCursor"] as? String).flatMap { try? EpisodeCursor.decode($0, scope: "67") }
            pages += 1
        } while cursor != nil && pages < 20
        #expect(ids.contains("ep-\(count)"), "the newest is served")
        #expect(!ids.contains("ep-1") && !ids.contains("ep-50") && ids.contains("ep-51"), "the oldest 50 are left out")
        #expect(ids == (51...count).map { "ep-\($0)" }, "\(ids.count) ids walked, from \(ids.first ?? "none") to \(ids.last ?? "none")")
        // `since` finds the newest too.
        let newest = json(try #require(data.page(podcastID: 67, limit: 10, since: 1_500_000_000 + (count - 1) * 86_400, cursor: nil)).body)
        #expect((newest["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["ep-\(count)"])
    }

    /// The parser's cap on a feed in no order: the newest by date are kept, in the feed's
    /// order; undated items count as the oldest; among equal dates the earlier in the feed stays.
    @Test func theParsersCapKeepsTheNewestByDate() throws {
        let items: [(guid: String, day: Int?)] = [
            ("a", 3), ("u1", nil), ("b", 9), ("c", 1), ("d", 7), ("e", 7), ("u2", nil), ("f", 5), ("g", 8),
        ]
        var xml = #"<rss version="2.0"><channel><title>Shuffled</title>"#
        for item in items {
            xml += "<item><guid>\(item.guid)</guid>"
            if let day = item.day { xml += "<pubDate>\(Timestamp.format(1_600_000_000 + day * 86_400))</pubDate>" }
            xml += "</item>"
        }
        let feed = Array((xml + "</channel></rss>").utf8)
        let expected: [Int: [String]] = [
            1: ["b"],
            3: ["b", "d", "g"],
            4: ["b", "d", "e", "g"],
            7: ["a", "b", "c", "d", "e", "f", "g"],
            8: ["a", "u1", "b", "c", "d", "e", "f", "g"],
            9: ["a", "u1", "b", "c", "d", "e", "u2", "f", "g"],
            20: ["a", "u1", "b", "c", "d", "e", "u2", "f", "g"],
        ]
        for (limit, ids) in expected {
            let parsed = try RSSParser.parse(feed, limit: limit)
            #expect(parsed.episodes.compactMap(\.id) == ids, "limit \(limit)")
            #expect(parsed.reachedLimit == (limit < items.count), "limit \(limit)")
        }
    }

    /// The heap against a sort, on dates with many ties: the same episodes, in the same order,
    /// and never more than the cap held.
    @Test func newestEpisodesMatchesASort() {
        var rng = SplitMix(seed: 67)
        for capacity in [0, 1, 2, 7, 100, 999, 1000, 1500] {
            var kept = NewestEpisodes(capacity: capacity)
            var all: [(date: Int64, order: Int)] = []
            for order in 0..<1000 {
                let date: Int64 = rng.next() % 10 == 0 ? EpisodeFeedData.undated : Int64(rng.next() % 300)
                var episode = Episode()
                episode.id = String(order)
                all.append((date, order))
                if kept.admits(date) { kept.offer(episode, date: date) } else { kept.leaveOut() }
            }
            let reference = all.sorted { $0.date != $1.date ? $0.date > $1.date : $0.order < $1.order }.prefix(capacity).map(\.order).sorted()
            let ids = kept.inFeedOrder().compactMap { $0.id.flatMap { Int($0) } }
            #expect(ids == reference, "capacity \(capacity)")
            #expect(kept.leftOut == (capacity < all.count), "capacity \(capacity)")
        }
    }

    /// Past the byte budget even compressed, the oldest by date are left out, not the feed's
    /// last: a feed listed oldest first keeps its newest, in the feed's order, and says so.
    @Test func theByteBudgetLeavesOutTheOldestOfAFeedListedOldestFirst() async throws {
        try await offPool { try Self.oldestFirstPastTheBudget() }
    }

    static func oldestFirstPastTheBudget() throws {
        var rng = SplitMix(seed: 670)
        let words = [
            "podcast", "episode", "today", "we", "talk", "about", "the", "server", "cache", "feeds", "and", "with", "our", "guest", "history",
            "interview", "listener", "questions", "news", "week", "show", "notes", "links", "sponsor", "thanks", "music", "archive", "science",
        ]
        let count = 600
        var xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Serial</title>"#
        for n in 1...count {
            var notes = "<p>"
            while notes.utf8.count < 1500 { notes += words[Int(rng.next() % UInt64(words.count))] + (rng.next() % 12 == 0 ? ".</p><p>" : " ") }
            xml += "<item><guid>ep-\(n)</guid><title>Episode \(n)</title><pubDate>\(Timestamp.format(1_300_000_000 + n * 86_400))</pubDate>"
            xml += "<description><![CDATA[\(notes)</p>]]></description></item>"
        }
        let feed = Array((xml + "</channel></rss>").utf8)
        let budget = 256 << 10
        let blob = try EpisodeFeedData.build(feed: feed, contentType: nil, lookupTitle: nil, base: nil, maxBytes: budget)
        #expect(blob.count <= budget)
        let data = try #require(EpisodeFeedData(blob))
        let kept = data.entries.count
        #expect(data.truncated && kept > 20 && kept < count, "\(kept) kept")
        var ids: [String] = []
        for i in 0..<kept {
            let episode = try #require(data.episode(i))
            ids += [json(Array(episode.json))["id"] as? String ?? "?"]
        }
        #expect(ids == ((count - kept + 1)...count).map { "ep-\($0)" }, "from \(ids.first ?? "none") to \(ids.last ?? "none")")
        let first = json(try #require(data.page(podcastID: 67, limit: 1, since: nil, cursor: nil)).body)
        #expect(first["truncated"] as? Bool == true)
        #expect((first["page"] as? [String: Any])?["total"] as? Int == kept)
    }
}
