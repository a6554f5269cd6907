import Primitives

/// A podcast's change history: its `EpisodeChangeLog`, the stamp of each episode it holds (by
/// content hash), when each episode was first seen and its id (by anchor), and the episodes
/// removed since (tombstones). The cached data carries the same, but a cache entry may vanish
/// (evicted, a Redis restarted empty, a restart of a single node) and its key changes with
/// every release (the schema fingerprint); the record is kept by the podcast's id where records
/// last (`FeedRecords`), so a refresh after any of those stamps the feed from where the apps'
/// tokens stand instead of from nothing (which would resync every library).
///
/// Record layout (little-endian; read back like network input): `FPEH` · version · u16 version
/// count · per version {u32 seq, u32 id, u32 changes} · u32 stamp count · per stamp {u64 content
/// hash, u32 seq, u32 ordinal} · u32 known count · per episode {u64 anchor, u32 first seq, u32
/// first ordinal, u16 id length, id} · u32 horizon · u16 tombstone count · per tombstone {u32
/// seq, u16 id length, id}.
public struct EpisodeHistory: Sendable, Equatable {
    /// What the history knows of an episode the feed lists: when it was first seen (its first
    /// stamp: an app past it had the episode, in some version) and its id (empty: none).
    public struct Known: Sendable, Equatable {
        public let firstSeen: EpisodeStamp
        public let id: String

        public init(firstSeen: EpisodeStamp, id: String) {
            self.firstSeen = firstSeen
            self.id = id
        }
    }

    /// An episode the feed stopped listing, told to apps whose position is before `seq`.
    public struct Tombstone: Sendable, Equatable {
        public let seq: UInt32
        public let id: String
    }

    public let log: EpisodeChangeLog
    public let stamps: [UInt64: EpisodeStamp]
    public let known: [UInt64: Known]
    /// Oldest first; at most `maxTombstones`.
    public let tombstones: [Tombstone]
    /// Tombstones of versions up to this were let go: a position before it cannot be told
    /// every removal since, and is sent the whole list (resync).
    public let horizon: UInt32

    package static let magic = Array("FPEH".utf8)
    package static let version: UInt8 = 2
    /// Removals remembered per podcast (a feed that lists only its newest 100 drops one a week).
    public static let maxTombstones = 256
    /// The most episodes a podcast's data keeps (and so a history knows).
    public static let maxEpisodes = 5_000
    /// Longest id kept (a guid is an opaque string; a longer one is not told as removed).
    public static let maxIDBytes = 2048

    public init(log: EpisodeChangeLog, stamps: [UInt64: EpisodeStamp], known: [UInt64: Known] = [:], tombstones: [Tombstone] = [], horizon: UInt32 = 0) {
        self.log = log
        self.stamps = stamps
        self.known = known
        self.tombstones = tombstones
        self.horizon = horizon
    }

    /// The one of two histories a refresh continues: the further along (another replica, or
    /// another release beside this one, may have made versions this replica's data has not).
    public static func newest(_ a: EpisodeHistory?, _ b: EpisodeHistory?) -> EpisodeHistory? {
        guard let a, let b else { return a ?? b }
        return b.log.current.seq > a.log.current.seq ? b : a
    }

