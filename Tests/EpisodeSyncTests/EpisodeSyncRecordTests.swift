import EpisodeSync
import Testing

/// What a position in a podcast's history is, on its own: tokens and histories come back from
/// apps and from records like network input, so every byte is checked and nothing traps.
@Suite struct EpisodeSyncRecordTests {
    static func history(episodes: Int, removedOf previous: EpisodeHistory? = nil, at time: Int = 1_000) -> EpisodeHistory {
        let listed = (0..<episodes).map { (hash: UInt64($0) &* 0x9E37_79B9_7F4A_7C15, anchor: UInt64($0) &+ 1, id: "guid-\($0)") }
        return EpisodeHistory.continuing(previous, with: listed, at: time).history
    }

    @Test func aTokenRoundTripsAndAnyOtherTextIsRefused() throws {
        let token = SyncToken([
            1_200_361_736: SyncToken.Position(seq: 7, versionID: 99, ordinal: 3), 42: SyncToken.Position(seq: 1, versionID: 5, ordinal: 0),
        ])
        let text = token.encoded
        #expect(try SyncToken.decode(text) == token)
        #expect(token.keeping([42]).positions.keys.sorted() == [42])
        // Every shorter text, and every text with one character changed, is refused (or, by
        // chance of the check, read as another valid token): never a trap.
        for length in 0..<text.count { #expect(throws: SyncToken.Refusal.self) { try SyncToken.decode(String(text.prefix(length))) } }
        var refused = 0
        let characters = Array(text)
        for i in characters.indices {
            var changed = characters
            changed[i] = changed[i] == "A" ? "B" : "A"
            if (try? SyncToken.decode(String(changed))) == nil { refused += 1 }
        }
        #expect(refused >= text.count - 1)
        #expect(throws: SyncToken.Refusal.self) { try SyncToken.decode(String(repeating: "A", count: 30_000)) }
    }

    /// A stream holds its token for as long as it is open: 16 bytes a podcast, a cut answer's
    /// ordinal (rare) kept apart, and every position, ordinal included, read back as written
    /// through updates, removals, `keeping` and the text.
    @Test func aPositionTakesSixteenBytesAndItsOrdinalIsNotLost() throws {
        #expect(SyncToken.bytesPerPosition == 16)
        let cut = SyncToken.Position(seq: 9, versionID: 77, ordinal: 4), whole = SyncToken.Position(seq: 3, versionID: 8, ordinal: 0)
        var token = SyncToken([5: whole, 999_999_999_999_999_999: cut, 12: cut])
        #expect(token[999_999_999_999_999_999] == cut && token[12] == cut && token[5] == whole)
        token[12] = whole  // ordinal back to 0
        token[5] = cut
        token[7] = cut
        token[999_999_999_999_999_999] = nil
        let expected: [Int: SyncToken.Position] = [5: cut, 7: cut, 12: whole]
        #expect(token.positions == expected)
        #expect(token == SyncToken(expected))
        #expect(try SyncToken.decode(token.encoded) == token)
        #expect(token.keeping([7, 12, 404]).positions == [7: cut, 12: whole])
        token[7] = nil
        token[999_999_999_999_999_999] = whole
        #expect(token == SyncToken([5: cut, 12: whole, 999_999_999_999_999_999: whole]))
    }

    @Test func aHistoryRecordRoundTripsAndDamageIsRefused() {
        let first = Self.history(episodes: 40)
        let later = Self.history(episodes: 30, removedOf: first, at: 2_000)
        #expect(later.log.current.seq > first.log.current.seq)
        #expect(later.tombstones.count == 10 && later.tombstones.allSatisfy { $0.seq == later.log.current.seq })
        let record = later.encoded
        #expect(EpisodeHistory(record: record) == later)
        #expect(later.encoded == record, "the same history always encodes to the same bytes")
        for length in 0..<record.count { #expect(EpisodeHistory(record: Array(record.prefix(length))) == nil) }
        for i in record.indices {
            var damaged = record
            damaged[i] ^= 0xFF
            _ = EpisodeHistory(record: damaged)  // refused or read: never a trap
        }
        #expect(EpisodeHistory.newest(first, later) == later && EpisodeHistory.newest(nil, first) == first)
    }

    /// Removals are remembered up to a bound; past it the oldest go and the horizon moves past
    /// them (a position before it resyncs instead of missing a removal).
    @Test func tombstonesAreBoundedAndTheHorizonMoves() {
        var history = Self.history(episodes: 400)
        for round in 1...3 { history = Self.history(episodes: 400 - 100 * round, removedOf: history, at: 1_000 + round) }
        #expect(history.tombstones.count == EpisodeHistory.maxTombstones)
        #expect(history.horizon > 0 && history.tombstones.allSatisfy { $0.seq >= history.horizon })
    }
}
