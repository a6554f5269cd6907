import Feeds
import HTTPServer
import Primitives
import RedisTier
import Upstream

/// FeedProxy assembled in two steps: configure the services the routes stand on, then
/// build every route of `RouteName` over them and serve.
public final class App: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    private let server: Server
    private let shutdownPhase = ShutdownPhase()
    private let redis: RedisConnection?
    private let tracing: SpanExporter?

    public init(configuration c: Configuration) throws {
        configuration = c
        var serverConfig = ServerConfiguration(c)
        // One log lane per event loop, plus one for every other thread.
        let services = try Services(c, logLanes: serverConfig.resolvedThreads + 1)
        logger = services.logger
        redis = services.redis
        tracing = services.tracing
        serverConfig.spanSink = services.tracing

        let statistics = ServerStatistics()
        let operational = OperationalRoutes(services: services, shutdown: shutdownPhase, statistics: statistics)
        let kivaAPI: KivaAdapter.API = c.kivaLoansURL.map { .rest(url: $0) } ?? .graphQL(url: c.kivaGraphQLURL)
        var router = Router()
        for route in RouteName.allCases where route.isEnabled(c) {
            let handler: Handler
            switch route {
            case .photos: handler = services.feedRoute(FlickrAdapter(feedURL: c.flickrFeedURL), ttl: c.ttlPhotos).handle
            case .podcasts:
                handler = services.feedRoute(ITunesAdapter(searchURL: c.itunesSearchURL, minTermLength: c.podcastMinTermChars), ttl: c.ttlPodcasts).handle
            case .podcast: handler = services.feedRoute(PodcastAdapter(lookupURL: c.itunesLookupURL), ttl: c.ttlPodcasts).handle
            case .episodes: handler = services.feedRoute(EpisodesAdapter(c), ttl: c.ttlEpisodes).handle
            case .episode:
                let adapter = EpisodesAdapter(c)
                handler =
                    EpisodeRoute(
                        adapter: adapter, feeds: services.feedRoute(adapter, ttl: c.ttlEpisodes),
                        parts: EpisodePartLoader(maxFileBytes: c.episodeFileMaxBytes, allowPrivateHosts: c.allowPrivateFeedHosts),
                        chapterLoads: services.feedRoute(adapter, ttl: c.ttlChapters), transcriptLoads: services.feedRoute(adapter, ttl: c.ttlTranscripts)
                    ).handle
            case .episodeBatch:
                let adapter = EpisodesAdapter(c)
                handler = EpisodeBatchRoute(adapter: adapter, feeds: services.feedRoute(adapter, ttl: c.ttlEpisodes), deadline: c.episodesBatchDeadline).handle
            case .loans: handler = services.feedRoute(KivaAdapter(api: kivaAPI), ttl: c.ttlLoans).handle
            case .loan: handler = services.feedRoute(KivaLoanAdapter(api: kivaAPI), ttl: c.ttlLoans).handle
            case .images:
                guard let images = services.images else { continue }
                handler = ImageRoute(feeds: services.feedRoute(images.adapter(c), ttl: c.ttlImages)).handle
            default:
                guard let h = operational.handler(for: route) else { continue }
                handler = h
            }
            router.get(route.rawValue, handler)
        }
        let observer = RequestObserver(metrics: services.metrics, logger: logger, clients: services.clients.resolver, spanSink: services.tracing)
        server = Server(configuration: serverConfig, router: router, observer: observer, statistics: statistics, shutdown: shutdownPhase)
    }

    /// Binds and starts serving; returns the port.
    public func start() throws -> Int {
        try server.start()
        return server.port
    }

    /// Graceful: readiness goes 503, listeners close, in-flight requests finish.
    public func shutdown() {
        shutdownPhase.announce()
        if configuration.shutdownDelay > 0 { NativeThread.sleep(seconds: configuration.shutdownDelay) }
        server.shutdown()
        tracing?.shutdown()
        redis?.stop()
    }

    /// The CPUs the event loops are pinned to ("0,1"), or "off" when the kernel's hash spreads connections.
    public var cpuPlacement: String { server.placement.map { $0.cpus.map(String.init).joined(separator: ",") } ?? "off" }
}

extension EpisodesAdapter {
    /// A podcast's episode data stays within what one cache entry may take (an eighth of the
    /// cache), so a long feed is kept rather than fetched again for every page.
    init(_ c: Configuration) {
        self.init(
            lookupURL: c.itunesLookupURL, maxFeedBytes: c.feedMaxBodyBytes, allowPrivateHosts: c.allowPrivateFeedHosts,
            maxDataBytes: max(64 << 10, min(16 << 20, c.cacheMaxBytes / 8 - (64 << 10))),
            imageLinks: c.imageProxyKey.flatMap { ImageProxyLinks(key: $0, publicBaseURL: c.publicBaseURL) })
    }
}
