import Feeds
import FoundationEssentials
import Primitives
import RedisTier
import Records

/// Feed ids' records in the store this deployment has: Redis when replicas share one (no
/// TTL, kept apart from the evictable entries), else SQLite in DATA_DIR on a single node.
/// A record is written once per process per id (every load of a feed id names it again).
struct FeedIDRecordStore: FeedIDRecords {
    enum Backend: Sendable {
        case redis(RedisRecords)
        case sqlite(SQLiteRecords)
    }

    static let kind = "feedid"
    let backend: Backend
    /// Ids written by this process; cleared past 65,536 (a rewrite costs one SET).
    private let written = Locked(Set<Int>())

    init(_ backend: Backend) { self.backend = backend }

    func url(of id: Int) async -> String? {
        let bytes: [UInt8]?
        switch backend {
        case .redis(let redis): bytes = await redis.value(Self.kind, String(id))
        case .sqlite(let sqlite): bytes = sqlite.value(Self.kind, String(id))
        }
        return bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    func keep(_ id: Int, url: String) {
        let first = written.withLock { w -> Bool in
            if w.count >= 65_536 { w.removeAll(keepingCapacity: true) }
            return w.insert(id).inserted
        }
        guard first else { return }
        let value = Array(url.utf8)
        switch backend {
        case .redis(let redis): Task.detached { await redis.put(Self.kind, String(id), value) }
        case .sqlite(let sqlite): sqlite.put(Self.kind, String(id), value, at: Int64(Timestamp.now()))
        }
    }
}

extension FeedIDRecordStore {
    /// The store for this configuration: Redis when it has one, else SQLite in `DATA_DIR`
    /// (created when missing). A directory that cannot be used is no reason not to serve: the
    /// records then last as long as the process, and the log says why.
    static func open(_ c: Configuration, redis: RedisConnection?, logger: Logger) -> FeedIDRecordStore? {
        if let redis { return FeedIDRecordStore(.redis(RedisRecords(connection: redis, prefix: c.redisKeyPrefix))) }
        guard let directory = c.dataDirectory else { return nil }
        let path = directory + "/records.sqlite"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let store = try SQLiteRecords(path: path)
            logger.info("records kept", [("path", .string(path)), ("feed_ids", .int(store.count(kind)))])
            return FeedIDRecordStore(.sqlite(store))
        } catch {
            logger.warn(
                "records not kept across restarts: DATA_DIR is not usable", [("path", .string(path)), ("error", .string(String(describing: error)))])
            return nil
        }
    }
}
