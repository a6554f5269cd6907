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
        let after = EpisodeStamp(seq: position.seq, ordinal: position.ordinal)
        let complete = position.ordinal == 0
        return EpisodeUnseen(
            indices: stampOrder { s in complete ? s.seq > position.seq : s >= after }, resync: false, ahead: false)
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