    /// A refresh's episodes (in feed order: content hash, anchor, id) stamped after `previous`
    /// at `time`: their stamps and first-seen stamps, and the history that goes with them.
    /// Episodes `previous` knew that are not listed any more become tombstones (unless listed
    /// again); past `maxTombstones` the oldest go and the horizon moves past them.
    /// `stillListed`: the anchors of every episode the feed lists, those the data's budget left
    /// out too (an episode still in the feed is no removal; it is simply no longer kept).
    package static func continuing(
        _ previous: EpisodeHistory?, with episodes: [(hash: UInt64, anchor: UInt64, id: String)], stillListed: Set<UInt64>? = nil, at time: Int
    ) -> (stamps: [EpisodeStamp], firstSeen: [EpisodeStamp], history: EpisodeHistory) {
        let listed = stillListed ?? Set(episodes.map(\.anchor))
        let gone = (previous?.known ?? [:]).filter { !listed.contains($0.key) }.sorted { $0.key < $1.key }
        let (stamps, log) = EpisodeChangeLog.stamp(episodes.map(\.hash), removing: gone.map(\.key), after: previous, at: time)
        var firstSeen: [EpisodeStamp] = []
        firstSeen.reserveCapacity(episodes.count)
        var known: [UInt64: Known] = [:]
        known.reserveCapacity(episodes.count)
        for (i, e) in episodes.enumerated() {
            let first = previous?.known[e.anchor]?.firstSeen ?? known[e.anchor]?.firstSeen ?? stamps[i]
            firstSeen.append(first)
            if known[e.anchor] == nil { known[e.anchor] = Known(firstSeen: first, id: e.id) }
        }
        let ids = Set(episodes.map(\.id))
        var tombstones = (previous?.tombstones ?? []).filter { !ids.contains($0.id) }
        if log.current.seq > (previous?.log.current.seq ?? 0) {
            for (_, k) in gone where !k.id.isEmpty && !ids.contains(k.id) { tombstones.append(Tombstone(seq: log.current.seq, id: k.id)) }
        }
        var horizon = previous?.horizon ?? 0
        if tombstones.count > maxTombstones {
            let dropped = tombstones.prefix(tombstones.count - maxTombstones)
            horizon = max(horizon, dropped.map(\.seq).max() ?? 0)
            tombstones.removeFirst(dropped.count)
        }
        var byHash: [UInt64: EpisodeStamp] = [:]
        for (i, e) in episodes.enumerated() where byHash[e.hash] == nil { byHash[e.hash] = stamps[i] }
        return (stamps, firstSeen, EpisodeHistory(log: log, stamps: byHash, known: known, tombstones: tombstones, horizon: horizon))
    }

    public var encoded: [UInt8] {
        var out = Self.magic + [Self.version]
        out.reserveCapacity(out.count + 16 + 12 * log.versions.count + 16 * stamps.count + 40 * known.count)
        Self.append(log, to: &out)
        // By key: the same history always encodes to the same bytes (an unchanged one is not rewritten).
        LittleEndianBytes.append(UInt64(stamps.count), 4, to: &out)
        for (hash, stamp) in stamps.sorted(by: { $0.key < $1.key }) {
            LittleEndianBytes.append(hash, 8, to: &out)
            LittleEndianBytes.append(UInt64(stamp.seq), 4, to: &out)
            LittleEndianBytes.append(UInt64(stamp.ordinal), 4, to: &out)
        }
        LittleEndianBytes.append(UInt64(known.count), 4, to: &out)
        for (anchor, k) in known.sorted(by: { $0.key < $1.key }) {
            LittleEndianBytes.append(anchor, 8, to: &out)
            LittleEndianBytes.append(UInt64(k.firstSeen.seq), 4, to: &out)
            LittleEndianBytes.append(UInt64(k.firstSeen.ordinal), 4, to: &out)
            Self.append(k.id, to: &out)
        }
        Self.append(tombstones: tombstones, horizon: horizon, to: &out)
        return out
    }

    /// A log's versions as data and records keep them: u16 count · {u32 seq, u32 id, u32 changes}.
    package static func append(_ log: EpisodeChangeLog, to out: inout [UInt8]) {
        LittleEndianBytes.append(UInt64(log.versions.count), 2, to: &out)
        for v in log.versions {
            LittleEndianBytes.append(UInt64(v.seq), 4, to: &out)
            LittleEndianBytes.append(UInt64(v.id), 4, to: &out)
            LittleEndianBytes.append(UInt64(v.changes), 4, to: &out)
        }
    }

    /// The versions `append(_:to:)` wrote, bounded and ascending; nil when they are not.
    package static func readLog(_ r: inout LittleEndianBytes.Reader) -> EpisodeChangeLog? {
        guard let count = r.int(2), count <= Self.maxEpisodes + EpisodeChangeLog.keptVersions else { return nil }
        var versions: [EpisodeChangeLog.Version] = []
        versions.reserveCapacity(count)
        for _ in 0..<count {
            guard let seq = r.uint32(), let id = r.uint32(), let changes = r.uint32(), seq > (versions.last?.seq ?? 0) else { return nil }
            versions.append(EpisodeChangeLog.Version(seq: seq, id: id, changes: changes))
        }
        return EpisodeChangeLog(versions: versions)
    }

