/// Where the feed ids this service gave out are kept for good: an app's library (an OPML
/// import is all feed ids) must keep working after a restart, a release or the cache's
/// eviction, so a feed id's URL is a record, not a cache entry. The service keeps it in Redis
/// with replicas (no TTL, apart from the evictable entries) or in SQLite on one node.
public protocol FeedIDRecords: Sendable {
    /// The normalised feed URL of feed id `id`, when it was ever given out here.
    func url(of id: Int) async -> String?
    /// Records that `id` names `url` (normalised); returns at once (the write may follow).
    func keep(_ id: Int, url: String)
}
