import Feeds
import HTTPServer
import Observability
import Primitives
import ResponseCache
import Upstream

/// `GET /podcasts/byfeedurl?url=`: a podcast named by its feed URL, whether or not the directory
/// lists it. Its id (`FeedID`, derived from the normalised URL) names it everywhere an id is
/// taken; the answer is `/podcasts/{id}`'s. The feed is read once, as its episodes' data (the
/// entry `/podcasts/{id}/episodes` pages are cut from), so adding a podcast and opening it
/// is one download; answered from the cache when its id is known here.
struct FeedByURLRoute: Sendable {
    let adapter: EpisodesAdapter
    /// The episodes route: its cache, loader, quota and counters.
    let feeds: FeedRoute
    let registry: FeedRegistry

    static let invalidURL = ClientError.invalidParameter("url must be an absolute http(s) feed URL (feed:, itpc: and pcast: links are read as one)")

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        guard let given = context.request.query("url"), !given.isEmpty else {
            return .response(.error(status: 400, code: "missing_parameter", message: "url is required: the podcast's feed URL"))
        }
        guard let url = FeedID.normalised(given) else { return .response(.error(Self.invalidURL)) }
        let id = FeedID.id(ofNormalised: url)
        let cache = feeds.cache
        if !FeedRoute.bypassesCache(context.request.headers), case .fresh(let entry) = cache.lookup(PodcastAdapter.cacheKey(id)) {
            feeds.stats?.hits.add()
            return .response(CachedRendering.response(entry, for: &context, cacheStatus: .hit, now: cache.now))
        }
        feeds.stats?.misses.add()
        let loads = LibraryLoads(adapter: adapter, feeds: feeds, bypass: FeedRoute.bypassesCache(context.request.headers))
        let registry = self.registry, deadline = 2 * feeds.upstream.budgetSeconds
        return .deferred { context in
            let (loaded, admission) = await loads.run([(id, .feed(url: url, title: nil))], deadline: deadline, for: &context)
            context.logFields = CachedRendering.CacheStatus.miss.logFields
            let entry: CachedResponse
            switch loaded[0] {
            case nil:
                let retry = admission.refusedFor ?? 1
                return .error(
                    ClientError(status: 503, code: "feed_pending", message: "the feed is still being read: ask again after Retry-After", retryAfter: retry))
            case .refused?:
                return .error(ClientError.clientRateLimited(retryAfter: admission.refusedFor ?? 1))
            case .outcome(.failed(let error))?:
                return .error(error.error)
            case .outcome(.loaded(let found, _))?, .outcome(.fresh(let found))?, .outcome(.stale(let found))?, .outcome(.answered(let found))?,
                .outcome(.staleAfterError(let found, _))?:
                entry = found
            }
            guard entry.status == 200 else {
                let error = EpisodeBatch.error(fromBody: entry.body)
                return .error(status: entry.status, code: error.code, message: error.message)
            }
            guard let data = EpisodeFeedData(entry.body) else { return .error(ClientError.unreadableCachedData(SourceName.episodes)) }
            // Remembered by the load that read it; a feed whose data was at hand is remembered now.
            let channel = FeedChannel(data)
            registry.remember(normalised: url, channel: channel)
            guard let body = FeedRegistry.answer(id: id, url: url, channel: channel, images: registry.imageLinks) else {
                return .error(status: 500, code: "internal_error", message: "the podcast could not be encoded")
            }
            var response = Response.json(body)
            response.headers.add("Cache-Control", "public, max-age=0")
            return response
        }
    }
}
