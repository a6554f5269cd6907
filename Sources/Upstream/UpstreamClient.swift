import Primitives

/// Observes each upstream attempt (for metrics); called from any thread.
public typealias UpstreamObserver = @Sendable (_ upstream: String, _ outcome: String, _ seconds: Double) -> Void

/// The libcurl client the rest of FeedProxy uses: bounded, polite, and typed.
public final class UpstreamClient: Sendable {
    private let driver: CurlDriver
    private let configuration: UpstreamConfiguration
    /// Per upstream: the fair queue (local pacing, and the whole budget without Redis).
    private let queues: [String: FairQueue]
    /// With a shared budget: the local share used while it cannot be reached.
    private let fallbacks: [String: TokenBucket]
    private let breakers: BreakerTable
    /// Connections per publisher's host, shared fairly between clients.
    private let hostSlots: HostSlots
    private let observer: UpstreamObserver?
    private let clock: @Sendable () -> Double

    public init(
        configuration: UpstreamConfiguration, observer: UpstreamObserver? = nil,
        clock: @escaping @Sendable () -> Double = { NativeThread.monotonicSeconds() }
    ) throws {
        self.configuration = configuration
        self.observer = observer
        self.clock = clock
        breakers = BreakerTable(threshold: configuration.breakerThreshold, cooldown: configuration.breakerCooldownSeconds)
        driver = try CurlDriver(
            settings: .init(
                connectTimeoutMs: configuration.connectTimeoutMs, userAgent: configuration.userAgent, maxHostConnections: configuration.maxHostConnections,
                proxy: configuration.proxy))
        hostSlots = HostSlots(limit: configuration.maxHostConnections, clock: clock)
        let now = clock()
        var sources: [String: any TokenSource] = configuration.ratePerMinute.mapValues { perMinute in
            TokenBucket(capacity: Double(TokenCount.burst(perMinute: perMinute)), perSecond: perMinute / 60, now: now)
        }
        let share = Double(max(1, configuration.fallbackReplicas))
        fallbacks =
            configuration.sharedBudget == nil
            ? [:]
            : configuration.ratePerMinute.mapValues { perMinute in
                TokenBucket(capacity: Double(TokenCount.burst(perMinute: perMinute / share)), perSecond: perMinute / share / 60, now: now)
            }
        sources.merge(configuration.tokenSources) { _, given in given }
        let settings = FairQueue.Settings(perClient: max(1, configuration.queuePerClient))
        queues = sources.mapValues { FairQueue(source: $0, settings: settings, clock: clock) }
    }

    /// How many budgets background work (no deadline of its own) may wait for a busy host.
    static let backgroundHostWaitBudgets = 4.0

    /// The default time budget of one request, in seconds.
    public var budgetSeconds: Double { Double(configuration.timeoutMs) / 1000 }

    /// The least of its budget a transfer starts with once it waited for the host: a second,
    /// or a quarter of a shorter budget.
    static func leastTransferMs(of fullBudgetMs: Int) -> Int { max(1, min(1000, fullBudgetMs / 4)) }

    /// Waits for a connection to a busy host, for metrics.
    public func hostSlotStats() -> HostSlots.Stats { hostSlots.stats }

    /// Fair-queue counters by upstream name, for metrics.
    public func queueStats() -> [(upstream: String, stats: FairQueue.Stats)] {
        queues.map { ($0.key, $0.value.stats) }.sorted { $0.upstream < $1.upstream }
    }

    deinit { driver.stop() }

    /// Live libcurl easy handles (for leak checks).
    public static var liveHandles: Int { CurlDriver.liveHandles }

    /// The breaker an API host's requests share, created on first use.
    public func breaker(forHost host: String) -> CircuitBreaker {
        breakers.breaker(.init(name: host, perFeed: false))
    }

    /// The breaker a request goes through: its API host's, or its own feed URL's (a URL
    /// without a host is its own key).
    func breaker(for request: UpstreamRequest) -> CircuitBreaker {
        breakers.breaker(BreakerTable.key(for: request, host: request.target.host ?? request.url))
    }

    /// Breaker states by API host, for metrics.
    public func breakerStates() -> [(host: String, state: CircuitBreaker.State)] { breakers.snapshot(now: clock()).hosts }

    /// Feed-URL breakers counted by state, for metrics.
    public func feedBreakerCounts() -> BreakerCounts { breakers.snapshot(now: clock()).feeds }

