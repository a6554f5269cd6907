import Observability
import Push
import Feeds
import HTTPServer
import Primitives
import RedisTier
import ResponseCache
import Upstream

/// Step one of the wiring: everything the routes stand on, configured from the settings —
/// logging, metrics, the optional Redis tier, the upstream client, the cache, client identity.
struct Services: Sendable {
    let configuration: Configuration
    let logger: Logger
    let metrics: Metrics
    let redis: RedisConnection?
    let upstream: UpstreamClient
    let cache: ResponseCache
    /// Who the client is (behind `TRUSTED_PROXIES`), for the access log and spans.
    let clientResolver: ClientResolver
    /// Client identity, on misses, and the miss quota.
    let clients: ClientMetering
    /// Where spans go, when trace export is configured.
    let tracing: SpanExporter?
    /// The image proxy's signer and decoders, when `IMAGE_PROXY_KEY` is set.
    let images: ImageServices?
    /// This replica's podcast lookups, shared by `/podcasts/{id}` and every episodes load.
    let podcastLookups: PodcastLookups
    /// Where feed ids' URLs are remembered (here and in the shared tier).
    let feedRegistry: FeedRegistry
    /// This replica's event streams and the reads that keep their feeds warm.
    let episodeEvents: EpisodeEventHub
    /// The podcast feeds' adapter and its cached loads, built once for all their routes.
    let podcastFeeds: PodcastFeeds
    /// Announced when draining starts (`/readyz` turns 503); the server reads it too.
    let shutdown = ShutdownPhase()
    /// The server's connection counts, for `/metrics`.
    let statistics = ServerStatistics()

    init(_ c: Configuration, logLanes: Int) throws {
        configuration = c
        let logger = Logger(level: c.logLevel, sink: LogSink(lanes: logLanes))
        let export = TraceExport.settings(c)
        let traceMetrics = export.map { _ in TraceMetrics() }
        let images = ImageServices(c)
        self.images = images
        let metrics = Metrics(
            routes: RouteDeclaration.all.map(\.name.path),
            sources: UpstreamCatalog.sources,
            tracing: traceMetrics, version: Configuration.version)
        tracing = export.flatMap { settings in traceMetrics.map { SpanExporter(settings: settings, metrics: $0, logger: logger) } }
        self.logger = logger
        self.metrics = metrics
        let redis = Self.redisEndpoint(c).map { Self.redisConnection($0, c, metrics: metrics, logger: logger) }
        self.redis = redis

        var upstreamConfig = UpstreamConfiguration(c)
        upstreamConfig.rateObserver = { metrics.shared.rateDecision(upstream: $0, mode: $1, granted: $2) }
        upstreamConfig.sharedBudget = redis.map { RedisRateBudget(connection: $0, prefix: c.redisKeyPrefix) }
        upstream = try UpstreamClient(configuration: upstreamConfig) { source, outcome, seconds in
            metrics.recordUpstream(source: source, outcome: outcome, seconds: seconds)
        }
        // A bound for a holder that never finishes: its fetch may wait budgets for a busy host
        // (a background refresh up to four), then look up and download within one each.
        var sharedPolicy = SharedTierPolicy(waitLimit: 6 * Double(c.upstreamTimeoutMs) / 1000 + 2, maxValueBytes: c.l2MaxValueBytes)
        // New episode data, whoever read it, is word for other replicas' event streams.
        sharedPolicy.announcedKeyPrefix = String(EpisodesAdapter.dataKey(0).dropLast())
        // A Redis late by up to one more deadline is waited for (no second download); a stopped
        // one costs a miss at most three deadlines.
        sharedPolicy.lateAnswerWait = Double(c.redisTimeoutMs) / 1000
        let changes = redis.map { RedisChangeFeed(connection: $0, prefix: c.redisKeyPrefix) }
        cache = ResponseCache(
            maxBytes: c.cacheMaxBytes, clock: { NativeThread.monotonicSeconds() },
            shared: redis.map {
                RedisSharedCache(
                    connection: $0, prefix: c.redisKeyPrefix, fingerprint: SchemaFingerprint.compute(c),
                    failureCodes: UpstreamError.codes.union(ClientError.feedCodes))
            },
            sharedPolicy: sharedPolicy, sharedObserver: { metrics.shared.l2($0.metricName) }, changes: changes)
        // Declared with the lookup endpoint (Catalog/): every podcast looked up is shared as its answer.
        let records = FeedRecordStore.open(c, redis: redis, logger: logger)
        podcastLookups = PodcastLookups(c, sharingIn: cache, records: records)
        feedRegistry = FeedRegistry(c, sharingIn: cache, records: records)
        var websub: WebSubSubscriber?
        if let key = c[Setting.websubKey], let base = c[Setting.publicBaseURL] {
            websub = WebSubSubscriber(
                settings: WebSubSubscriber.Settings(publicBaseURL: base, key: key, lease: c[Setting.websubLease], allowPrivateHosts: c.allowPrivateFeedHosts),
                upstream: upstream, cache: cache)
        }
        episodeEvents = EpisodeEventHub(
            cache: cache, changes: changes,
            limits: EpisodeEventHub.Limits(
                streams: c[Setting.eventStreamsMax], streamsPerClient: c[Setting.eventStreamsPerClient],
                refreshBounds: min(c[Setting.watchRefreshMin], c[Setting.watchRefreshMax])...c[Setting.watchRefreshMax],
                refreshesPerMinute: Double(c[Setting.watchRefreshesPerMinute])),
            websub: websub, records: records, pings: redis.map { RedisPingQueue(connection: $0, prefix: c.redisKeyPrefix) })
        let adapter = EpisodesAdapter(c, lookups: podcastLookups, registry: feedRegistry)
        let feedRoutes = Self.feedRoutes(c, cache: cache, upstream: upstream, metrics: metrics, logger: logger, spanSink: tracing)
        podcastFeeds = PodcastFeeds(
            adapter: adapter, episodes: feedRoutes(adapter, c[Setting.ttlEpisodes]), chapters: feedRoutes(adapter, c[Setting.ttlChapters]),
            transcripts: feedRoutes(adapter, c[Setting.ttlTranscripts]), batchAnswers: AnswerAllowance(ceiling: c[Setting.episodesBatchDeadline] / 4))
        // The streams' hub reads watched feeds through the episodes' loads (as /episodes would).
        let read = EpisodeEventsRoute.refresher(adapter: adapter, feeds: podcastFeeds.episodes, hub: episodeEvents)
        episodeEvents.setRefresher({ id, reason in Task.detached { await read(id, reason) } }, reading: read)
        let resolver = ClientResolver(trusted: c.trustedProxies)
        clientResolver = resolver
        let quota = c.clientMissRatePerMinute > 0
        clients = ClientMetering(
            resolver: resolver, limiter: quota ? ClientLimiter(perMinute: c.clientMissRatePerMinute, maxClients: c.clientStateMax) : nil,
            untrustedForwarding: quota ? UntrustedForwarding(logger: logger) : nil, clock: { NativeThread.monotonicSeconds() })
    }

