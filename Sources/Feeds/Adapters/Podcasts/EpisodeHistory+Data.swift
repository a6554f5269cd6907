import EpisodeSync

extension EpisodeHistory {
    /// The history `data` carries.
    public init(_ data: EpisodeFeedData) {
        var known: [UInt64: Known] = [:]
        known.reserveCapacity(data.entries.count)
        for (i, e) in data.entries.enumerated() where known[e.anchor] == nil { known[e.anchor] = Known(firstSeen: e.firstSeen, id: data.id(i)) }
        self.init(
            log: data.changes, stamps: Dictionary(data.entries.map { ($0.contentHash, $0.stamp) }, uniquingKeysWith: { a, _ in a }), known: known,
            tombstones: data.tombstones, horizon: data.horizon)
    }

}
