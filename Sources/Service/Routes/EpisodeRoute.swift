import Feeds
import HTTPServer
import Observability
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// `GET /podcasts/{id}/episodes/{episodeId}?include=chapters,transcript`: one episode, cut
/// from the podcast's episode data (the entry every page and batch is cut from: no fetch of
/// its own), with its chapters and transcript read from the files it points to. Each file is
/// fetched like a feed (single-flight, shared tier, conditional refresh, the client's quota)
/// and cached read, under its own TTL; one that is missing or broken is a `problems` entry,
/// never a failed episode. The whole answer is kept too when nothing in it went wrong.
struct EpisodeRoute: Sendable {
    let adapter: EpisodesAdapter
    /// The episodes route: the data's cache, loader, quota and counters.
    let feeds: FeedRoute
    let parts: EpisodePartLoader
    /// Loaders under the chapters' and transcripts' TTLs.
    let chapterLoads: FeedRoute
    let transcriptLoads: FeedRoute

    static let episodeNotFound = ClientError(status: 404, code: "episode_not_found", message: "this podcast's feed has no episode with this id")

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        let query: EpisodeQuery
        do {
            query = try EpisodeQuery(QueryParameters(context.pathParameters.map { ($0.key, $0.value) } + context.request.queryItems))
        } catch {
            return .response(.error(status: error.status, code: error.code, message: error.message))
        }
        let cache = feeds.cache, bypass = FeedRoute.bypassesCache(context.request.headers)
        if !bypass, case .fresh(let answer) = cache.lookup(query.answerKey) {
            feeds.stats?.hits.add()
            return .response(CachedRendering.response(answer, for: &context, cacheStatus: .hit, now: cache.now))
        }
        let route = self
        return .deferred { context in
            context.identifyClient()
            let admission = RequestAdmission(identity: context.identity, client: context.client)
            let deadline = context.receivedAt + route.feeds.upstream.budgetSeconds
            context.deadline = deadline
            let loads = Loads(
                route: route, bypass: bypass, client: context.client.map(ClientResolver.key), trace: context.trace, admission: admission,
                deadline: deadline)
            let response = await loads.answer(query, for: &context)
            if !loads.costTheUpstream { admission.refund() }
            (loads.fetched ? route.feeds.stats?.misses : route.feeds.stats?.hits)?.add()
            if loads.fetched { context.noteMiss() }
            return response
        }
    }

    /// One request's loads: the data and the parts, cached or fetched under one upstream
    /// budget and one quota decision.
    final class Loads: Sendable {
        let route: EpisodeRoute
        let bypass: Bool
        let client: ClientKey?
        let trace: TraceContext?
        let admission: RequestAdmission
        let deadline: Double
        private let state = Mutex((fetched: false, cost: false))

        init(route: EpisodeRoute, bypass: Bool, client: ClientKey?, trace: TraceContext?, admission: RequestAdmission, deadline: Double) {
            self.route = route
            self.bypass = bypass
            self.client = client
            self.trace = trace
            self.admission = admission
            self.deadline = deadline
        }

        var fetched: Bool { state.withLock { $0.fetched } }
        var costTheUpstream: Bool { state.withLock { $0.cost } }

        func answer(_ query: EpisodeQuery, for context: inout MeteredRequestContext) async -> Response {
            let cache = route.feeds.cache, adapter = route.adapter, id = query.podcastID
            // A podcast looked up before (`/podcasts/{id}`) names its feed: no second lookup.
            let prepared = adapter.dataFeed(id)
            let data: CachedResponse, status: CachedRendering.CacheStatus
            switch await load(prepared, with: route.feeds) {
            case .success(let (entry, loaded)): (data, status) = (entry, loaded)
            case .failure(let error): return .error(error)
            }
            guard data.status == 200 else { return CachedRendering.response(data, for: &context, cacheStatus: status, now: cache.now) }
            guard let feed = EpisodeFeedData(data.body) else { return .error(.unreadableCachedData(SourceName.episodes)) }
            guard let detail = EpisodeDetail(in: feed, id: query.episodeID) else { return .error(EpisodeRoute.episodeNotFound) }
            // Each part on its own clock, at the same time: a chapters file that never answers is
            // a problem entry when its clock runs out, and costs the transcript nothing.
            let partDeadline = min(deadline, NativeThread.monotonicSeconds() + route.feeds.upstream.budgetSeconds * Self.partShareOfBudget)
            async let chaptersPart = query.chapters ? chapters(of: detail, by: partDeadline) : (nil, [])
            async let transcriptPart = query.transcript ? transcript(of: detail, by: partDeadline) : (nil, [])
            let (chapterEntry, chapterProblems) = await chaptersPart, (transcriptEntry, transcriptProblems) = await transcriptPart
            let problems = chapterProblems + transcriptProblems
            // The answer is as fresh as the part of it that expires first.
            var expiresFirst = data
            for entry in [chapterEntry, transcriptEntry].compactMap({ $0 })
            where entry.storedAt + entry.policy.ttl < expiresFirst.storedAt + expiresFirst.policy.ttl {
                expiresFirst = entry
            }
            var chapters = chapterEntry?.body
            if query.chapters, chapters == nil, !detail.inlineChapters.isEmpty { chapters = Array(detail.inlineChapters) }
            let transcript = transcriptEntry?.body
            let body = EpisodeAnswer.render(podcastID: id, item: detail.json, chapters: chapters, transcript: transcript, problems: problems)
            // Kept until its first part expires, when complete (a problem may pass), and no longer
            // than the episode data it was cut from (a refresh that brings other data drops it).
            let answer = CachedResponse(Representation(body).compressed(), storedAt: expiresFirst.storedAt, policy: expiresFirst.policy)
            if problems.isEmpty { cache.store(answer, for: query.answerKey, cutFrom: prepared.loadKey, source: data) }
            return CachedRendering.response(answer, for: &context, cacheStatus: status, now: cache.now)
        }

        /// The share of the upstream budget each part (chapters, transcript) may take.
        static let partShareOfBudget = 0.5

        /// The episode's chapters file, read by `deadline`, or why not.
        func chapters(of detail: EpisodeDetail, by deadline: Double) async -> (CachedResponse?, [EpisodeAnswer.Problem]) {
            guard let file = detail.chaptersFile else { return (nil, []) }
            switch await part(file, with: route.chapterLoads, by: deadline) {
            case .success(let entry): return (entry, [])
            case .failure(let problem): return (nil, [problem])
            }
        }

        /// The best transcript the feed offers that can be read by `deadline`, and why better ones could not.
        func transcript(of detail: EpisodeDetail, by deadline: Double) async -> (CachedResponse?, [EpisodeAnswer.Problem]) {
            var problems: [EpisodeAnswer.Problem] = []
            for candidate in detail.transcripts {
                switch await part(candidate, with: route.transcriptLoads, by: deadline) {
                case .success(let entry): return (entry, problems)
                case .failure(let problem): problems.append(problem)
                }
            }
            return (nil, problems)
        }

        /// A chapters or transcript file's entry (its JSON), or why it is absent.
        func part(_ part: EpisodePart, with loads: FeedRoute, by deadline: Double) async -> Result<CachedResponse, EpisodeAnswer.Problem> {
            func problem(_ code: String, _ message: String) -> Result<CachedResponse, EpisodeAnswer.Problem> {
                .failure(EpisodeAnswer.Problem(part: part.name, code: code, message: message))
            }
            switch await load(route.parts.prepared(part), with: loads, by: deadline) {
            case .success(let (entry, _)):
                guard entry.status == 200 else {
                    let error = EpisodeBatch.error(fromBody: entry.body)
                    return problem(error.code, error.message)
                }
                return .success(entry)
            case .failure(let error): return problem(error.code, error.message)
            }
        }

        /// A cached entry (a stale one refreshed in the background), else fetched now: one
        /// visit to the cache for both (`lookupOrFetch`).
        func load(_ prepared: PreparedFeed, with loads: FeedRoute, by deadline: Double? = nil) async -> Result<
            (CachedResponse, CachedRendering.CacheStatus), ClientError
        > {
            let cache = loads.cache, key = prepared.loadKey
            let client = self.client, trace = self.trace, deadline = deadline ?? self.deadline, bypass = self.bypass, admission = self.admission
            // The flight this may start inherits it (see `FeedRoute.lookUpOrLoad`).
            let outcome = await UpstreamRequestContext.with({
                $0.deadline = deadline
                $0.requester = client
                $0.trace = trace
                $0.completesOnceSent = true
            }) {
                await TraceScope.span("cache fetch", [("feedproxy.cache.key", .string(key))]) { notes in
                    var started = false
                    let outcome = await cache.lookupOrFetch(
                        key, revalidate: bypass, waitUntil: deadline,
                        admit: {
                            started = true
                            return admission.admit()
                        }, refreshing: loads.loader(prepared))
                    FeedRoute.note(outcome, startedFlight: started, into: &notes)
                    return outcome
                }
            }
            switch outcome {
            case .answered(let entry)?, .fresh(let entry)?: return .success((entry, .hit))
            case .stale(let entry)?:
                cache.refreshInBackground(key, refreshing: loads.loader(prepared, refreshFor: trace ?? TraceContext(traceHigh: 0, traceLow: 0, spanID: 0)))
                return .success((entry, .stale))
            default: break
            }
            state.withLock { $0.fetched = true }
            guard let outcome else {
                return .failure(.clientRateLimited(retryAfter: admission.refusedFor ?? 1))
            }
            if FeedRoute.costTheUpstream(outcome) { state.withLock { $0.cost = true } }
            switch outcome {
            case .answered(let entry), .fresh(let entry): return .success((entry, .hit))
            case .stale(let entry), .staleAfterError(let entry, _): return .success((entry, .stale))
            case .loaded(let entry, let origin): return .success((entry, .init(origin)))
            case .failed(let error): return .failure(error.error)
            }
        }
    }
}
