import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// `GET /episodes?podcasts=…`: a library refresh in one request. Each podcast's episode data
/// is the entry `/podcasts/{id}/episodes` pages are cut from (one download and parse per feed
/// per refresh, single-flight, shared tier, conditional refresh, breakers, fair queue all as
/// for one podcast). What is cached answers at once; the rest is fetched (its feed URLs found
/// with one iTunes lookup for all of them) until the batch's deadline, after which a podcast
/// still loading is `pending`: its fetch goes on and the next refresh finds it.
///
/// Quota: a batch that has to fetch costs its client one miss, however many podcasts it
/// loads, so one person's library refresh is never refused for its size while a flood of
/// batches from one address is, like a flood of single misses.
struct EpisodeBatchRoute: Sendable {
    let adapter: EpisodesAdapter
    /// The episodes route: its cache, loader, quota and counters.
    let feeds: FeedRoute
    /// Seconds a batch waits for podcasts not cached before answering with them pending.
    let deadline: Double

    enum Slot: Sendable {
        case cached(CachedResponse)
        case loaded(ResponseCache.Outcome?)
        case pending
    }

    func handle(_ context: inout RequestContext) -> HandlerResult {
        let batch: EpisodeBatch
        do {
            batch = try EpisodeBatch(QueryParameters(context.request.queryItems))
        } catch {
            return .response(.error(status: error.status, code: error.code, message: error.message))
        }
        let cache = feeds.cache, bypass = FeedRoute.bypassesCache(context.request)
        var slots = [Slot](repeating: .pending, count: batch.ids.count)
        var uncached: [Int] = []
        for (i, id) in batch.ids.enumerated() {
            let key = EpisodesAdapter.dataKey(id)
            switch bypass ? .miss : cache.lookup(key) {
            case .fresh(let data):
                slots[i] = .cached(data)
            case .stale(let data):
                slots[i] = .cached(data)
                cache.refreshInBackground(key, refreshing: feeds.loader(adapter.dataFeed(id), refreshFor: context.trace))
            case .miss:
                uncached.append(i)
            }
        }
        if uncached.isEmpty {
            feeds.stats?.hits.add()
            return .response(Self.answer(batch, slots, for: &context, status: .hit, retryAfter: nil))
        }
        feeds.stats?.misses.add()
        let adapter = self.adapter, feeds = self.feeds, deadline = self.deadline, upstream = feeds.upstream
        // Podcasts looked up before (`/podcasts/{id}` cached) name their feeds: not looked up again.
        var known: [Int: EpisodesAdapter.ListedFeed] = [:]
        for i in uncached {
            if case .fresh(let podcast) = cache.lookup(PodcastAdapter.cacheKey(batch.ids[i])), podcast.status == 200,
                let listed = EpisodesAdapter.listed(fromPodcastAnswer: podcast.body)
            {
                known[batch.ids[i]] = listed
            }
        }
        let missing = uncached, cachedSlots = slots, knownFeeds = known
        return .deferred { context in
            context.identifyClient()
            context.noteMiss()  // only what is not cached comes here
            // The batch answers by then, whatever is still loading (which goes on).
            context.deadline = context.receivedAt + deadline
            let admission = BatchAdmission(identity: context.identity, client: context.client)
            let client = context.client.map(ClientResolver.key), trace = context.trace
            var slots = cachedSlots
            let ids = missing.map { batch.ids[$0] }
            let unknown = ids.filter { knownFeeds[$0] == nil }
            let upstreamContext: @Sendable (inout UpstreamRequestContext) -> Void = {
                $0.deadline = NativeThread.monotonicSeconds() + upstream.budgetSeconds
                $0.requester = client
                $0.trace = trace
                $0.completesOnceSent = true
            }
            // One iTunes lookup finds every missing podcast's feed (iTunes takes up to 200 ids).
            // Each podcast it finds is also `/podcasts/{id}`'s answer, kept for that route.
            let policy = feeds.policy
            let lookup: Task<[Int: EpisodesAdapter.ListedFeed], Never>? =
                unknown.count >= 2 && admission.admit()
                ? Task {
                    guard let found = try? await UpstreamRequestContext.with(upstreamContext, { try await adapter.lookUp(unknown, with: upstream) }) else {
                        return [:]
                    }
                    for (key, body) in found.podcasts {
                        cache.store(CachedResponse(Representation(body).compressed(), storedAt: cache.now, policy: policy), for: key)
                    }
                    return found.listed
                } : nil
            let results = Locked([Int: ResponseCache.Outcome?]())
            let (arrivals, arrived) = AsyncStream<Void>.makeStream()
            for (n, i) in missing.enumerated() {
                // Not children of this request: a fetch still running at the deadline goes on.
                Task {
                    var listed = knownFeeds[ids[n]]
                    if listed == nil { listed = await lookup?.value[ids[n]] }
                    let key = EpisodesAdapter.dataKey(ids[n])
                    let outcome = await UpstreamRequestContext.with(upstreamContext) {
                        await TraceScope.span("cache fetch", [("feedproxy.cache.key", .string(key))]) { notes in
                            var started = false
                            let outcome = await cache.lookupOrFetch(
                                key, revalidate: bypass,
                                admit: {
                                    started = true
                                    return admission.admit()
                                }, refreshing: feeds.loader(adapter.dataFeed(ids[n], listed: listed)))
                            FeedRoute.note(outcome, startedFlight: started, into: &notes)
                            return outcome
                        }
                    }
                    // Gone stale since the loop looked (a long wait for the lookup): served, and refreshed.
                    if case .stale? = outcome {
                        cache.refreshInBackground(key, refreshing: feeds.loader(adapter.dataFeed(ids[n], listed: listed), refreshFor: trace))
                    }
                    results.withLock { $0[i] = .some(outcome) }
                    arrived.yield()
                }
            }
            let timer = Task {
                try? await Task.sleep(for: .seconds(deadline))
                arrived.finish()
            }
            var count = 0
            for await _ in arrivals {
                count += 1
                if count == missing.count { break }
            }
            timer.cancel()
            let loaded = results.withLock { $0 }
            var pending = false
            for i in missing {
                if let outcome = loaded[i] { slots[i] = .loaded(outcome) } else { pending = true }
            }
            if lookup == nil, loaded.count == missing.count, loaded.values.allSatisfy({ $0.map { !FeedRoute.costTheUpstream($0) } ?? true }) {
                admission.refund()
            }
            return Self.answer(batch, slots, for: &context, status: .miss, retryAfter: pending ? max(1, deadline) : admission.refusedFor)
        }
    }

