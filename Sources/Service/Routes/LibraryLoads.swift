import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// Loads the episode data of many podcasts for one request (a library refresh, an import)
/// until the request's deadline, counted from its arrival: each podcast's data is the entry
/// `/podcasts/{id}/episodes` pages are cut from (one download and parse per feed per refresh,
/// single-flight, shared tier, conditional refresh, breakers, fair turns at each host), each
/// fetch is charged to the client's quota (`FetchAdmission`), and a load still running at the
/// deadline goes on for the next request to find.
struct LibraryLoads: Sendable {
    let adapter: EpisodesAdapter
    /// The episodes route: its cache, loader, quota and counters.
    let feeds: FeedRoute
    /// A client's `Cache-Control: no-cache`: each is revalidated.
    let bypass: Bool

    /// What became of one podcast by the deadline.
    enum Load: Sendable {
        /// Its client's quota refused the fetch.
        case refused
        case outcome(ResponseCache.Outcome)
    }

    /// What became of podcasts `podcasts` (each an id, and its feed when the request names
    /// it) by the deadline: by index in `podcasts`, or nothing when it is still loading.
    func run(
        _ podcasts: [(id: Int, listed: EpisodesAdapter.ListedFeed?)], deadline: Double, for context: inout MeteredRequestContext
    ) async -> (loaded: [Int: Load], admission: FetchAdmission) {
        context.identifyClient()
        context.noteMiss()  // only what is not cached comes here
        // The answer goes by then, whatever is still loading (which goes on).
        context.deadline = context.receivedAt + deadline
        let answerBy = context.receivedAt + deadline
        let admission = FetchAdmission(identity: context.identity, client: context.client)
        let client = context.client.map(ClientResolver.key), trace = context.trace
        let adapter = self.adapter, feeds = self.feeds, bypass = self.bypass, cache = feeds.cache, upstream = feeds.upstream
        // A load may wait a budget for its turn at a busy host, then download within another.
        let upstreamContext: @Sendable (inout UpstreamRequestContext) -> Void = {
            $0.deadline = NativeThread.monotonicSeconds() + 2 * upstream.budgetSeconds
            $0.requester = client
            $0.trace = trace
            $0.completesOnceSent = true
        }
        let loaded = await DeadlineGather.run(podcasts.count, answerBy: answerBy) { i -> Load in
            let podcast = podcasts[i]
            // Each load looks its podcast up (when nothing names its feed yet) together with
            // whatever else this replica is looking up: a few lookups for a storm of requests.
            // Patient with a busy shared tier: better late (the answer goes at its deadline
            // anyway) than fetched by two replicas.
            let key = EpisodesAdapter.dataKey(podcast.id)
            let loader = feeds.loader(adapter.dataFeed(podcast.id, listed: podcast.listed))
            let outcome = await SharedTierCall.patiently {
                await UpstreamRequestContext.with(upstreamContext) {
                    await TraceScope.span("cache fetch", [("feedproxy.cache.key", .string(key))]) { notes in
                        var started = false, charged = false
                        let outcome = await cache.lookupOrFetch(
                            key, revalidate: bypass,
                            admit: {
                                started = true
                                charged = admission.admit()
                                return charged
                            }, refreshing: loader)
                        // A fetch another replica's answer (or this one's cache) made unnecessary costs nothing.
                        if charged, let outcome, !FeedRoute.costTheUpstream(outcome) { admission.refund() }
                        FeedRoute.note(outcome, startedFlight: started, into: &notes)
                        return outcome
                    }
                }
            }
            guard let outcome else { return .refused }  // the quota's `admit` said no
            // Gone stale since it was looked up (a long wait for a turn): served, and refreshed.
            if case .stale = outcome {
                cache.refreshInBackground(key, refreshing: feeds.loader(adapter.dataFeed(podcast.id, listed: podcast.listed), refreshFor: trace))
            }
            return .outcome(outcome)
        }
        return (loaded, admission)
    }
}
