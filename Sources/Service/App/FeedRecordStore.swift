import EpisodeSync
import Feeds
import FoundationEssentials
import Observability
import Primitives
import RedisTier
import Records

/// Which feed each podcast reads, in the store this deployment has: Redis when replicas
/// share one (no TTL, kept apart from the evictable entries), else SQLite in DATA_DIR on a
/// single node. Four kinds: `podcast` (id → feed URL), `feed` (feed URL → the ids reading
/// it: a Redis set, or SQLite keys `url|id`), `history` (id → its `EpisodeHistory`, written
/// when it changes, never behind the one kept) and `library` (a `LibraryHandle` by its name,
/// kept 30 days from its last use). Each id–URL pair is written once in ten minutes
/// (every read of a feed names it again).
struct FeedRecordStore: FeedRecords {
    enum Backend: Sendable {
        case redis(RedisRecords)
        case sqlite(SQLiteRecords)
    }

    static let podcastKind = "podcast", feedKind = "feed", historyKind = "history", libraryKind = "library"
    /// Podcasts one feed URL names at most (directory entries and feed ids of one show).
    static let maxPodcastsPerFeed = 32
    let backend: Backend
    /// (id, url) pairs written by this process: forgotten past 65,536 or after 10 minutes, so
    /// a store that lost them (a Redis restarted empty) has them again from the next reads.
    private let written = Locked((pairs: Set<String>(), since: NativeThread.monotonicSeconds()))
    /// When lapsed library handles were last forgotten (SQLite; Redis lets them expire).
    private let lastPurge = Locked(0)

    /// What this process read itself, by id and by URL (at most 65,536 ids, then begun again):
    /// answers while Redis is down or has just come back empty, before the records are
    /// written again.
    private let seenHere = Locked((urls: [Int: String](), podcasts: [String: Set<Int>]()))

    init(_ backend: Backend) { self.backend = backend }

    func url(of id: Int) async -> String? {
        let bytes: [UInt8]?
        switch backend {
        case .redis(let redis): bytes = await redis.value(Self.podcastKind, String(id))
        case .sqlite(let sqlite): bytes = sqlite.value(Self.podcastKind, String(id))
        }
        return bytes.map { String(decoding: $0, as: UTF8.self) } ?? seenHere.withLock { $0.urls[id] }
    }

    func podcasts(reading url: String) async -> [Int] {
        let kept: [Int]
        switch backend {
        case .redis(let redis):
            kept = await redis.members(Self.feedKind, url, limit: Self.maxPodcastsPerFeed).compactMap { Int(String(decoding: $0, as: UTF8.self)) }
        case .sqlite(let sqlite):
            kept = sqlite.keys(Self.feedKind, prefix: url + "|", limit: Self.maxPodcastsPerFeed).compactMap { Int($0.split(separator: "|").last ?? "") }
        }
        let here = seenHere.withLock { $0.podcasts[url] ?? [] }
        return Array(Set(kept).union(here).prefix(Self.maxPodcastsPerFeed)).sorted()
    }

    func storeEmptied() {
        guard case .redis(let redis) = backend else { return }
        written.withLock { $0.pairs.removeAll(keepingCapacity: true) }
        let pairs = seenHere.withLock { $0.urls }
        Task.detached {
            // One after another: the tier has just come back, and apps' requests share its connection.
            for (id, url) in pairs {
                let key = String(id)
                await redis.put(Self.podcastKind, key, Array(url.utf8))
                await redis.add(Self.feedKind, url, member: Array(key.utf8))
            }
        }
    }

