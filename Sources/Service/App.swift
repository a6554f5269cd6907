import Feeds
import FixtureUpstream
import HTTPServer
import Locking
import RedisTier
import ResponseCache
import Upstream

/// FeedProxy assembled: upstream client, adapters, cache, routes, server.
public final class App: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    private let server: Server
    private let fixtures: FixtureUpstream?
    private let draining = Draining()
    private let redis: RedisConnection?

    public init(configuration original: Configuration) throws {
        var configuration = original
        var serverConfig = ServerConfiguration()
        serverConfig.threads = configuration.threads
        serverConfig.cpuAffinity = configuration.cpuAffinity
        // One log lane per event loop, plus one for every other thread.
        let logger = Logger(level: configuration.logLevel, sink: LogSink(lanes: serverConfig.resolvedThreads + 1))
        self.logger = logger
        if let directory = configuration.fixturesDirectory {
            let fx = try FixtureUpstream(directory: directory)
            configuration.flickrFeedURL = fx.flickrURL
            configuration.itunesSearchURL = fx.itunesSearchURL
            configuration.itunesLookupURL = fx.itunesLookupURL
            configuration.kivaGraphQLURL = fx.kivaGraphQLURL
            if configuration.kivaLoansURL != nil { configuration.kivaLoansURL = fx.kivaRESTURL }
            configuration.allowPrivateFeedHosts = true
            fixtures = fx
        } else {
            fixtures = nil
        }
        self.configuration = configuration
        let c = configuration

        let metrics = Metrics(
            routes: ["/", "/photos", "/podcasts", "/podcasts/:id/episodes", "/loans", "/healthz", "/readyz", "/metrics", "/openapi.json"],
            sources: ["flickr", "itunes", "kiva", "episodes"])
        var upstreamConfig = UpstreamConfiguration()
        upstreamConfig.connectTimeoutMs = c.upstreamConnectTimeoutMs
        upstreamConfig.timeoutMs = c.upstreamTimeoutMs
        upstreamConfig.maxBodyBytes = c.upstreamMaxBodyBytes
        upstreamConfig.userAgent = c.userAgent
        upstreamConfig.proxy = c.upstreamProxy
        upstreamConfig.breakerThreshold = c.breakerThreshold
        upstreamConfig.breakerCooldownSeconds = c.breakerCooldown
        upstreamConfig.ratePerMinute = ["itunes": c.rateITunesPerMinute, "kiva": c.rateKivaPerMinute, "flickr": c.rateFlickrPerMinute]
        upstreamConfig.rateObserver = { metrics.shared.rateDecision(upstream: $0, mode: $1, granted: $2) }
        let redis = try c.redisURL.map { try Self.redisConnection($0, c, metrics: metrics, logger: logger) }
        self.redis = redis
        var sharedCache: RedisSharedCache?
        if let redis {
            upstreamConfig.sharedBudget = RedisRateBudget(connection: redis)
            upstreamConfig.fallbackReplicas = c.rateFallbackReplicas
            sharedCache = RedisSharedCache(connection: redis, fingerprint: SchemaFingerprint.compute(c))
        }
        upstreamConfig.queueWaitMs = c.upstreamQueueWaitMs
        upstreamConfig.queuePerClient = c.upstreamQueuePerClient
        let clients = ClientPolicy(
            resolver: ClientResolver(trusted: c.trustedProxies),
            limiter: c.clientMissRatePerMinute > 0 ? ClientLimiter(perMinute: c.clientMissRatePerMinute, maxClients: c.clientStateMax) : nil,
            untrustedForwarding: c.clientMissRatePerMinute > 0 ? UntrustedForwarding(logger: logger) : nil)
        let upstream = try UpstreamClient(configuration: upstreamConfig) { source, outcome, seconds in
            metrics.recordUpstream(source: source, outcome: outcome, seconds: seconds)
        }
        let cache = ResponseCache(
            maxBytes: c.cacheMaxBytes, clock: { NativeThread.monotonicSeconds() }, shared: sharedCache,
            sharedPolicy: SharedTierPolicy(waitLimit: Double(c.upstreamTimeoutMs) / 1000, maxValueBytes: c.l2MaxValueBytes),
            sharedObserver: { metrics.shared.l2($0.metricName) })

        func policy(_ ttl: Double) -> FreshnessPolicy {
            FreshnessPolicy(ttl: ttl, staleWhileRevalidate: ttl * c.staleWhileRevalidateFactor, staleIfError: c.staleIfError)
        }
        func route(_ adapter: any FeedAdapter, ttl: Double) -> FeedRoute {
            FeedRoute(
                adapter: adapter, policy: policy(ttl), negativeTTL: c.negativeTTL, cache: cache, upstream: upstream, metrics: metrics, logger: logger,
                clients: clients)
        }
        let photos = route(FlickrAdapter(feedURL: c.flickrFeedURL), ttl: c.ttlPhotos)
        let podcasts = route(ITunesAdapter(searchURL: c.itunesSearchURL), ttl: c.ttlPodcasts)
        let kivaAPI: KivaAdapter.API = c.kivaLoansURL.map { .rest(url: $0) } ?? .graphQL(url: c.kivaGraphQLURL)
        let loans = route(KivaAdapter(api: kivaAPI), ttl: c.ttlLoans)

        let episodes = route(
            EpisodesAdapter(lookupURL: c.itunesLookupURL, maxFeedBytes: c.feedMaxBodyBytes, allowPrivateHosts: c.allowPrivateFeedHosts), ttl: c.ttlEpisodes)

        var router = Router()
        router.get("/photos", photos.handle)
        router.get("/podcasts/:id/episodes", episodes.handle)
        router.get("/podcasts", podcasts.handle)
        router.get("/loans", loans.handle)

        serverConfig.host = c.host
        serverConfig.port = c.port
        serverConfig.headerTimeout = c.headerTimeout
        serverConfig.idleTimeout = c.idleTimeout
        serverConfig.writeTimeout = c.writeTimeout
        serverConfig.drainTimeout = c.drainTimeout
        serverConfig.maxConnections = c.maxConnections
        serverConfig.corsOrigin = c.corsOrigin.isEmpty ? nil : c.corsOrigin
        let counter = ConnectionCounter()
        OperationalRoutes(
            metrics: metrics, cache: cache, upstream: upstream, draining: draining, logger: logger, openConnections: { counter.value },
            loopConnections: { counter.perLoop }, connectionsMoved: { counter.moved }, trackedClients: { clients.limiter?.trackedClients ?? 0 },
            untrustedForwarded: { clients.untrustedForwarding?.count ?? 0 }
        )
        .register(on: &router)
        server = Server(configuration: serverConfig, router: router, observer: RequestObserver(metrics: metrics, logger: logger, clients: clients.resolver))
        counter.server = server
    }

    /// Binds and starts serving; returns the port.
    public func start() throws -> Int {
        try server.start()
        return server.port
    }

    /// Graceful: readiness goes 503, listeners close, in-flight requests finish.
    public func shutdown() {
        draining.begin()
        if configuration.shutdownDelay > 0 { NativeThread.sleep(seconds: configuration.shutdownDelay) }
        server.shutdown()
        redis?.stop()
        fixtures?.stop()
    }

    /// The one Redis connection of this process; its failures are counted and logged
    /// once per change of state, never passed on to clients.
    private static func redisConnection(_ url: String, _ c: Configuration, metrics: Metrics, logger: Logger) throws -> RedisConnection {
        var settings = RedisConnection.Settings(endpoint: try RedisEndpoint(url: url))
        settings.commandTimeoutMs = c.redisTimeoutMs
        settings.connectTimeoutMs = c.redisConnectTimeoutMs
        settings.scripts = RedisConnection.tierScripts
        metrics.shared.redisState(up: false)
        let host = settings.endpoint.host, port = settings.endpoint.port
        return RedisConnection(settings: settings) { event in
            switch event {
            case .command(let operation, let outcome):
                metrics.shared.redisCommand(operation: operation, outcome: outcome)
            case .state(let up, let reason):
                metrics.shared.redisState(up: up)
                let fields: [(String, LogValue)] = [("redis", .string("\(host):\(port)")), ("reason", .string(reason))]
                if up { logger.info("redis up", fields) } else { logger.warn("redis down: serving from this replica alone", fields) }
            }
        }
    }

    public var fixtureUpstreamURL: String? { fixtures?.baseURL }
    /// The CPUs the event loops are pinned to ("0,1"), or "off" when the kernel's hash spreads connections.
    public var cpuPlacement: String { server.placement.map { $0.cpus.map(String.init).joined(separator: ",") } ?? "off" }
}

/// Lets `/metrics` read the server's connection count (the server is built after its routes).
final class ConnectionCounter: @unchecked Sendable {
    // Written once during App.init before the server starts; read-only afterwards.
    nonisolated(unsafe) var server: Server?
    var value: Int { server?.openConnections ?? 0 }
    var perLoop: [Int] { server?.connectionsPerLoop ?? [] }
    var moved: Int { server?.connectionsMoved ?? 0 }
}
