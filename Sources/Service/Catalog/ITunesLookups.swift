import Feeds
import Primitives
import ResponseCache

extension PodcastLookups {
    /// This replica's lookups at the iTunes lookup endpoint, shared by `/podcasts/{id}` and every
    /// episodes load. Every podcast looked up is `/podcasts/{id}`'s answer, kept in `cache` and
    /// shared with the other replicas at once (a load that failed after its lookup is retried
    /// without one).
    convenience init(_ c: Configuration, sharingIn cache: ResponseCache) {
        let ttl = c[Setting.ttlPodcasts]
        let policy = FreshnessPolicy(ttl: ttl, staleWhileRevalidate: ttl * c.staleWhileRevalidateFactor, staleIfError: c.staleIfError)
        self.init(lookupURL: c[Setting.itunesLookupURL]) { id, answer in
            cache.share(CachedResponse(Representation(answer).compressed(), storedAt: cache.now, policy: policy), for: PodcastAdapter.cacheKey(id))
        }
    }
}
