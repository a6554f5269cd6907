import FoundationEssentials
import Locking

/// Settings for the whole client and per upstream.
public struct UpstreamConfiguration: Sendable {
    public var connectTimeoutMs = 2000
    public var timeoutMs = 8000
    public var maxBodyBytes = 8 << 20
    public var userAgent = "FeedProxy/1.0"
    public var breakerThreshold = 5
    public var breakerCooldownSeconds = 30.0
    /// Requests per minute allowed per upstream name (absent: unlimited).
    public var ratePerMinute: [String: Double] = [:]
    /// Total timeout per upstream name, overriding `timeoutMs`.
    public var timeoutMsByUpstream: [String: Int] = [:]
    /// One budget for all replicas; when it cannot be reached each replica uses a local
    /// bucket at `ratePerMinute / fallbackReplicas`, so a fallback never multiplies the budget.
    public var sharedBudget: (any SharedRateBudget)?
    public var fallbackReplicas = 1
    public var rateObserver: RateDecisionObserver?

    public init() {}
}

/// Observes each upstream attempt (for metrics); called from any thread.
public typealias UpstreamObserver = @Sendable (_ upstream: String, _ outcome: String, _ seconds: Double) -> Void

/// The libcurl client the rest of FeedProxy uses: bounded, polite, and typed.
public final class UpstreamClient: Sendable {
    private let driver: CurlDriver
    private let configuration: UpstreamConfiguration
    /// Local buckets: the budget itself without a shared one, the fallback share with one.
    private let buckets: [String: TokenBucket]
    private let breakers = Locked<[String: CircuitBreaker]>([:])
    private let observer: UpstreamObserver?
    private let clock: @Sendable () -> Double

    public init(
        configuration: UpstreamConfiguration, observer: UpstreamObserver? = nil,
        clock: @escaping @Sendable () -> Double = { NativeThread.monotonicSeconds() }
    ) throws {
        self.configuration = configuration
        self.observer = observer
        self.clock = clock
        driver = try CurlDriver(settings: .init(connectTimeoutMs: configuration.connectTimeoutMs, userAgent: configuration.userAgent))
        let now = clock()
        let share = configuration.sharedBudget == nil ? 1 : Double(max(1, configuration.fallbackReplicas))
        buckets = configuration.ratePerMinute.mapValues { perMinute in
            TokenBucket(capacity: Double(Self.burst(perMinute / share)), perSecond: perMinute / share / 60, now: now)
        }
    }

    deinit { driver.stop() }

    /// Live libcurl easy handles (for leak checks).
    public static var liveHandles: Int { CurlDriver.liveHandles }

    /// The breaker for a host, created on first use.
    public func breaker(forHost host: String) -> CircuitBreaker {
        breakers.withLock { all in
            if let b = all[host] { return b }
            let b = CircuitBreaker(threshold: configuration.breakerThreshold, cooldown: configuration.breakerCooldownSeconds)
            all[host] = b
            return b
        }
    }

    /// Breaker states by host, for metrics.
    public func breakerStates() -> [(host: String, state: CircuitBreaker.State)] {
        let now = clock()
        return breakers.withLock { $0.map { ($0.key, $0.value.state(now: now)) } }.sorted { $0.host < $1.host }
    }

    /// Sends the request: rate limit, circuit breaker, one jittered retry for idempotent
    /// requests, all inside one time budget. Non-2xx answers throw `.httpStatus`.
    public func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        let host = URLComponents(string: request.url)?.host ?? request.url
        let breaker = breaker(forHost: host)
        let budgetMs = request.timeoutSeconds.map { Int($0 * 1000) } ?? configuration.timeoutMsByUpstream[request.upstream] ?? configuration.timeoutMs
        let start = clock()
        var attempt = 0
        while true {
            attempt += 1
            let now = clock()
            let admitted = breaker.admit(now: now)
            guard admitted.allowed else {
                observer?(request.upstream, "circuit_open", 0)
                throw .circuitOpen(retryAfter: admitted.retryAfter)
            }
            if let perMinute = configuration.ratePerMinute[request.upstream] {
                let grant = await takeToken(request.upstream, perMinute: perMinute, now: now)
                guard grant.granted else {
                    breaker.releaseProbe()  // not the upstream's fault
                    observer?(request.upstream, "rate_limited", 0)
                    throw .rateLimited(retryAfter: grant.retryAfter)
                }
            }
            let remainingMs = budgetMs - Int((now - start) * 1000)
            let result = await attemptOnce(request, timeoutMs: max(remainingMs, 1))
            let elapsed = clock() - now
            switch result {
            case .success(let response):
                breaker.record(success: true, now: clock())
                observer?(request.upstream, "ok", elapsed)
                return response
            case .failure(let error):
                breaker.record(success: !error.isUpstreamFault, now: clock())
                observer?(request.upstream, error.code, elapsed)
                let backoffMs = Int.random(in: 100...300)
                let left = budgetMs - Int((clock() - start) * 1000)
                guard attempt == 1, request.isIdempotent, error.isRetryable, left > backoffMs + 200 else { throw error }
                try? await Task.sleep(for: .milliseconds(backoffMs))
                if Task.isCancelled { throw .cancelled }
            }
        }
    }

    /// Up to a tenth of a minute's budget at once (20/min → 4), at least one.
    static func burst(_ perMinute: Double) -> Int { max(1, Int((perMinute / 6).rounded(.up))) }

    private func takeToken(_ upstream: String, perMinute: Double, now: Double) async -> RateDecision {
        if let shared = configuration.sharedBudget, let decision = await shared.take(upstream, perMinute: perMinute, burst: Self.burst(perMinute)) {
            configuration.rateObserver?(upstream, "shared", decision.granted)
            return decision
        }
        guard let bucket = buckets[upstream] else { return RateDecision(granted: true, retryAfter: 0) }
        let grant = bucket.take(now: clock())
        configuration.rateObserver?(upstream, configuration.sharedBudget == nil ? "local" : "fallback", grant.granted)
        return RateDecision(granted: grant.granted, retryAfter: grant.retryAfter)
    }

    private func attemptOnce(_ request: UpstreamRequest, timeoutMs: Int) async -> Result<UpstreamResponse, UpstreamError> {
        do {
            let response = try await driver.perform(request, timeoutMs: timeoutMs, maxBodyBytes: request.maxBodyBytes ?? configuration.maxBodyBytes)
            guard (200..<300).contains(response.status) else { return .failure(.httpStatus(response.status)) }
            return .success(response)
        } catch let error as UpstreamError {
            return .failure(error)
        } catch {
            return .failure(.other("unexpected"))
        }
    }
}
