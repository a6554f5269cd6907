/// A podcast's change history as a record: its `EpisodeChangeLog` and the stamp of each
/// episode it holds (by content hash). The cached data carries the same, but a cache entry may
/// vanish (evicted, a Redis restarted empty, a restart of a single node) and its key changes
/// with every release (the schema fingerprint); the record is kept by the podcast's id where
/// records last (`FeedRecords`), so a refresh after any of those stamps the feed from where
/// the apps' tokens stand instead of from nothing (which would resync every library).
///
/// Layout (little-endian; read back like network input): `FPEH` · version · u16 version count ·
/// per version {u32 seq, u32 id, u32 changes} · u32 episode count · per episode {u64 content
/// hash, u32 seq, u32 ordinal}.
public struct EpisodeHistory: Sendable, Equatable {
    public let log: EpisodeChangeLog
    public let stamps: [UInt64: EpisodeStamp]

    static let magic = Array("FPEH".utf8)
    static let version: UInt8 = 1

    public init(log: EpisodeChangeLog, stamps: [UInt64: EpisodeStamp]) {
        self.log = log
        self.stamps = stamps
    }

    /// The history `data` carries.
    public init(_ data: EpisodeFeedData) {
        self.init(log: data.changes, stamps: Dictionary(data.entries.map { ($0.contentHash, $0.stamp) }, uniquingKeysWith: { a, _ in a }))
    }

    /// The one of two histories a refresh continues: the further along (another replica, or
    /// another release beside this one, may have made versions this replica's data has not).
    public static func newest(_ a: EpisodeHistory?, _ b: EpisodeHistory?) -> EpisodeHistory? {
        guard let a, let b else { return a ?? b }
        return b.log.current.seq > a.log.current.seq ? b : a
    }

    public var encoded: [UInt8] {
        var out = Self.magic + [Self.version]
        out.reserveCapacity(out.count + 6 + 12 * log.versions.count + 16 * stamps.count)
        EpisodeFeedData.append(UInt64(log.versions.count), 2, to: &out)
        for v in log.versions {
            EpisodeFeedData.append(UInt64(v.seq), 4, to: &out)
            EpisodeFeedData.append(UInt64(v.id), 4, to: &out)
            EpisodeFeedData.append(UInt64(v.changes), 4, to: &out)
        }
        EpisodeFeedData.append(UInt64(stamps.count), 4, to: &out)
        // By hash: the same history always encodes to the same bytes (an unchanged one is not rewritten).
        for (hash, stamp) in stamps.sorted(by: { $0.key < $1.key }) {
            EpisodeFeedData.append(hash, 8, to: &out)
            EpisodeFeedData.append(UInt64(stamp.seq), 4, to: &out)
            EpisodeFeedData.append(UInt64(stamp.ordinal), 4, to: &out)
        }
        return out
    }

    /// The history in `record`, or nil when it is not one `encoded` wrote (damaged, made up,
    /// another version): every count bounded, versions ascending, every stamp in its version.
    public init?(record: [UInt8]) {
        var r = EpisodeFeedData.Reader(bytes: record)
        guard r.take(4).map(Array.init) == Self.magic, r.take(1)?.first == Self.version, let versionCount = r.int(2),
            versionCount <= EpisodeFeedData.maxEpisodes + EpisodeChangeLog.keptVersions
        else { return nil }
        var versions: [EpisodeChangeLog.Version] = []
        versions.reserveCapacity(versionCount)
        for _ in 0..<versionCount {
            guard let seq = r.uint32(), let id = r.uint32(), let changes = r.uint32(), seq > (versions.last?.seq ?? 0) else { return nil }
            versions.append(EpisodeChangeLog.Version(seq: seq, id: id, changes: changes))
        }
        let log = EpisodeChangeLog(versions: versions)
        guard let count = r.int(4), count <= EpisodeFeedData.maxEpisodes, r.rest.count == 16 * count else { return nil }
        var stamps: [UInt64: EpisodeStamp] = [:]
        stamps.reserveCapacity(count)
        for _ in 0..<count {
            guard let hash = r.uint(8), let seq = r.uint32(), let ordinal = r.uint32(), let version = log.version(seq), ordinal < version.changes
            else { return nil }
            stamps[hash] = EpisodeStamp(seq: seq, ordinal: ordinal)
        }
        self.init(log: log, stamps: stamps)
    }
}
