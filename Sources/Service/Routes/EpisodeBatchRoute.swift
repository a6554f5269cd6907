import EpisodeSync
import Push
import Feeds
import HTTPServer
import Observability
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// `GET /episodes?podcasts=…`: a library refresh in one request. Each podcast's episode data
/// is the entry `/podcasts/{id}/episodes` pages are cut from (one download and parse per feed
/// per refresh, single-flight, shared tier, conditional refresh, breakers, fair queue all as
/// for one podcast). What is cached answers at once; the rest is fetched (their feed URLs found
/// by this replica's shared lookups) until the batch's deadline, counted from the request's
/// arrival, after which a podcast still loading is `pending`: its fetch goes on and the next
/// refresh finds it.
///
/// Quota: a batch costs its client in proportion to the feeds it makes this replica fetch
/// (`FetchAdmission`: a whole library of cold feeds costs at most the quota's burst), so one
/// person's library refresh is not refused for its size, while a flood of batches from one
/// address is throttled to the quota's rate.
struct EpisodeBatchRoute: Sendable {
    let adapter: EpisodesAdapter
    /// The episodes route: its cache, loader, quota and counters.
    let feeds: FeedRoute
    /// Seconds a batch waits for podcasts not cached before answering with them pending.
    let deadline: Double
    /// What of the deadline the wait leaves for composing the answer.
    let allowance: AnswerAllowance
    /// Keeps the feeds of recent library refreshes warm (read again at their cadence).
    let warm: EpisodeEventHub?

