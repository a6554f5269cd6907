import EpisodeSync
/// The episodes of one podcast a client does not have yet, by its sync token's position.
public struct EpisodeUnseen: Sendable, Equatable {
    /// Indices into the data's entries, in stamp order (oldest change first; a version's
    /// changes in feed order, so a first sync sends the newest episodes first).
    public let indices: [Int]
    /// The position names a version this data's history does not hold (another lineage, or
    /// one forgotten): every episode is sent again, and the answer says so.
    public let resync: Bool
    /// The position is past this data (another replica has refreshed the feed since this one
    /// did): nothing to send, and the client's position stands.
    public let ahead: Bool
    /// Ids of the episodes removed from the feed since the position (none on a resync: the
    /// whole list replaces what the client holds).
    public let removed: [String]
    /// Where the client stood (nil: nowhere, or a resync): which of `indices` it had before.
    let from: EpisodeStamp?

    init(indices: [Int], resync: Bool, ahead: Bool, removed: [String] = [], from: EpisodeStamp? = nil) {
        self.indices = indices
        self.resync = resync
        self.ahead = ahead
        self.removed = removed
        self.from = from
    }
}

extension EpisodeFeedData {
    /// What a client at `position` (nil: none of this podcast) has not seen.
    public func unseen(since position: SyncToken.Position?) -> EpisodeUnseen {
        let current = changes.current
        guard let position, position.seq > 0 else { return EpisodeUnseen(indices: stampOrder { _ in true }, resync: position == nil, ahead: false) }
        guard let version = changes.version(position.seq), version.id == position.versionID else {
            if position.seq > current.seq { return EpisodeUnseen(indices: [], resync: false, ahead: true) }
            return EpisodeUnseen(indices: stampOrder { _ in true }, resync: true, ahead: false)
        }
        // Removals before the position that were let go cannot all be told: the whole list instead.
        guard position.seq >= horizon else { return EpisodeUnseen(indices: stampOrder { _ in true }, resync: true, ahead: false) }
        let after = EpisodeStamp(seq: position.seq, ordinal: position.ordinal)
        let complete = position.ordinal == 0
        // A version's removals are told until the client has all of it.
        let removed = tombstones.filter { t in t.seq > position.seq || (!complete && t.seq == position.seq) }.map(\.id)
        // Everything up to the position: through its version when complete, else up to its ordinal.
        let had = complete ? EpisodeStamp(seq: position.seq, ordinal: .max) : after
        return EpisodeUnseen(
            indices: stampOrder { s in complete ? s.seq > position.seq : s >= after }, resync: false, ahead: false, removed: removed, from: had)
    }

    /// Whether the client at `unseen`'s position had entry `i` before (in an earlier version):
    /// sent again, it is a change, not a new episode.
    public func wasHad(_ i: Int, by unseen: EpisodeUnseen) -> Bool {
        guard let from = unseen.from, entries.indices.contains(i) else { return false }
        return entries[i].firstSeen < from
    }

    /// Where a client at `old` stands once it has the first `delivered` of `unseen`.
    public func position(after delivered: Int, of unseen: EpisodeUnseen, from old: SyncToken.Position?) -> SyncToken.Position? {
        if unseen.ahead { return old }
        if delivered >= unseen.indices.count { return changes.current.seq == 0 ? nil : SyncToken.Position(through: changes.current) }
        guard delivered > 0 else { return unseen.resync ? nil : old }
        let last = entries[unseen.indices[delivered - 1]].stamp
        // Every stamp up to `last` is delivered: a position inside its version.
        guard let version = changes.version(last.seq) else { return old }  // cannot happen: the data was checked when read
        let (ordinal, overflow) = last.ordinal.addingReportingOverflow(1)
        return overflow ? SyncToken.Position(through: version) : SyncToken.Position(seq: last.seq, versionID: version.id, ordinal: ordinal)
    }

    /// Indices of the entries whose stamps pass `filter`, by stamp (feed order among equals).
    private func stampOrder(_ filter: (EpisodeStamp) -> Bool) -> [Int] {
        var picked = entries.indices.filter { filter(entries[$0].stamp) }
        picked.sort { a, b in entries[a].stamp != entries[b].stamp ? entries[a].stamp < entries[b].stamp : a < b }
        return picked
    }
}