    /// The answer, or a 304 when the client has it already. Its ETag is a hash of what the
    /// answer is made of (the query, and each podcast's data by its own ETag, or its error),
    /// so an unchanged library is recognised without merging or encoding anything. A sync
    /// answer's also names the token it brings the client to: asking again with that token
    /// and this ETag is a 304 until something new comes.
    static func answer(
        _ batch: EpisodeBatch, _ slots: [Slot], for context: inout RequestContext, status: CachedRendering.CacheStatus, retryAfter: Double?
    ) -> Response {
        context.logFields = status.logFields
        let statuses = slots.map(Self.status)
        let selection = batch.sync == nil ? nil : batch.select(statuses)
        let tag = etag(batch, slots, selection)
        let gzip = context.request.acceptsGzip
        var headers = HTTPHeaders()
        headers.add("Cache-Control", "public, max-age=0")
        headers.add("ETag", gzip ? "\"\(tag)-gz\"" : "\"\(tag)\"")
        if let retryAfter { headers.add("Retry-After", String(Saturating.retryAfterSeconds(retryAfter))) }
        if let condition = context.request.headers["if-none-match"], CachedRendering.matches(condition, selectedTag: gzip ? "\"\(tag)-gz\"" : "\"\(tag)\"") {
            return Response(status: 304, headers: headers, compressible: true, constantHeaders: status.headerLine)
        }
        let output = batch.render(statuses, selection ?? batch.select(statuses))
        headers.add("Content-Type", MediaType.json)
        if let link = output.link { headers.add("Link", link) }
        return Response(
            status: 200, headers: headers, body: output.body, gzippedBody: gzip ? Gzip.compress(output.body) : nil, compressible: true,
            constantHeaders: status.headerLine, age: 0)
    }

