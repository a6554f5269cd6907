import Feeds
import Primitives
import ResponseCache

extension PodcastLookups {
    /// This replica's lookups at the iTunes lookup endpoint, shared by `/podcasts/{id}` and every
    /// episodes load. Every podcast looked up is `/podcasts/{id}`'s answer, kept in `cache` and
    /// shared with the other replicas at once (a load that failed after its lookup is retried
    /// without one).
    convenience init(_ c: Configuration, sharingIn cache: ResponseCache, records: (any FeedRecords)? = nil) {
        let ttl = c[Setting.ttlPodcasts]
        let policy = FreshnessPolicy(ttl: ttl, staleWhileRevalidate: ttl * c.staleWhileRevalidateFactor, staleIfError: c.staleIfError)
        self.init(lookupURL: c[Setting.itunesLookupURL], imageLinks: c.imageProxyLinks, records: records) { id, answer in
            cache.share(CachedResponse(Representation(answer).compressed(), storedAt: cache.now, policy: policy), for: PodcastAdapter.cacheKey(id))
        }
    }
}

extension FeedRegistry {
    /// Feed ids' `/podcasts/{id}` answers, kept in `cache` and the shared tier for
    /// FEED_ID_TTL (each load of the feed renews it); never refreshed from iTunes.
    convenience init(_ c: Configuration, sharingIn cache: ResponseCache, records: (any FeedRecords)? = nil) {
        let policy = FreshnessPolicy(ttl: c[Setting.feedIDTTL], staleWhileRevalidate: 0, staleIfError: 0)
        self.init(
            imageLinks: c.imageProxyLinks, records: records,
            keep: { id, answer in
                cache.share(CachedResponse(Representation(answer).compressed(), storedAt: cache.now, policy: policy), for: PodcastAdapter.cacheKey(id))
            },
            holds: { id in if case .miss = cache.lookup(PodcastAdapter.cacheKey(id)) { false } else { true } })
    }
}