    /// Removals as data and records keep them: u32 horizon · u16 count · {u32 seq, u16 id length, id}.
    package static func append(tombstones: [Tombstone], horizon: UInt32, to out: inout [UInt8]) {
        LittleEndianBytes.append(UInt64(horizon), 4, to: &out)
        LittleEndianBytes.append(UInt64(tombstones.count), 2, to: &out)
        for t in tombstones {
            LittleEndianBytes.append(UInt64(t.seq), 4, to: &out)
            append(t.id, to: &out)
        }
    }

    /// The removals `append(tombstones:horizon:to:)` wrote, bounded and in order; nil when they are not.
    package static func readTombstones(_ r: inout LittleEndianBytes.Reader) -> (tombstones: [Tombstone], horizon: UInt32)? {
        guard let horizon = r.uint32(), let count = r.int(2), count <= maxTombstones else { return nil }
        var tombstones: [Tombstone] = []
        tombstones.reserveCapacity(count)
        for _ in 0..<count {
            guard let seq = r.uint32(), seq >= (tombstones.last?.seq ?? 0), let length = r.int(2), length <= maxIDBytes, let id = r.take(length)
            else { return nil }
            tombstones.append(Tombstone(seq: seq, id: String(decoding: id, as: UTF8.self)))
        }
        return (tombstones, horizon)
    }

    /// An id after its length; one past `maxIDBytes` is kept as none (it is not told as removed).
    package static func append(_ id: String, to out: inout [UInt8]) {
        let bytes = id.utf8.count <= maxIDBytes ? Array(id.utf8) : []
        LittleEndianBytes.append(UInt64(bytes.count), 2, to: &out)
        out += bytes
    }

    /// The history in `record`, or nil when it is not one `encoded` wrote (damaged, made up,
    /// another version): every count bounded, versions ascending, every stamp in its version.
    public init?(record: [UInt8]) {
        var r = LittleEndianBytes.Reader(bytes: record)
        guard r.take(4).map(Array.init) == Self.magic, r.take(1)?.first == Self.version, let log = Self.readLog(&r) else { return nil }
        func stamp(_ seq: UInt32, _ ordinal: UInt32) -> EpisodeStamp? {
            guard let version = log.version(seq), ordinal < version.changes else { return nil }
            return EpisodeStamp(seq: seq, ordinal: ordinal)
        }
        guard let stampCount = r.int(4), stampCount <= Self.maxEpisodes, r.rest.count >= 16 * stampCount else { return nil }
        var stamps: [UInt64: EpisodeStamp] = [:]
        stamps.reserveCapacity(stampCount)
        for _ in 0..<stampCount {
            guard let hash = r.uint(8), let seq = r.uint32(), let ordinal = r.uint32(), let s = stamp(seq, ordinal) else { return nil }
            stamps[hash] = s
        }
        guard let knownCount = r.int(4), knownCount <= Self.maxEpisodes, r.rest.count >= 18 * knownCount else { return nil }
        var known: [UInt64: Known] = [:]
        known.reserveCapacity(knownCount)
        for _ in 0..<knownCount {
            // A first-seen stamp is only compared: it may name a version the log has let go.
            guard let anchor = r.uint(8), let seq = r.uint32(), let ordinal = r.uint32(), seq <= log.current.seq, let length = r.int(2),
                length <= Self.maxIDBytes, let id = r.take(length)
            else { return nil }
            known[anchor] = Known(firstSeen: EpisodeStamp(seq: seq, ordinal: ordinal), id: String(decoding: id, as: UTF8.self))
        }
        guard let (tombstones, horizon) = Self.readTombstones(&r) else { return nil }
        guard r.rest.isEmpty else { return nil }
        self.init(log: log, stamps: stamps, known: known, tombstones: tombstones, horizon: horizon)
    }
}
