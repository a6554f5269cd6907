import EpisodeSync
import Foundation
import Primitives
import TestSupport
import Testing

@testable import Feeds

/// Issue 55: a sync token, so an app never misses an episode whatever order feeds are
/// refreshed in. Each feed's data stamps its episodes with when FeedProxy first saw them.
@Suite(.offPool) struct EpisodeSyncTests {
    /// A feed with `episodes` (guid, publication time), newest first as feeds list them.
    static func feed(_ title: String, _ episodes: [(guid: String, published: Int)], notes: [String: String] = [:]) -> [UInt8] {
        SyntheticFeed.rss(title, episodes, notes: notes)
    }

    /// The data a refresh at `time` (Unix seconds) builds, after `previous`.
    static func data(_ body: [UInt8], after previous: EpisodeFeedData? = nil, at time: Int = 1_000) throws -> EpisodeFeedData {
        let blob = try EpisodeFeedData.build(
            feed: body, contentType: nil, lookupTitle: nil, base: nil, maxBytes: 8 << 20, previous: previous, seenAt: time)
        return try #require(EpisodeFeedData(blob))
    }

    static func json(_ bytes: [UInt8]) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]) ?? [:] }

    /// The ids of the items of a batch answer, and its sync token and next page.
    static func read(_ bytes: [UInt8]) -> (ids: [String], token: String?, next: String?, resync: [Int: Bool]) {
        let body = json(bytes)
        let ids = (body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let next = (body["page"] as? [String: Any])?["next"] as? String
        var resync: [Int: Bool] = [:]
        for p in body["podcasts"] as? [[String: Any]] ?? [] { if let id = p["id"] as? Int { resync[id] = p["resync"] as? Bool } }
        return (ids, body["syncToken"] as? String, next, resync)
    }

    static func batch(_ query: [(String, String)]) throws -> EpisodeBatch { try EpisodeBatch(QueryParameters(query)) }

    /// A batch's answer over these podcasts' states, read back.
    static func answer(_ request: EpisodeBatch, _ statuses: [EpisodeBatch.Status]) -> (ids: [String], token: String?, next: String?, resync: [Int: Bool]) {
        read(request.render(statuses, request.select(statuses)).body)
    }

    /// Issue 67: the history kept as a record reads back as it was written, continues the
    /// feed as the data it came from would (no cached data: a restart, a release), and a
    /// damaged or made-up record is refused, not misread.
    @Test func aHistoryRecordContinuesTheFeedAndDamageIsRefused() throws {
        let v1 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000)]), at: 50_000)
        let record = EpisodeHistory(v1).encoded
        let read = try #require(EpisodeHistory(record: record))
        #expect(read == EpisodeHistory(v1))
        // No data to replace, only the record: the known episodes keep their stamps, the new one is the next version.
        let blob = try EpisodeFeedData.build(
            feed: Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000)]), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 8 << 20,
            history: read, seenAt: 60_000)
        let v2 = try #require(EpisodeFeedData(blob))
        let fromRecord = v2.unseen(since: SyncToken.Position(through: v1.changes.current))
        #expect(!fromRecord.resync && fromRecord.indices.count == 1)
        #expect(v2.changes.versions.map(\.seq) == [50_000, 60_000])
        // The further along of the data and the record is continued.
        #expect(EpisodeHistory.newest(EpisodeHistory(v1), EpisodeHistory(v2)) == EpisodeHistory(v2))
        #expect(EpisodeHistory.newest(EpisodeHistory(v2), EpisodeHistory(v1)) == EpisodeHistory(v2))
        // Every cut and every flipped byte is refused or reads as a history whose stamps name its versions.
        for end in 0..<record.count { #expect(EpisodeHistory(record: Array(record.prefix(end))) == nil) }
        for i in record.indices {
            var damaged = record
            damaged[i] ^= 0x5A
            if let h = EpisodeHistory(record: damaged) {
                #expect(h.stamps.values.allSatisfy { s in h.log.version(s.seq).map { s.ordinal < $0.changes } == true })
            }
        }
        // A count far past what is there is refused before anything is reserved for it.
        var huge = Array("FPEH".utf8) + [1, 0xFF, 0xFF]
        huge += [UInt8](repeating: 0, count: 8)
        #expect(EpisodeHistory(record: huge) == nil)
    }

    /// Issue 67: removed episodes are told (RFC 6578 reports removed members, Graph's delta
    /// `@removed`), and a changed episode is told apart from a new one: per podcast, `removed`
    /// and `changed` ids, in the batch answer and the podcast's own.
    @Test func removedEpisodesAreToldAndAChangeIsToldApartFromANewOne() throws {
        let v1 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000)]), at: 50_000)
        let t1 = SyncToken.Position(through: v1.changes.current)
        // a3 gone, a2 edited, a4 new.
        let v2 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a4", 4000)], notes: ["a2": "edited"]), after: v1, at: 50_600)
        let u2 = v2.unseen(since: t1)
        #expect(!u2.resync && u2.removed == ["a3"])
        #expect(Set(u2.indices.map { v2.id($0) }) == ["a2", "a4"])
        #expect(u2.indices.filter { v2.wasHad($0, by: u2) }.map { v2.id($0) } == ["a2"])
        var token = SyncToken()
        token[7] = t1
        let answer = Self.json(
            try Self.batch([("podcasts", "7"), ("sync", token.encoded)]).render(
                [.ok(v2)], try Self.batch([("podcasts", "7"), ("sync", token.encoded)]).select([.ok(v2)])
            ).body)
        let podcast = (answer["podcasts"] as? [[String: Any]])?.first ?? [:]
        #expect(podcast["removed"] as? [String] == ["a3"] && podcast["changed"] as? [String] == ["a2"], "\(podcast)")
        let page = Self.json(try #require(v2.page(podcastID: 7, limit: 50, since: nil, cursor: nil, sync: token)).body)
        #expect(page["removed"] as? [String] == ["a3"] && page["changed"] as? [String] == ["a2"], "\(page)")
        // Past the change: nothing removed, nothing changed.
        let u2b = v2.unseen(since: SyncToken.Position(through: v2.changes.current))
        #expect(u2b.indices.isEmpty && u2b.removed.isEmpty)

        // A removal alone is a version: the client is told, and its token moves.
        let v3 = try Self.data(Self.feed("A", [("a2", 2000), ("a4", 4000)], notes: ["a2": "edited"]), after: v2, at: 51_000)
        #expect(v3.changes.current.seq == 51_000)
        let u3 = v3.unseen(since: SyncToken.Position(through: v2.changes.current))
        #expect(u3.indices.isEmpty && u3.removed == ["a1"] && !u3.resync)
        // From v1's token: both removals, once each.
        #expect(Set(v3.unseen(since: t1).removed) == ["a1", "a3"])
        // Listed again: not removed any more, and sent (as new: it was let go).
        let v4 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a4", 4000)], notes: ["a2": "edited"]), after: v3, at: 52_000)
        let u4 = v4.unseen(since: SyncToken.Position(through: v2.changes.current))
        #expect(u4.removed.isEmpty && u4.indices.map { v4.id($0) } == ["a1"])
        // The history record keeps what the data does.
        let record = try #require(EpisodeHistory(record: EpisodeHistory(v3).encoded))
        #expect(record == EpisodeHistory(v3) && record.tombstones.map(\.id) == ["a3", "a1"])
    }

    /// An edited episode keeps its first-seen stamp while its version is let go (the log keeps
    /// the latest 64 and those stamps name): the data and the record still read, and the edit
    /// is still told as a change. (Both readers refused them once that version was gone.)
    @Test func anEditedEpisodeOutlivesTheVersionItWasFirstSeenIn() throws {
        var episodes: [(guid: String, published: Int)] = [("a1", 1000), ("a2", 2000)]
        var data = try Self.data(Self.feed("A", episodes), at: 50_000)
        // Both edited: no episode's stamp names the first version any more, only their first-seen stamps.
        let edited = ["a1": "edited", "a2": "edited"]
        data = try Self.data(Self.feed("A", episodes, notes: edited), after: data, at: 50_001)
        for n in 0..<70 {
            episodes.append(("n\(n)", 3000 + n))
            data = try Self.data(Self.feed("A", episodes, notes: edited), after: data, at: 50_002 + n)
        }
        #expect(data.changes.version(50_000) == nil, "the first version is let go")
        #expect(EpisodeHistory(record: EpisodeHistory(data).encoded) != nil, "the record reads")
        let again = try Self.data(Self.feed("A", episodes, notes: ["a1": "edited again", "a2": "edited"]), after: data, at: 60_000)
        let u = again.unseen(since: SyncToken.Position(through: data.changes.current))
        #expect(u.indices.map { again.id($0) } == ["a1"] && u.indices.allSatisfy { again.wasHad($0, by: u) }, "a change, not a new episode")
    }

    /// An episode the feed still lists but the data's budget leaves out is no removal: apps are
    /// not told to drop it.
    @Test func anEpisodeLeftOutByTheBudgetIsNotRemoved() throws {
        // Notes that do not compress (each episode's its own pseudo-random letters): the budget must cut.
        var seed: UInt64 = 66
        func letters(_ n: Int) -> String {
            String(
                (0..<n).map { _ -> Character in
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return Character(UnicodeScalar(UInt8(97 + (seed >> 33) % 26)))
                })
        }
        let episodes = (0..<40).map { ("e\($0)", 1000 + $0) }
        let whole = try #require(
            EpisodeFeedData(
                try EpisodeFeedData.build(feed: Self.feed("A", episodes), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 8 << 20, seenAt: 50_000)))
        let noted = Self.feed("A", episodes, notes: Dictionary(uniqueKeysWithValues: episodes.map { ($0.0, letters(6000)) }))
        let cut = try #require(
            EpisodeFeedData(
                try EpisodeFeedData.build(feed: noted, contentType: nil, lookupTitle: nil, base: nil, maxBytes: 96 << 10, previous: whole, seenAt: 50_100)))
        #expect(cut.truncated && cut.entries.count < 40)
        #expect(cut.tombstones.isEmpty, "\(cut.tombstones.count) told removed")
    }

    /// Tombstones are bounded: past 256 removals the oldest go, and a token from before them
    /// is sent the whole list (resync) rather than left holding what was removed.
    @Test func aTokenOlderThanTheRemovalsKeptResyncs() throws {
        var data = try Self.data(Self.feed("A", (0..<300).map { ("e\($0)", 1000 + $0) }), at: 50_000)
        let old = SyncToken.Position(through: data.changes.current)
        for n in 0..<3 {
            // 100 episodes go each time.
            data = try Self.data(Self.feed("A", ((n + 1) * 100..<300).map { ("e\($0)", 1000 + $0) } + [("new\(n)", 9000 + n)]), after: data, at: 60_000 + n)
        }
        #expect(data.tombstones.count == EpisodeHistory.maxTombstones && data.horizon == 60_000)
        let far = data.unseen(since: old)
        #expect(far.resync && far.removed.isEmpty && far.indices.count == data.entries.count)
        let recent = data.unseen(since: SyncToken.Position(through: try #require(data.changes.version(60_002))))
        #expect(!recent.resync && recent.indices.isEmpty)
    }

    @Test func anEpisodeKeepsItsStampUntilItChanges() throws {
        let v1 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000)]), at: 50_000)
        #expect(v1.changes.versions.map(\.seq) == [50_000])
        #expect(v1.entries.map(\.stamp) == [EpisodeStamp(seq: 50_000, ordinal: 0), EpisodeStamp(seq: 50_000, ordinal: 1)])
        // A new episode, and a2's notes edited: both are the next version's changes; a1 keeps its stamp.
        let v2 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000)], notes: ["a2": "edited"]), after: v1, at: 50_600)
        #expect(v2.changes.versions.map(\.seq) == [50_000, 50_600])
        #expect(
            v2.entries.map(\.stamp) == [EpisodeStamp(seq: 50_600, ordinal: 0), EpisodeStamp(seq: 50_600, ordinal: 1), EpisodeStamp(seq: 50_000, ordinal: 1)])
        // Two versions in one second (or a clock that went back) still number upwards.
        let quick = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a9", 9000)]), after: v1, at: 40_000)
        #expect(quick.changes.current.seq == 50_001)
        // The same feed again: no new version.
        let same = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000)], notes: ["a2": "edited"]), after: v2, at: 51_000)
        #expect(same.changes == v2.changes.retaining(same.entries.map(\.stamp)))
        #expect(same.changes.current == v2.changes.current)
        // A shorter one: a version of no changes (its removal is news), the stamps unchanged.
        let v3 = try Self.data(Self.feed("A", [("a2", 2000), ("a3", 3000)], notes: ["a2": "edited"]), after: v2, at: 51_000)
        #expect(v3.changes.current.seq == 51_000 && v3.changes.current.changes == 0)
        #expect(v3.entries.map(\.stamp) == [EpisodeStamp(seq: 50_600, ordinal: 0), EpisodeStamp(seq: 50_600, ordinal: 1)])
    }

    /// Replicas that build the same feed from the same parent (or from nothing) agree on
    /// its history, so a token from one is followed by the other.
    @Test func theSameChangeMadeTwiceIsTheSameVersion() throws {
        let body = Self.feed("A", [("a1", 1000), ("a2", 2000)])
        let one = try Self.data(body), other = try Self.data(body)
        #expect(one.changes == other.changes)
        let grown = Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000)])
        #expect(try Self.data(grown, after: one).changes == (try Self.data(grown, after: other)).changes)
        // Another change from the same parent is another version: a token from it is not followed here.
        let elsewhere = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("b9", 3000)]), after: one)
        let here = try Self.data(grown, after: one)
        #expect(elsewhere.changes.current.seq == here.changes.current.seq && elsewhere.changes.current.id != here.changes.current.id)
        let unseen = here.unseen(since: SyncToken.Position(through: elsewhere.changes.current))
        #expect(unseen.resync && unseen.indices.count == 3)
    }

    /// The issue's case: podcast B's 01:03 episode arrives first, podcast A's 01:00 one a
    /// refresh later. `since` (the newest date seen) loses A's; the sync token does not.
    @Test func anEpisodeDatedBeforeOneAlreadySeenIsStillSent() throws {
        var a = try Self.data(Self.feed("A", [("a1", 1000)]))
        var b = try Self.data(Self.feed("B", [("b1", 1100)]))
        let ids = [(String(11)), String(22)].joined(separator: ",")
        let first = try Self.batch([("podcasts", ids)])
        var seen = Self.answer(first, [.ok(a), .ok(b)])
        #expect(Set(seen.ids) == ["a1", "b1"])
        // B publishes 01:03 and is refreshed; A is not yet.
        b = try Self.data(Self.feed("B", [("b1", 1100), ("b2", 3780)]), after: b)
        var request = try Self.batch([("podcasts", ids), ("sync", try #require(seen.token))])
        seen = Self.answer(request, [.ok(a), .ok(b)])
        #expect(seen.ids == ["b2"])
        // A's 01:00 episode, dated before b2, comes with A's later refresh.
        a = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 3600)]), after: a)
        request = try Self.batch([("podcasts", ids), ("sync", try #require(seen.token))])
        seen = Self.answer(request, [.ok(a), .ok(b)])
        #expect(seen.ids == ["a2"])
        // Nothing new: nothing sent, and the token stands.
        let token = seen.token
        request = try Self.batch([("podcasts", ids), ("sync", try #require(token))])
        seen = Self.answer(request, [.ok(a), .ok(b)])
        #expect(seen.ids.isEmpty && seen.token == token && seen.next == nil)
        // What `since` would have done with the newest date the app had seen (b2's).
        let bySince = try Self.batch([("podcasts", ids), ("since", "3780")])
        #expect(Self.answer(bySince, [.ok(a), .ok(b)]).ids.isEmpty)
    }

    /// Changes larger than a page are walked through `page.next`: every episode once, the
    /// newest heads first, and the last token says the client has everything.
    @Test func aLongChangeListIsWalkedPageByPageWithoutGapsOrRepeats() throws {
        let a0 = try Self.data(Self.feed("A", [("a0", 10)]))
        let b0 = try Self.data(Self.feed("B", [("b0", 20)]))
        let ids = "11,22"
        let first = try Self.batch([("podcasts", ids)])
        let start = try #require(Self.answer(first, [.ok(a0), .ok(b0)]).token)
        let a = try Self.data(Self.feed("A", [("a0", 10)] + (1...7).map { ("a\($0)", 100 * $0) }), after: a0)
        let b = try Self.data(Self.feed("B", [("b0", 20)] + (1...5).map { ("b\($0)", 100 * $0 + 50) }), after: b0)
        var query: [(String, String)] = [("podcasts", ids), ("limit", "3"), ("sync", start)]
        var got: [String] = []
        var pages = 0
        var last: String?
        while pages < 20 {
            let request = try Self.batch(query)
            let page = Self.answer(request, [.ok(a), .ok(b)])
            got += page.ids
            pages += 1
            last = page.token
            guard let next = page.next else { break }
            // page.next is the whole path and query: what an app follows.
            let items = try #require(URLComponents(string: next)?.queryItems)
            query = items.map { ($0.name, $0.value ?? "") }
        }
        #expect(pages == 4)
        #expect(got.count == 12 && Set(got).count == 12)
        // The newest changes come first.
        #expect(Array(got.prefix(3)) == ["a7", "a6", "b5"])
        let done = try Self.batch([("podcasts", ids), ("sync", try #require(last))])
        #expect(Self.answer(done, [.ok(a), .ok(b)]).ids.isEmpty)
    }

    /// Issue 67: an event stream's pages are bounded in bytes, not only in episodes: 60
    /// episodes of 8 KB notes come 64 KiB of JSON at a time (a slow reader always takes a whole
    /// page within its 256 KiB bound), each once, none missed, whatever `limit` says.
    @Test func anEventsPagesAreBoundedInBytesAndMissNothing() throws {
        let note = String(repeating: "Long show notes. ", count: 480)  // about 8 KB
        let episodes = (1...60).map { (guid: "e\($0)", published: 1_000 + $0) }
        let a = try Self.data(Self.feed("A", episodes, notes: Dictionary(uniqueKeysWithValues: episodes.map { ($0.guid, note) })))
        var token = SyncToken()
        var got: [String] = []
        var pages = 0
        while pages < 100 {
            let batch = EpisodeBatch(ids: [11], limit: 500, sync: token, maxItemBytes: 64 << 10)
            let selection = batch.select([.ok(a)])
            let body = batch.render([.ok(a)], selection).body
            let page = Self.read(body)
            guard !page.ids.isEmpty else { break }
            pages += 1
            #expect(body.count < 96 << 10, "page \(pages): \(body.count) bytes")
            got += page.ids
            token = try #require(selection.token)
        }
        #expect(pages >= 7, "\(pages) pages for ~480 KB of episodes")
        #expect(got.count == 60 && Set(got).count == 60)
    }

    /// Issue 67: the documented recovery from a token that cannot be used loses nothing: an
    /// empty `sync=` sends every podcast whole, page by page, each marked resync, and the last
    /// page's token then has nothing more.
    @Test func anEmptySyncSendsEveryPodcastWholeWithResync() throws {
        let a = try Self.data(Self.feed("A", (1...7).map { ("a\($0)", 100 * $0) }))
        let b = try Self.data(Self.feed("B", (1...5).map { ("b\($0)", 100 * $0 + 50) }))
        var query: [(String, String)] = [("podcasts", "11,22"), ("limit", "5"), ("sync", "")]
        var got: [String] = []
        var last: String?
        var first = true
        for _ in 0..<10 {
            let page = Self.answer(try Self.batch(query), [.ok(a), .ok(b)])
            if first { #expect(page.resync == [11: true, 22: true], "\(page.resync)") }
            first = false
            got += page.ids
            last = page.token
            guard let next = page.next else { break }
            query = try #require(URLComponents(string: next)?.queryItems).map { ($0.name, $0.value ?? "") }
        }
        #expect(got.count == 12 && Set(got).count == 12, "\(got)")
        #expect(Self.answer(try Self.batch([("podcasts", "11,22"), ("sync", try #require(last))]), [.ok(a), .ok(b)]).ids.isEmpty)
    }

    /// A token this data's history cannot follow (data rebuilt from nothing after a change)
    /// sends the podcast's whole list again, flagged; a token ahead of this replica's data
    /// (another replica refreshed later) sends nothing and keeps the client's position.
    @Test func anUnfollowableTokenResyncsAndOneAheadWaits() throws {
        let v1 = try Self.data(Self.feed("A", [("a1", 1000)]), at: 1_000)
        let v2 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000)]), after: v1, at: 2_000)
        let v3 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000)]), after: v2, at: 3_000)
        // Evicted everywhere, then read again from nothing, later.
        let rebuilt = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000)]), at: 4_000)
        let atV2 = SyncToken([5: SyncToken.Position(through: v2.changes.current)])
        let request = try Self.batch([("podcasts", "5"), ("sync", atV2.encoded)])
        let resent = Self.answer(request, [.ok(rebuilt)])
        #expect(Set(resent.ids) == ["a1", "a2", "a3"] && resent.resync[5] == true)
        let followed = Self.answer(request, [.ok(v3)])
        #expect(followed.ids == ["a3"] && followed.resync[5] == false)
        let ahead = Self.answer(request, [.ok(v1)])
        #expect(ahead.ids.isEmpty && ahead.token == atV2.encoded)
        // A podcast still loading keeps the client's position too.
        let pending = Self.answer(request, [.pending])
        #expect(pending.ids.isEmpty && pending.token == atV2.encoded)
    }

    @Test func aTokenRoundTripsAndAnythingElseIsRefused() throws {
        var token = SyncToken()
        token[1_200_361_736] = SyncToken.Position(seq: 3, versionID: 0xDEAD_BEEF, ordinal: 0)
        token[7] = SyncToken.Position(seq: UInt32.max, versionID: 1, ordinal: UInt32.max)
        token[999_999_999_999_999_999] = SyncToken.Position(seq: 1, versionID: 0, ordinal: 5)
        #expect(try SyncToken.decode(token.encoded) == token)
        #expect(try SyncToken.decode(SyncToken().encoded) == SyncToken())
        // A library of 200 stays well inside a request line.
        var library = SyncToken()
        for id in 0..<200 { library[1_000_000_000 + id * 7_919_113] = SyncToken.Position(seq: 4000, versionID: .max, ordinal: 4999) }
        #expect(library.encoded.utf8.count < 4096)
        #expect(throws: SyncToken.Refusal.invalid) { try SyncToken.decode("") }
        #expect(throws: SyncToken.Refusal.invalid) { try SyncToken.decode("not a token!") }
        var mangled = Array(token.encoded.utf8)
        mangled[6] = mangled[6] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: SyncToken.Refusal.invalid) { try SyncToken.decode(String(decoding: mangled, as: UTF8.self)) }
        // A well-formed token of another format version: expired (410), not invalid.
        var other: [UInt8] = [2, 0]
        LittleEndianBytes.append(SyncToken.check(other), 4, to: &other)
        #expect(throws: SyncToken.Refusal.expired) { try SyncToken.decode(Base64URL.encode(other)) }
        // Anything at all decodes or is refused; never a trap.
        var rng = SplitMix(seed: 55)
        for length in 0..<300 {
            var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if length > 4 {
                bytes[0] = 1
                let body = Array(bytes.dropLast(4))
                bytes = body
                LittleEndianBytes.append(SyncToken.check(body), 4, to: &bytes)
            }
            _ = try? SyncToken.decode(Base64URL.encode(bytes))
        }
    }

    @Test func syncTakesNoSinceOrCursorAndABadTokenIsA400() throws {
        let token = SyncToken().encoded
        #expect(throws: ClientError.self) { try Self.batch([("podcasts", "1"), ("sync", token), ("since", "100")]) }
        #expect(
            throws: ClientError.invalidParameter(
                "sync is not a token this service gave out; refresh with an empty sync= and follow page.next: every podcast comes whole, with resync")
        ) {
            try Self.batch([("podcasts", "1"), ("sync", "AAAA")])
        }
        var other: [UInt8] = [9, 0]
        LittleEndianBytes.append(SyncToken.check(other), 4, to: &other)
        do {
            _ = try Self.batch([("podcasts", "1"), ("sync", Base64URL.encode(other))])
            Issue.record("an expired token was taken")
        } catch let error as ClientError {
            #expect(error.status == 410 && error.code == "sync_token_expired")
        }
    }

    /// One podcast's sync answer: only its unseen episodes, in feed order, and a validator
    /// that names where it brings the client, so asking again with the token it gave is a
    /// 304 (the same ETag) until the feed changes.
    @Test func aPodcastsSyncAnswerNamesTheStateItBringsTheClientTo() throws {
        let v1 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000)]))
        let first = try #require(v1.page(podcastID: 5, limit: 10, since: nil, cursor: nil))
        let token = try SyncToken.decode(try #require(Self.json(first.body)["syncToken"] as? String))
        let v2 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000)]), after: v1)
        let changed = try #require(v2.page(podcastID: 5, limit: 10, since: nil, cursor: nil, sync: token))
        let body = Self.json(changed.body)
        #expect((body["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["a3"])
        let moved = try SyncToken.decode(try #require(body["syncToken"] as? String))
        let nothing = try #require(v2.page(podcastID: 5, limit: 10, since: nil, cursor: nil, sync: moved))
        #expect((Self.json(nothing.body)["items"] as? [Any])?.isEmpty == true)
        #expect(nothing.etag == changed.etag)
        #expect(nothing.body != changed.body)
        // Issue 69: the answer without sync that gave a token is one such answer too. The first
        // refresh with its token and its ETag is a 304, whatever the limit of either.
        let refreshed = try #require(v1.page(podcastID: 5, limit: 10, since: nil, cursor: nil, sync: token))
        #expect((Self.json(refreshed.body)["items"] as? [Any])?.isEmpty == true)
        #expect(refreshed.etag == first.etag && refreshed.body != first.body)
        #expect(v1.page(podcastID: 5, limit: 1, since: nil, cursor: nil)?.etag == first.etag)
        #expect(v2.page(podcastID: 5, limit: 10, since: nil, cursor: nil)?.etag == changed.etag)
        // A refresh that changed the channel only: the same token, another validator (the answer shows it).
        let retitled = try Self.data(Self.feed("Renamed", [("a1", 1000), ("a2", 2000)]), after: v1)
        let renamed = try #require(retitled.page(podcastID: 5, limit: 10, since: nil, cursor: nil, sync: token))
        #expect(Self.json(renamed.body)["syncToken"] as? String == token.encoded && renamed.etag != first.etag)
        // Asked again once the feed changed: another validator.
        let v3 = try Self.data(Self.feed("A", [("a1", 1000), ("a2", 2000), ("a3", 3000), ("a4", 4000)]), after: v2)
        #expect(v3.page(podcastID: 5, limit: 10, since: nil, cursor: nil, sync: moved)?.etag != nothing.etag)
        // A page reached by a cursor names no position: the first page's stands.
        let paged = try #require(v2.page(podcastID: 5, limit: 1, since: nil, cursor: nil))
        let cursorText = try #require((Self.json(paged.body)["page"] as? [String: Any])?["nextCursor"] as? String)
        let second = try #require(v2.page(podcastID: 5, limit: 1, since: nil, cursor: try EpisodeCursor.decode(cursorText, scope: "5")))
        #expect(Self.json(second.body)["syncToken"] is NSNull)
        #expect(second.etag == ETag.strong(for: second.body))  // no state to name: its bytes
    }

    /// Data whose stamps name a version its log does not hold is damage: not read.
    @Test func aStampOutsideItsLogIsDamage() throws {
        let blob = try EpisodeFeedData.build(feed: Self.feed("A", [("a1", 1000)]), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20)
        #expect(EpisodeFeedData(blob) != nil)
        // The header is 27 bytes, then one version of 12, the block count and one block of 12; the
        // entry's stamp seq sits 32 bytes into it.
        var damaged = blob
        damaged[27 + 12 + 4 + 12 + 32] = 9
        #expect(EpisodeFeedData(damaged) == nil)
    }
}
