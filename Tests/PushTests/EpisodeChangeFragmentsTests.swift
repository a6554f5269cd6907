import EpisodeSync
import Feeds
import Foundation
import Primitives
import TestSupport
import Testing

@testable import Push

/// Issue 66: one event per distinct change. A stream up to date with the version it was told
/// gets this turn's news from fragments worked out once: the same episodes, the same position
/// afterwards, as the general path (`EpisodeBatch` over its whole library) would give.
@Suite(.offPool) struct EpisodeChangeFragmentsTests {
    static func feed(_ episodes: [(guid: String, published: Int)]) -> [UInt8] {
        var xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title>"#
        for e in episodes.sorted(by: { $0.published > $1.published }) {
            xml += "<item><guid>\(e.guid)</guid><title>\(e.guid)</title><pubDate>\(Timestamp.format(e.published))</pubDate></item>"
        }
        return Array((xml + "</channel></rss>").utf8)
    }

    static func data(_ episodes: [(guid: String, published: Int)], after previous: EpisodeFeedData? = nil, at time: Int) throws -> EpisodeFeedData {
        try #require(
            EpisodeFeedData(
                try EpisodeFeedData.build(
                    feed: feed(episodes), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20, previous: previous, seenAt: time)))
    }

    static func json(_ event: [UInt8]) -> [String: Any] {
        let text = String(decoding: event, as: UTF8.self)
        let data = text.split(separator: "\n").first { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) } ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
    }

    @Test func aStreamUpToDateGetsTheSameNewsAsTheGeneralPath() throws {
        let a1 = try Self.data([("a1", 1000), ("a2", 2000)], at: 50_000)
        let b1 = try Self.data([("b1", 1500)], at: 50_000)
        let a2 = try Self.data([("a1", 1000), ("a2", 2000), ("a3", 3000)], after: a1, at: 50_100)
        let b2 = try Self.data([("b2", 2500)], after: b1, at: 50_100)  // b1 gone, b2 new
        var token = SyncToken()
        token[1] = SyncToken.Position(through: a1.changes.current)
        token[2] = SyncToken.Position(through: b1.changes.current)
        token[3] = SyncToken.Position(seq: 7, versionID: 7, ordinal: 0)  // another podcast of the library, not changed
        let now: [Int: EpisodeBatch.Status] = [1: .ok(a2), 2: .ok(b2), 3: .pending]
        let fragments = EpisodeChangeFragments(
            changes: [1: .from(a1.changes.current), 2: .from(b1.changes.current)], status: { now[$0] ?? .pending })
        guard case .event(let bytes, let next) = fragments.event(ids: [1, 2, 3], token: token, limit: 50, maxItemBytes: 64 << 10) else {
            Issue.record("an up-to-date stream takes the fragments")
            return
        }
        let event = Self.json(bytes)
        let items = (event["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(items == ["a3", "b2"], "newest first across the podcasts: \(event)")
        let podcasts = event["podcasts"] as? [[String: Any]] ?? []
        #expect(podcasts.map { $0["id"] as? Int } == [1, 2], "only the podcasts with news")
        #expect(podcasts.last?["removed"] as? [String] == ["b1"])
        #expect(event["syncToken"] as? String == next.encoded && String(decoding: bytes, as: UTF8.self).hasPrefix("id: \(next.encoded)\n"))
        // The general path from the same token: the same episodes, the same position after.
        let batch = EpisodeBatch(ids: [1, 2, 3], limit: 50, sync: token, maxItemBytes: 64 << 10)
        let selection = batch.select([.ok(a2), .ok(b2), .pending])
        #expect(Set(selection.items.map { [a2, b2][$0.podcast].id($0.entry) }) == Set(items))
        #expect(selection.token == next)

        // A stream elsewhere (behind the version told, or more news than its limit) takes the general path.
        var behind = token
        behind[1] = SyncToken.Position(seq: 1, versionID: 1, ordinal: 0)
        guard case .general = fragments.event(ids: [1, 2, 3], token: behind, limit: 50, maxItemBytes: 64 << 10) else {
            Issue.record("a position not the one told takes the general path")
            return
        }
        guard case .general = fragments.event(ids: [1, 2], token: token, limit: 1, maxItemBytes: 64 << 10) else {
            Issue.record("more news than the limit takes the general path")
            return
        }
        // A change that brings it nothing (a revalidation): nothing sent.
        let same = EpisodeChangeFragments(changes: [1: .from(a2.changes.current)], status: { now[$0] ?? .pending })
        var current = token
        current[1] = SyncToken.Position(through: a2.changes.current)
        guard case .nothing = same.event(ids: [1, 3], token: current, limit: 50, maxItemBytes: 64 << 10) else {
            Issue.record("no news: nothing sent")
            return
        }
    }
}