    /// A feed route over these services, with the route's TTL.
    func feedRoute(_ adapter: any FeedAdapter, ttl: Double) -> FeedRoute {
        Self.feedRoutes(configuration, cache: cache, upstream: upstream, metrics: metrics, logger: logger, spanSink: tracing)(adapter, ttl)
    }

    /// Feed routes over these parts (what `feedRoute` makes, before the services are whole).
    static func feedRoutes(
        _ c: Configuration, cache: ResponseCache, upstream: UpstreamClient, metrics: Metrics, logger: Logger, spanSink: SpanExporter?
    ) -> (any FeedAdapter, Double) -> FeedRoute {
        { adapter, ttl in
            FeedRoute(
                adapter: adapter,
                policy: FreshnessPolicy(ttl: ttl, staleWhileRevalidate: ttl * c.staleWhileRevalidateFactor, staleIfError: c.staleIfError),
                negativeTTL: c.negativeTTL, cache: cache, upstream: upstream, metrics: metrics, stats: metrics.caches[adapter.source], logger: logger,
                spanSink: spanSink)
        }
    }

    /// The one Redis connection of this process; its failures are counted and logged
    /// once per change of state, never passed on to clients.
    /// Where Redis is: `REDIS_URL`, or (with sentinels) only its credentials and database;
    /// `REDIS_PASSWORD`/`_FILE` win over the URL's password. nil: no shared tier.
    static func redisEndpoint(_ c: Configuration) -> RedisEndpoint? {
        guard c.redis != nil || !c.redisSentinels.isEmpty else { return nil }
        var endpoint = c.redis ?? RedisEndpoint(host: "sentinel", port: 6379)
        if let password = c.redisPassword { endpoint.password = password }
        return endpoint
    }

    private static func redisConnection(_ endpoint: RedisEndpoint, _ c: Configuration, metrics: Metrics, logger: Logger) -> RedisConnection {
        metrics.shared.redisState(up: false)
        let address = c.redisSentinels.isEmpty ? "\(endpoint.host):\(endpoint.port)" : "sentinel master \(c.redisSentinelMaster ?? "")"
        return RedisConnection(settings: RedisConnection.Settings(endpoint, c)) { event in
            switch event {
            case .command(let operation, let outcome):
                metrics.shared.redisCommand(operation: operation, outcome: outcome)
            case .state(let up, let reason):
                metrics.shared.redisState(up: up)
                let fields: [(String, LogValue)] = [("redis", .string(address)), ("reason", .string(reason))]
                if up { logger.info("redis up", fields) } else { logger.warn("redis down: serving from this replica alone", fields) }
            case .latency(let operation, let seconds):
                metrics.shared.redisLatency(operation: operation, seconds: seconds)
            case .reconnected:
                metrics.shared.redisReconnected()
            case .failover(let from, let to):
                metrics.shared.redisFailover()
                logger.warn("redis primary moved", [("from", .string(from)), ("to", .string(to))])
            case .evictionPolicy(let policy):
                // volatile-*: the cache (every entry has a TTL) is evicted, the records (none) are
                // kept. allkeys-* would evict an app's feed ids; noeviction refuses writes when full.
                metrics.shared.redisEvictionPolicy(ok: policy.map { $0.hasPrefix("volatile-") })
                if let policy, !policy.hasPrefix("volatile-") {
                    logger.warn(
                        "redis maxmemory-policy is not volatile-*: a full Redis either evicts the records (feed ids given out) or refuses new cache entries",
                        [("maxmemory_policy", .string(policy))])
                }
            }
        }
    }
}