    /// Sends the request: rate limit, circuit breaker, one jittered retry for idempotent
    /// requests, all inside one time budget. Non-2xx answers throw `.httpStatus`.
    public func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        let breaker = breaker(for: request)
        let fullBudgetMs = request.timeoutSeconds.map(Saturating.milliseconds) ?? configuration.timeoutMsByUpstream[request.upstream] ?? configuration.timeoutMs
        var budgetMs = fullBudgetMs
        var start = clock()
        let context = UpstreamRequestContext.current
        if let deadline = context.deadline {
            budgetMs = min(budgetMs, Saturating.milliseconds(deadline - start))
            guard budgetMs > 0 else { throw .timeout }
        }
        var attempt = 0
        while true {
            attempt += 1
            let now = clock()
            let admitted = breaker.admit(now: now)
            guard admitted.allowed else {
                observer?(request.upstream, "circuit_open", 0)
                throw .circuitOpen(retryAfter: admitted.retryAfter)
            }
            var sent = now
            if let queue = queues[request.upstream] {
                let leftMs = budgetMs - Saturating.milliseconds(now - start)
                let maxWait = Double(min(configuration.queueWaitMs, max(leftMs, 0))) / 1000
                let waiting = LeafSpan.start()
                let turn = await queue.acquire(client: context.requester, maxWait: maxWait)
                waiting?.end("upstream queue", [("feedproxy.upstream", .string(request.upstream))])
                switch turn {
                case .granted(let waited):
                    if waited > 0 { sent = clock() }
                case .rejected(let reason, let retryAfter):
                    breaker.releaseProbe()  // not the upstream's fault
                    if reason == .cancelled { throw .cancelledWhileQueued }
                    configuration.rateObserver?(request.upstream, "local", false)
                    observer?(request.upstream, "rate_limited", 0)
                    throw .rateLimited(retryAfter: retryAfter)
                }
                configuration.rateObserver?(request.upstream, "local", true)
            }
            if configuration.sharedBudget != nil, let perMinute = configuration.ratePerMinute[request.upstream] {
                let leftMs = budgetMs - Saturating.milliseconds(clock() - start)
                let maxWait = Double(min(configuration.queueWaitMs, max(leftMs, 0))) / 1000
                let grant = await sharedToken(request.upstream, perMinute: perMinute, maxWait: maxWait)
                guard grant.granted else {
                    breaker.releaseProbe()
                    observer?(request.upstream, "rate_limited", 0)
                    throw .rateLimited(retryAfter: grant.retryAfter)
                }
                sent = clock()
            }
            // A connection to the host, in a fair turn among the clients waiting for one, up to the
            // caller's deadline (background work, which has none: a few budgets, enough for a
            // thousand feeds of one hosting platform to be refreshed by one replica). Waited for,
            // the transfer still has its budget, within that deadline: a feed queued behind a
            // hosting platform's others is not cut short for the wait.
            let hostKey = request.target.hostAndPort
            if let hostKey {
                let waitUntil = context.deadline ?? (start + Self.backgroundHostWaitBudgets * Double(budgetMs) / 1000)
                switch await hostSlots.acquire(host: hostKey, client: context.requester, deadline: waitUntil) {
                case .granted(let waited):
                    if waited > 0 {
                        sent = clock()
                        start = sent
                        budgetMs = min(fullBudgetMs, context.deadline.map { Saturating.milliseconds($0 - sent) } ?? fullBudgetMs)
                        // Too little left to be answered: the host is not asked (a request cut
                        // short costs the publisher its answer for nothing, and the next ask
                        // downloads the feed again).
                        guard budgetMs >= Self.leastTransferMs(of: fullBudgetMs) else {
                            hostSlots.release(host: hostKey)
                            breaker.releaseProbe()
                            observer?(request.upstream, "host_busy", 0)
                            throw .hostBusy(retryAfter: 1)
                        }
                    }
                case .timedOut:
                    breaker.releaseProbe()
                    observer?(request.upstream, "host_busy", 0)
                    throw .hostBusy(retryAfter: 1)
                case .cancelled:
                    breaker.releaseProbe()
                    throw .cancelledWhileQueued
                }
            }
            let remainingMs = budgetMs - Saturating.milliseconds(sent - start)
            let timeoutMs = max(remainingMs, 1), completesOnceSent = context.completesOnceSent, fallbackTrace = context.trace
            // Each attempt is a client span (OpenTelemetry's HTTP client conventions); the
            // upstream sees it as its parent. Its attributes are built only when it is recorded.
            let result = await TraceScope.span(request.method.rawValue, kind: .client, UpstreamSpan.attributes(request, attempt: attempt)) {
                notes -> Result<UpstreamResponse, UpstreamError> in
                let traced = Self.traced(request, in: TraceScope.current?.trace ?? fallbackTrace, parent: TraceScope.current?.trace.spanID)
                let result: Result<UpstreamResponse, UpstreamError>
                if completesOnceSent {
                    // Not a child task: the caller's cancellation does not reach the transfer.
                    result = await Task { await self.attemptOnce(traced, timeoutMs: timeoutMs) }.value
                } else {
                    result = await attemptOnce(traced, timeoutMs: timeoutMs)
                }
                UpstreamSpan.note(result, into: &notes)
                return result
            }
            if let hostKey { hostSlots.release(host: hostKey) }
            let elapsed = clock() - sent
            switch result {
            case .success(let response):
                breaker.record(success: true, now: clock())
                observer?(request.upstream, response.isNotModified ? "not_modified" : "ok", elapsed)
                return response
            case .failure(let error):
                breaker.record(success: !error.isUpstreamFault, now: clock())
                observer?(request.upstream, error.code, elapsed)
                let backoffMs = Int.random(in: 100...300)
                let left = budgetMs - Saturating.milliseconds(clock() - start)
                guard attempt == 1, request.isIdempotent, error.isRetryable, left > backoffMs + 200 else { throw error }
                try? await Task.sleep(for: .milliseconds(backoffMs))
                if Task.isCancelled { throw .cancelled }
            }
        }
    }

    /// `traceparent` or `tracestate` in any case; only a name of their length is lowercased.
    private static func isTraceField(_ name: String) -> Bool {
        switch name.utf8.count {
        case 11: return name.lowercased() == "traceparent"
        case 10: return name.lowercased() == "tracestate"
        default: return false
        }
    }

    /// The request with `traceparent` (and `tracestate`) for one attempt: the caller's trace,
    /// or a new one, with a new span id as the parent the upstream sees.
    static func traced(_ request: UpstreamRequest, in trace: TraceContext?, parent: UInt64? = nil) -> UpstreamRequest {
        var ids = TraceIDs()
        let trace = trace ?? TraceContext(traceHigh: ids.next(), traceLow: ids.next(), spanID: 0)
        var r = request
        r.headers.removeAll { isTraceField($0.0) }
        r.headers.append(("traceparent", trace.traceparent(parent: parent ?? ids.next())))
        if let state = trace.state { r.headers.append(("tracestate", state)) }
        return r
    }

    /// Up to a tenth of a minute's budget at once (20/min → 4), at least one.

    /// A token from the budget all replicas share, after this replica's fair queue: waits
    /// for it up to `maxWait`; while the shared budget cannot be reached, this replica's
    /// fallback share decides at once.
    private func sharedToken(_ upstream: String, perMinute: Double, maxWait: Double) async -> RateDecision {
        guard let shared = configuration.sharedBudget else { return RateDecision(granted: true, retryAfter: 0) }
        let deadline = clock() + maxWait
        while true {
            guard let decision = await shared.take(upstream, perMinute: perMinute, burst: TokenCount.burst(perMinute: perMinute)) else {
                guard let bucket = fallbacks[upstream] else { return RateDecision(granted: true, retryAfter: 0) }
                let grant = bucket.take(now: clock())
                configuration.rateObserver?(upstream, "fallback", grant.granted)
                return RateDecision(granted: grant.granted, retryAfter: grant.retryAfter)
            }
            configuration.rateObserver?(upstream, "shared", decision.granted)
            if decision.granted || clock() + decision.retryAfter > deadline || Task.isCancelled { return decision }
            try? await Task.sleep(for: .seconds(decision.retryAfter))
            // Cancelled while waiting: take no token for a request nobody will send.
            if Task.isCancelled { return RateDecision(granted: false, retryAfter: decision.retryAfter) }
        }
    }

    private func attemptOnce(_ request: UpstreamRequest, timeoutMs: Int) async -> Result<UpstreamResponse, UpstreamError> {
        do {
            let response = try await driver.perform(request, timeoutMs: timeoutMs, maxBodyBytes: request.maxBodyBytes ?? configuration.maxBodyBytes)
            guard (200..<300).contains(response.status) || (response.status == 304 && request.revalidation != nil) else {
                return .failure(.httpStatus(response.status))
            }
            return .success(response)
        } catch let error as UpstreamError {
            return .failure(error)
        } catch {
            return .failure(.other("unexpected"))
        }
    }
}