    func keep(_ id: Int, url: String) {
        seenHere.withLock { seen in
            guard seen.urls[id] != url else { return }
            if seen.urls.count >= 65_536 { seen = ([:], [:]) }
            if let old = seen.urls[id] {
                seen.podcasts[old]?.remove(id)
                if seen.podcasts[old]?.isEmpty == true { seen.podcasts[old] = nil }
            }
            seen.urls[id] = url
            if (seen.podcasts[url]?.count ?? 0) < Self.maxPodcastsPerFeed { seen.podcasts[url, default: []].insert(id) }
        }
        let now = NativeThread.monotonicSeconds()
        let first = written.withLock { w -> Bool in
            if w.pairs.count >= 65_536 || now - w.since > 600 {
                w.pairs.removeAll(keepingCapacity: true)
                w.since = now
            }
            return w.pairs.insert("\(id) \(url)").inserted
        }
        guard first else { return }
        let value = Array(url.utf8), key = String(id)
        switch backend {
        case .redis(let redis):
            Task.detached {
                await redis.put(Self.podcastKind, key, value)
                await redis.add(Self.feedKind, url, member: Array(key.utf8))
            }
        case .sqlite(let sqlite):
            let now = Int64(Timestamp.now())
            sqlite.put(Self.podcastKind, key, value, at: now)
            sqlite.put(Self.feedKind, url + "|" + key, [], at: now)
        }
    }
}

extension FeedRecordStore {
    func library(_ name: String) async -> [UInt8]? {
        switch backend {
        case .redis(let redis): await redis.value(Self.libraryKind, name)
        case .sqlite(let sqlite): sqlite.value(Self.libraryKind, name)
        }
    }

    func keepLibrary(_ name: String, _ record: [UInt8]) async -> Bool {
        switch backend {
        case .redis(let redis): return await redis.put(Self.libraryKind, name, record, expiringIn: LibraryHandle.lifetimeSeconds)
        case .sqlite(let sqlite):
            let now = Timestamp.now()
            // Handles lapse 30 days after their last use: forgotten here at most once an hour.
            if lastPurge.withLock({ last in
                guard now - last >= 3600 else { return false }
                last = now
                return true
            }) {
                sqlite.forget(Self.libraryKind, writtenBefore: Int64(now - LibraryHandle.lifetimeSeconds))
            }
            return sqlite.put(Self.libraryKind, name, record, at: Int64(now))
        }
    }

    func history(of id: Int) async -> [UInt8]? {
        switch backend {
        case .redis(let redis): await redis.orderedValue(Self.historyKind, String(id))
        case .sqlite(let sqlite): sqlite.value(Self.historyKind, String(id))
        }
    }

    func keepHistory(_ id: Int, seq: UInt32, _ record: [UInt8]) {
        switch backend {
        case .redis(let redis): Task.detached { await redis.putUnlessBehind(Self.historyKind, String(id), record, order: seq) }
        case .sqlite(let sqlite): sqlite.putUnlessBehind(Self.historyKind, String(id), record, order: Int64(seq))
        }
    }
}

extension FeedRecordStore {
    /// The store for this configuration: Redis when it has one, else SQLite in `DATA_DIR`
    /// (created when missing). A directory that cannot be used is no reason not to serve: the
    /// records then last as long as the process, and the log says why.
    static func open(_ c: Configuration, redis: RedisConnection?, logger: Logger) -> FeedRecordStore? {
        if let redis { return FeedRecordStore(.redis(RedisRecords(connection: redis, prefix: c.redisKeyPrefix))) }
        guard let directory = c.dataDirectory else { return nil }
        let path = directory + "/records.sqlite"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let store = try SQLiteRecords(path: path)
            // Library handles lapse 30 days after their last use.
            store.forget(libraryKind, writtenBefore: Int64(Timestamp.now() - LibraryHandle.lifetimeSeconds))
            logger.info("records kept", [("path", .string(path)), ("podcasts", .int(store.count(podcastKind)))])
            return FeedRecordStore(.sqlite(store))
        } catch {
            logger.warn(
                "records not kept across restarts: DATA_DIR is not usable", [("path", .string(path)), ("error", .string(String(describing: error)))])
            return nil
        }
    }
}