    enum Slot: Sendable {
        case cached(CachedResponse)
        case loaded(ResponseCache.Outcome)
        /// The client's quota refused its fetch.
        case refused
        case pending
    }

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        let batch: EpisodeBatch
        do {
            batch = try EpisodeBatch(QueryParameters(try RequestParameters.of(context.request)))
        } catch {
            return .response(.error(status: error.status, code: error.code, message: error.message))
        }
        warm?.noteLibrary(batch.ids)
        let cache = feeds.cache, bypass = FeedRoute.bypassesCache(context.request.headers)
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
        let adapter = self.adapter, feeds = self.feeds, deadline = self.deadline, allowance = self.allowance
        let missing = uncached, cachedSlots = slots
        return .deferred { context in
            let loads = LibraryLoads(adapter: adapter, feeds: feeds, bypass: bypass)
            // The wait ends soon enough for the answer to be composed by the deadline.
            let wait = deadline - allowance.seconds(at: NativeThread.monotonicSeconds())
            let (loaded, admission) = await loads.run(missing.map { (batch.ids[$0], nil) }, deadline: wait, for: &context)
            let waitEnded = min(NativeThread.monotonicSeconds(), context.receivedAt + wait)
            defer { allowance.composed(waitEnded: waitEnded, at: NativeThread.monotonicSeconds()) }
            var slots = cachedSlots
            var pending = false
            for (n, i) in missing.enumerated() {
                switch loaded[n] {
                case .outcome(let outcome)?: slots[i] = .loaded(outcome)
                case .refused?: slots[i] = .refused
                case nil: pending = true
                }
            }
            return Self.answer(batch, slots, for: &context, status: .miss, retryAfter: pending ? max(1, deadline) : admission.refusedFor)
        }
    }

    /// The answer, or a 304 when the client has it already. Its ETag is a hash of what the
    /// answer is made of (each podcast's data by its own ETag, or its error), so an unchanged
    /// library is recognised without merging or encoding anything, and of the token it brings
    /// the client to (`etag`): asking with the token and the ETag of the answer that gave it
    /// (with `sync` or without) is a 304 until something new comes.
    static func answer(
        _ batch: EpisodeBatch, _ slots: [Slot], for context: inout MeteredRequestContext, status: CachedRendering.CacheStatus, retryAfter: Double?
    ) -> Response {
        context.logFields = status.logFields
        let statuses = slots.map(Self.status)
        // A podcast still loading (or refused a fetch for now) is asked again after Retry-After.
        let retryAfter = retryAfter ?? (statuses.contains { if case .pending = $0 { true } else { false } } ? 1 : nil)
        let selection = batch.sync == nil ? nil : batch.select(statuses)
        let tag = etag(batch, slots, reached: batch.sync == nil ? batch.currentToken(statuses) : selection?.token)
        let gzip = context.request.acceptsGzip
        var headers = HTTPHeaders()
        headers.add("Cache-Control", context.request.method == "POST" ? "no-store" : "public, max-age=0")
        headers.add("ETag", gzip ? "\"\(tag)-gz\"" : "\"\(tag)\"")
        if let retryAfter { headers.add("Retry-After", String(Saturating.retryAfterSeconds(retryAfter))) }
        // A POST's answer is not cached by anyone: it has no 304 (RFC 9110 §13.1.2 would make it a 412).
        if context.request.method != "POST", let condition = context.request.headers["if-none-match"],
            CachedRendering.matches(condition, selectedTag: gzip ? "\"\(tag)-gz\"" : "\"\(tag)\"")
        {
            // Exactly the headers the 200 would carry, Age included (RFC 9110 §15.4.5).
            return Response(status: 304, headers: headers, compressible: true, constantHeaders: status.headerLine, age: 0)
        }
        let output = batch.render(statuses, selection ?? batch.select(statuses))
        headers.add("Content-Type", MediaType.json)
        if let link = output.link { headers.add("Link", link) }
        return Response(
            status: 200, headers: headers, body: output.body, gzippedBody: gzip ? Gzip.compress(output.body) : nil, compressible: true,
            constantHeaders: status.headerLine, age: 0)
    }

    /// 16 hex digits over every podcast's part of the answer and, for an answer that gives a
    /// token (`reached`: every one but a page reached by a cursor), that token: the state it
    /// brings the client to, not the query nor how many episodes it held. So the answer that
    /// gave a token (with `sync` or without, whatever its `limit` or `since`) and the empty
    /// answer to `sync=` with that token, once nothing changed, share it. Still a strong
    /// validator (RFC 9110 §8.8.1): for one URL (one query, one token asked with) the answer is
    /// a function of the podcasts' data, so the tag changes whenever its bytes would. A page
    /// reached by a cursor: the query too.
    static func etag(_ batch: EpisodeBatch, _ slots: [Slot], reached: SyncToken?) -> String {
        var h = XXH64.Hasher()
        if let reached {
            h.add("v3|state|\(reached.encoded)".utf8)
        } else {
            h.add("v3|\(batch.limit)|\(batch.since.map(String.init) ?? "-")|\(batch.cursor.map { "\($0.index).\($0.anchor)" } ?? "-")".utf8)
        }
        for (id, slot) in zip(batch.ids, slots) {
            h.add("|\(id):".utf8)
            switch slot {
            case .pending: h.add("pending".utf8)
            // Refused here before anything was sent: pending in the answer too (`status`).
            case .loaded(.failed(let error)) where error.refusedBeforeSending: h.add("pending".utf8)
            case .refused: h.add("refused".utf8)
            case .cached(let entry), .loaded(.loaded(let entry, _)), .loaded(.staleAfterError(let entry, _)), .loaded(.answered(let entry)),
                .loaded(.fresh(let entry)), .loaded(.stale(let entry)):
                h.add("\(entry.status) \(entry.etag)".utf8)
            case .loaded(.failed(let error)): h.add("\(error.error.code) \(error.error.message)".utf8)
            }
        }
        return h.hex
    }

    static func status(_ slot: Slot) -> EpisodeBatch.Status {
        let entry: CachedResponse
        switch slot {
        case .pending: return .pending
        case .cached(let cached): entry = cached
        case .refused:
            let refused = ClientError.clientRateLimited(retryAfter: 1)
            return .error(code: refused.code, message: refused.message)
        case .loaded(.loaded(let loaded, _)), .loaded(.staleAfterError(let loaded, _)), .loaded(.answered(let loaded)), .loaded(.fresh(let loaded)),
            .loaded(.stale(let loaded)):
            entry = loaded
        // Refused here before anything was sent (a busy host, the upstream's budget): not an
        // answer about the feed; asked again after Retry-After, it loads.
        case .loaded(.failed(let error)) where error.refusedBeforeSending: return .pending
        case .loaded(.failed(let error)): return .error(code: error.error.code, message: error.error.message)
        }
        return EpisodeBatch.Status(cached: entry.status, body: entry.body)
    }
}
