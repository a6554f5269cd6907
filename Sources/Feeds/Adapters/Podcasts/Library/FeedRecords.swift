import EpisodeSync
/// Which feed each podcast reads, kept for good: what an app was given must keep working
/// after a restart, a release or the cache's eviction. A feed id's URL is how the id is
/// answered at all (an OPML import is all feed ids); the URL → podcasts index is how a
/// publisher's ping by URL finds every podcast that reads the feed, on any replica, for
/// directory (iTunes) ids too. Records, not cache entries: the service keeps them in Redis with
/// replicas (no TTL, apart from the evictable entries) or in SQLite on one node. Each podcast's
/// change history (`EpisodeHistory`) is a record too: what the apps' sync tokens are positions in.
public protocol FeedRecords: Sendable {
    /// The normalised feed URL podcast `id` reads, when it was ever read (or named) here.
    func url(of id: Int) async -> String?
    /// The podcasts recorded as reading the feed at `url` (normalised); at most a few dozen.
    func podcasts(reading url: String) async -> [Int]
    /// Records that podcast `id` reads `url` (normalised); returns at once (the write may follow).
    func keep(_ id: Int, url: String)
    /// Podcast `id`'s change history as last kept (`EpisodeHistory.encoded`); nil when none is.
    func history(of id: Int) async -> [UInt8]?
    /// Keeps podcast `id`'s history, whose current version is `seq`, unless one further along
    /// is kept already (a replica that refreshed later, or a release beside this one); returns
    /// at once (the write may follow).
    func keepHistory(_ id: Int, seq: UInt32, _ record: [UInt8])
    /// The store lost what it held (a Redis restarted empty): what this process knows (the
    /// pairs it wrote lately) is written again; returns at once.
    func storeEmptied()
    /// The library handle named `name` (`LibraryHandle.record`), when one is kept.
    func library(_ name: String) async -> [UInt8]?
    /// Keeps a library handle for `LibraryHandle.lifetimeSeconds` from now; false when it could
    /// not be kept.
    func keepLibrary(_ name: String, _ record: [UInt8]) async -> Bool
}
