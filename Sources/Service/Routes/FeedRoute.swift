import Feeds
import HTTPServer
import Observability
import Primitives
import ResponseCache
import Upstream

/// One feed route: validate → cache (hit answers on the event loop) → single-flight
/// upstream fetch → normalise → store pre-encoded and pre-compressed bytes.
struct FeedRoute: Sendable {
    let adapter: any FeedAdapter
    let policy: FreshnessPolicy
    let negativeTTL: Double
    let cache: ResponseCache
    let upstream: UpstreamClient
    let metrics: Metrics
    /// This source's hit/miss counters, looked up once here rather than per request.
    let stats: CacheStats?
    let logger: Logger
    /// Where a background refresh's own trace goes.
    var spanSink: (any SpanSink)?

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        let target = context.request.target
        return handle(&context, alias: target)
    }

    /// The route's parameters as a form (`POST`, `application/x-www-form-urlencoded`): the
    /// answer a GET of the same parameters gets, from the same cache entry; the fast path knows
    /// it by its body's SHA-256 too (a body of up to a megabyte is hashed here, once, not under
    /// the cache's lock; a digest no stranger can make collide with another's form).
    func handleForm(_ context: inout MeteredRequestContext) -> MeteredResult {
        let fields: [(name: String, value: String)]
        do {
            fields = try RequestParameters.of(context.request)
        } catch {
            return .response(.error(error))
        }
        let alias = "POST " + context.request.target + "\n" + Base64URL.encode(SHA256.hash(context.request.body))
        return handle(&context, alias: alias, adding: fields)
    }

    /// `alias`: what the fast path knows this request by (its target, plus what else selects
    /// the answer: an image's negotiated encoding); `adding`: parameters the route derived.
    func handle(_ context: inout MeteredRequestContext, alias: String, adding derived: [(name: String, value: String)] = []) -> MeteredResult {
        let bypass = Self.bypassesCache(context.request.headers)
        // Fast path: this exact target was validated before and its entry is fresh.
        let now = cache.now  // one clock read: freshness and Age from the same instant
        var known: ResponseCache.KnownAlias?
        if !bypass, let entry = cache.lookup(alias: alias, now: now, known: &known) {
            stats?.hits.add()
            return .response(CachedRendering.response(entry, for: &context, cacheStatus: .hit, now: now))
        }
        let prepared: PreparedFeed
        do {
            prepared = try adapter.prepare(QueryParameters(context.pathParameters.map { ($0.key, $0.value) } + context.request.queryItems + derived))
        } catch {
            return .response(.error(status: error.status, code: error.code, message: error.message))
        }
        #if DEBUG
            QueryParameters.reads?.note(prepared)  // a test compares it with the route's declaration
        #endif
        // A target seen before: the probe found its answer's entry stale or gone.
        let seen = known?.key == prepared.cacheKey
        if seen, !bypass, prepared.view == nil, case .stale(let entry)? = known?.lookup {
            return .response(stale(entry, prepared, cutting: nil, for: &context, now: now))
        }
        // Everything else is one visit to the cache, off the loop: a target not seen before
        // has its answer looked up (and its alias remembered); data an answer is cut from is
        // looked up; and the load's flight is joined or started.
        let cut = prepared.view.map { cutter(prepared, $0) }
        let answer = seen || prepared.view == nil ? nil : prepared.cacheKey
        return lookUpOrLoad(prepared, bypass: bypass, alias: seen ? nil : alias, answer: answer, cutting: cut)
    }

    /// Inside stale-while-revalidate: the entry is the answer (or what it is cut from), and a
    /// refresh starts unless one runs.
    private func stale(_ entry: CachedResponse, _ prepared: PreparedFeed, cutting cut: Cutter?, for context: inout MeteredRequestContext, now: Double)
        -> Response
    {
        stats?.stale.add()
        cache.refreshInBackground(prepared.loadKey, refreshing: loader(prepared, refreshFor: context.trace))
        if let cut { return cut(entry, .stale, &context, now) }
        return CachedRendering.response(entry, for: &context, cacheStatus: .stale, now: now)
    }

    /// An answer cut from a loaded entry (the request's context gets its log fields).
    typealias Cutter = @Sendable (CachedResponse, CachedRendering.CacheStatus, inout MeteredRequestContext, Double) -> Response

    /// Cuts the answer from `data` and keeps it under the request's own key, stamped with the
    /// data's time and policy (so it ages, and expires, with what it was cut from), for as long
    /// as `data` is what the cache holds: a refresh that brings other data drops every answer
    /// cut from the old at once (`store(_:for:cutFrom:source:)`). A negative entry (no such
    /// podcast) is the answer of every page, and data whose key is the request's (a whole feed)
    /// is its own answer.
    func cutter(_ prepared: PreparedFeed, _ view: FeedView) -> Cutter {
        let cache = self.cache, logger = self.logger
        return { data, status, context, now in
            // A negative entry, or an answer that is the data itself (the whole feed: same key).
            guard data.status == 200, prepared.cacheKey != view.dataKey else {
                return CachedRendering.response(data, for: &context, cacheStatus: status, now: now)
            }
            guard let output = view.cut(data.body) else {
                logger.warn("cached data unreadable", [("key", .string(view.dataKey))])
                return .error(.unreadableCachedData(prepared.source))
            }
            let page = CachedResponse(output.compressed(), storedAt: data.storedAt, policy: data.policy)
            cache.store(page, for: prepared.cacheKey, cutFrom: view.dataKey, source: data)
            return CachedRendering.response(page, for: &context, cacheStatus: status, now: now)
        }
    }

    /// Off the loop, one visit to the cache (`lookupOrFetch`): `answer`'s own entry (a page cut
    /// before, remembered as `alias`) when fresh; else the load's entry, fresh or stale, as the
    /// answer or what `cutting` cuts it from; else the load (single-flight, shared tier, the
    /// client's quota), then the same.
    func lookUpOrLoad(_ prepared: PreparedFeed, bypass: Bool, alias: String?, answer: String?, cutting cut: Cutter?) -> MeteredResult {
        let route = self, cache = self.cache, metrics = self.metrics, source = adapter.source, upstream = self.upstream
        return .deferred { context in
            let started = cache.now
            // Only a load costs the upstream, so the client is worked out off the loop, and charged
            // its quota only if it starts a fetch (an entry found, or a flight joined, is free).
            context.identifyClient()
            // One upstream budget for the whole answer, from when the request arrived.
            let deadline = context.receivedAt + upstream.budgetSeconds
            context.deadline = deadline
            let identity = context.identity, client = context.client, trace = context.trace
            let load = route.loader(prepared)
            var denied: Double?
            var charged = false
            // What the upstream client is told, once for the flight this may start (its Task
            // inherits it): one budget for the whole answer, waiting for another replica
            // included (the bound the front proxy's read timeout must exceed, see
            // deploy/nginx/nginx.conf); whose fair-queue turn it is; the trace. The answer is
            // shared and cached: once a request has left, it completes even if every client
            // waiting for it has gone (a cancelled one only leaves the queue).
            let admitted = await UpstreamRequestContext.with({
                $0.deadline = deadline
                $0.requester = client.map(ClientResolver.key)
                $0.trace = trace
                $0.completesOnceSent = true
            }) {
                await TraceScope.span("cache fetch", [("feedproxy.cache.key", .string(prepared.loadKey))]) { notes in
                    var startedFlight = false
                    func admit() -> Bool {
                        // Asked only when no flight for the key is running: otherwise this joins one.
                        startedFlight = true
                        guard let client else { return true }
                        denied = identity.admit(client)
                        charged = denied == nil
                        return charged
                    }
                    let outcome = await cache.lookupOrFetch(
                        prepared.loadKey, answer: answer, alias: alias, revalidate: bypass, waitUntil: deadline, admit: admit, refreshing: load)
                    Self.note(outcome, startedFlight: startedFlight, into: &notes)
                    return outcome
                }
            }
            let now = cache.now
            guard let outcome = admitted else {
                route.stats?.misses.add()
                context.noteMiss()
                context.logFields = CachedRendering.CacheStatus.miss.logFields
                return Self.clientRateLimited(retryAfter: denied ?? 1, source: source, metrics: metrics)
            }
            if charged, let client, !Self.costTheUpstream(outcome) { identity.refund(client) }
            var response: Response
            switch outcome {
            case .answered(let entry):
                route.stats?.hits.add()
                return CachedRendering.response(entry, for: &context, cacheStatus: .hit, now: now)
            case .fresh(let entry):
                route.stats?.hits.add()
                if let cut { return cut(entry, .hit, &context, now) }
                return CachedRendering.response(entry, for: &context, cacheStatus: .hit, now: now)
            case .stale(let entry):
                return route.stale(entry, prepared, cutting: cut, for: &context, now: now)
            case .loaded(let entry, let origin):
                route.stats?.misses.add()
                if let cut {
                    response = cut(entry, .init(origin), &context, now)
                } else {
                    response = CachedRendering.response(entry, for: &context, cacheStatus: .init(origin), now: now)
                }
            case .staleAfterError(let entry, _):
                route.stats?.misses.add()
                if let cut {
                    response = cut(entry, .stale, &context, now)
                } else {
                    response = CachedRendering.response(entry, for: &context, cacheStatus: .stale, now: now)
                }
            case .failed(let error):
                route.stats?.misses.add()
                response = .error(error.error)
                if error.status == 503 { metrics.recordRejection(source: source, status: 503, reason: error.code) }
                context.logFields = CachedRendering.CacheStatus.miss.logFields
            }
            context.noteMiss()  // what is left went to the upstream: the entries found returned above
            context.logFields.append(("upstream_ms", String(Saturating.milliseconds(now - started))))
            return response
        }
    }

    /// Whether a fetch reached the upstream: not when the shared cache (or another replica's
    /// fetch) answered, nor when it was refused before leaving (rate budget, open circuit).
    static func costTheUpstream(_ outcome: ResponseCache.Outcome) -> Bool {
        switch outcome {
        case .answered, .fresh, .stale: return false
        case .loaded(_, let origin): return origin == .upstream
        case .staleAfterError(_, let error), .failed(let error): return !error.refusedBeforeSending
        }
    }

    /// `429`: this client started more upstream fetches than its quota allows.
    static func clientRateLimited(retryAfter: Double, source: String, metrics: Metrics) -> Response {
        metrics.recordRejection(source: source, status: 429, reason: "client_rate_limited")
        return Response.error(.clientRateLimited(retryAfter: retryAfter))
    }

    /// `Cache-Control: no-cache` (or `Pragma: no-cache`) forces revalidation upstream.
    static func bypassesCache(_ headers: RequestHeaders) -> Bool {
        if let cc = headers["cache-control"]?.lowercased(), cc.contains("no-cache") { return true }
        if let pragma = headers["pragma"]?.lowercased(), pragma.contains("no-cache") { return true }
        return false
    }

    /// Fetch, normalise and encode once; the result is shared by every waiter. Who the upstream
    /// wait is queued under, the trace and the deadline are the caller's `UpstreamRequestContext`
    /// (none for a background refresh, which never waits). A refresh is conditional on the validators of the entry it replaces (ours or another
    /// replica's): a `304` renews that entry's bytes without downloading or parsing again.
    /// `refreshFor`: a background refresh, its own trace linked to the request that found the entry stale.
    func loader(_ prepared: PreparedFeed, refreshFor: TraceContext? = nil) -> ResponseCache.RefreshingLoader {
        let load = fill(prepared), spanSink = self.spanSink
        let attributes: [(String, Span.Value)] = [("feedproxy.source", .string(prepared.source)), ("feedproxy.cache.key", .string(prepared.loadKey))]
        guard let refreshFor else {
            return { previous in
                await TraceScope.span("cache fill", attributes) { notes in
                    let result = await load(previous)
                    if case .failure(let error) = result { notes.error = error.error.code }
                    return result
                }
            }
        }
        return { previous in
            await TraceScope.root("cache refresh", linkedTo: refreshFor, sink: spanSink, attributes) { await load(previous) }
        }
    }

    /// Fetch, normalise and encode once.
    private func fill(_ prepared: PreparedFeed) -> ResponseCache.RefreshingLoader {
        let upstream = self.upstream, cache = self.cache, policy = self.policy, negativeTTL = self.negativeTTL, logger = self.logger
        return { previous in
            let started = cache.now
            let current = previous.flatMap { $0.status == 200 ? $0 : nil }
            do {
                let loaded = try await (await Self.refresh(prepared, startingFrom: cache))(
                    upstream, current.map { PreviousAnswer(validators: $0.revalidation, body: $0.body) })
                let now = cache.now  // one read: what is stored, and what the debug line says
                switch loaded {
                case .notModified(let validators):
                    guard let current else { throw UpstreamError.httpStatus(304) }  // cannot happen: no validators were sent
                    if logger.level <= .debug {
                        logger.log(.debug, "cache renewed (304)", [("key", .string(prepared.loadKey)), ("upstream_ms", .double((now - started) * 1000))])
                    }
                    return .success(current.renewed(storedAt: now, revalidation: validators))
                case .rendered(let representation, let revalidation):
                    if logger.level <= .debug {
                        logger.log(
                            .debug, "cache fill",
                            [("key", .string(prepared.loadKey)), ("bytes", .int(representation.body.count)), ("upstream_ms", .double((now - started) * 1000))])
                    }
                    // Data answers are cut from is not sent as it is (unless it is the whole feed's
                    // answer too): no compressed copy. (Nor is an image compressed again.)
                    let sent = prepared.view?.isAnAnswer ?? true
                    return .success(
                        CachedResponse(sent ? representation.compressed() : representation, storedAt: now, policy: policy, revalidation: revalidation))
                }
            } catch let error as UpstreamError {
                logger.warn(
                    "upstream failed",
                    [
                        ("source", .string(prepared.source)), ("code", .string(error.code)),
                        ("error", .string(error.description)), ("key", .string(prepared.loadKey)),
                    ])
                return .failure(Self.loadError(error, source: prepared.source, negativeTTL: negativeTTL, now: cache.now))
            } catch let error as ClientError {
                if error.status >= 500 {
                    logger.warn(
                        "upstream response unusable",
                        [
                            ("source", .string(prepared.source)), ("code", .string(error.code)),
                            ("key", .string(prepared.loadKey)),
                        ])
                }
                // A definite "not found" (or a file that is not what it says) is remembered
                // briefly, like an upstream 4xx.
                var negative: CachedResponse?
                if [404, 415, 422].contains(error.status), negativeTTL > 0 {
                    negative = CachedResponse(
                        status: error.status, body: error.body, gzippedBody: nil, storedAt: cache.now, policy: .negative(ttl: negativeTTL))
                }
                return .failure(CacheLoadError(error, negativeEntry: negative))
            } catch {
                return .failure(CacheLoadError(status: 502, code: "upstream_error", message: "\(prepared.source) request failed"))
            }
        }
    }

    /// How `prepared` loads: from another route's answer when this replica (or the shared
    /// tier) holds it fresh (a podcast looked up before, `/podcasts/{id}`, names its feed: no
    /// second lookup, on any replica).
    static func refresh(_ prepared: PreparedFeed, startingFrom cache: ResponseCache) async
        -> @Sendable (UpstreamClient, PreviousAnswer?) async throws -> FeedLoad
    {
        guard let start = prepared.view?.startingFrom, let known = await cache.freshAnywhere(start.key), known.status == 200,
            let refresh = start.load(known.body)
        else { return prepared.refresh }
        return refresh
    }

    /// Where a fetch's answer came from, on its span: `coalesced` when it joined another
    /// request's flight (`startedFlight`: the cache asked to start one).
    static func note(_ outcome: ResponseCache.Outcome?, startedFlight: Bool, into notes: inout SpanNotes) {
        switch outcome {
        case nil: notes.set("feedproxy.cache.outcome", .string("refused"))
        case .answered?, .fresh?: notes.set("feedproxy.cache.outcome", .string("hit"))
        case .stale?: notes.set("feedproxy.cache.outcome", .string("stale"))
        case .loaded(_, .upstream)? where !startedFlight: notes.set("feedproxy.cache.outcome", .string("coalesced"))
        case .loaded(_, let origin)?: notes.set("feedproxy.cache.outcome", .string(CachedRendering.CacheStatus(origin).rawValue.lowercased()))
        case .staleAfterError?: notes.set("feedproxy.cache.outcome", .string("stale_if_error"))
        case .failed(let error)?:
            notes.set("feedproxy.cache.outcome", .string("failed"))
            notes.error = error.error.code
        }
    }

    static func loadError(_ error: UpstreamError, source: String, negativeTTL: Double, now: Double) -> CacheLoadError {
        let message = "\(source): \(error.description)"
        var retryAfter: Double?
        switch error {
        case .rateLimited(let after), .circuitOpen(let after), .hostBusy(let after): retryAfter = after
        default: break
        }
        let status = error.clientStatus
        var negative: CachedResponse?
        let client = ClientError(status: status, code: error.code, message: message, retryAfter: retryAfter)
        // Our own refusals and a caller's cancellation say nothing about the upstream: other
        // replicas waiting for this key fetch it themselves instead of answering them.
        let shared = !error.isOwnRefusal && error != .cancelled
        if case .httpStatus(let code) = error, (400..<500).contains(code), code != 429, negativeTTL > 0 {
            negative = CachedResponse(status: status, body: client.body, gzippedBody: nil, storedAt: now, policy: .negative(ttl: negativeTTL))
        }
        return CacheLoadError(client, negativeEntry: negative, sharedWithWaiters: shared, refusedBeforeSending: error.isOwnRefusal)
    }
}