    /// 16 hex digits over the query and every podcast's part of the answer (and, for a sync
    /// answer, the token and how many episodes remain).
    static func etag(_ batch: EpisodeBatch, _ slots: [Slot], _ selection: EpisodeBatch.Selection?) -> String {
        var h = XXH64.Hasher()
        h.add("v2|\(batch.limit)|\(batch.since.map(String.init) ?? "-")|\(batch.cursor.map { "\($0.index).\($0.anchor)" } ?? "-")".utf8)
        // What is left after it, not the total: the answer that brings a client to a token and
        // the empty one asked with that token name the same state.
        if let selection { h.add("|sync|\(selection.total - selection.items.count)|\(selection.token?.encoded ?? "-")|\(selection.resync)".utf8) }
        for (id, slot) in zip(batch.ids, slots) {
            h.add("|\(id):".utf8)
            switch slot {
            case .pending: h.add("pending".utf8)
            case .loaded(nil): h.add("refused".utf8)
            case .cached(let entry), .loaded(.some(.loaded(let entry, _))), .loaded(.some(.staleAfterError(let entry, _))),
                .loaded(.some(.answered(let entry))), .loaded(.some(.fresh(let entry))), .loaded(.some(.stale(let entry))):
                h.add("\(entry.status) \(entry.etag)".utf8)
            case .loaded(.some(.failed(let error))): h.add("\(error.error.code) \(error.error.message)".utf8)
            }
        }
        return h.hex
    }

    static func status(_ slot: Slot) -> EpisodeBatch.Status {
        let entry: CachedResponse
        switch slot {
        case .pending: return .pending
        case .cached(let cached): entry = cached
        case .loaded(nil):
            let refused = ClientError.clientRateLimited(retryAfter: 1)
            return .error(code: refused.code, message: refused.message)
        case .loaded(.some(.loaded(let loaded, _))), .loaded(.some(.staleAfterError(let loaded, _))), .loaded(.some(.answered(let loaded))),
            .loaded(.some(.fresh(let loaded))), .loaded(.some(.stale(let loaded))):
            entry = loaded
        case .loaded(.some(.failed(let error))): return .error(code: error.error.code, message: error.error.message)
        }
        guard entry.status == 200 else {
            let error = EpisodeBatch.error(fromBody: entry.body)
            return .error(code: error.code, message: error.message)
        }
        guard let data = EpisodeFeedData(entry.body) else {
            let error = ClientError.unreadableCachedData(SourceName.episodes)
            return .error(code: error.code, message: error.message)
        }
        return .ok(data)
    }
}

/// A batch's one quota decision: taken by its first upstream fetch, the same for the rest.
final class BatchAdmission: Sendable {
    private let identity: (any ClientIdentity)?
    private let client: IPAddress?
    /// nil: not decided yet; then the seconds until a retry (0: admitted).
    private let decision = Locked<Double?>(nil)

    init(identity: (any ClientIdentity)?, client: IPAddress?) {
        self.identity = identity
        self.client = client
    }

    func admit() -> Bool {
        guard let identity, let client else { return true }
        return decision.withLock { d in
            if d == nil { d = identity.admit(client) ?? 0 }
            return d == 0
        }
    }

    /// Gives the batch's unit back when it took one (its fetches cost the upstream nothing).
    func refund() {
        guard let identity, let client, decision.withLock({ $0 }) == 0 else { return }
        identity.refund(client)
    }

    /// Seconds until the client may retry, when the batch was refused its fetches.
    var refusedFor: Double? { decision.withLock { $0.flatMap { $0 > 0 ? $0 : nil } } }
}
