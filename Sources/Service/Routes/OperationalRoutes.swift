import HTTPServer
import Primitives
import ResponseCache
import Upstream

/// Health, readiness, metrics, the API description and the index: the routes that never
/// touch an upstream.
struct OperationalRoutes: Sendable {
    let services: Services
    let shutdown: ShutdownPhase
    let statistics: ServerStatistics

    /// The operational routes' OpenAPI operations (the demo page's files are not in the document).
    static let operations = [
        RouteOperation(.index, "getIndex", .operations), RouteOperation(.healthz, "getHealth", .operations),
        RouteOperation(.readyz, "getReadiness", .operations), RouteOperation(.metrics, "getMetrics", .operations),
        RouteOperation(.openAPI, "getOpenAPIDocument", .operations), RouteOperation(.demo, "getDemoPage", .operations),
    ]

    /// The handler of an operational route; a feed route is not one (its declaration serves it).
    func handler(for route: RouteName) throws(RouteTableError) -> Handler {
        switch route {
        case .healthz:
            let healthy = Self.uncacheable(.json(Array("{\"status\":\"ok\"}".utf8)))
            return { _ in .response(healthy) }
        case .readyz:
            // A shared cache must never keep "ready" while this replica drains.
            let ready = Self.uncacheable(.json(Array("{\"status\":\"ready\"}".utf8)))
            let drainingResponse = {
                var r = Self.uncacheable(.json(Array("{\"status\":\"draining\"}".utf8), status: 503))
                // Like every 503: when to come back (another replica answers by then).
                r.headers.add("Retry-After", "1")
                return r
            }()
            return { [shutdown] _ in .response(shutdown.isAnnounced ? drainingResponse : ready) }
        case .metrics:
            // Rendered and compressed on a pool thread: tens of KiB of text per scrape is
            // not the event loop's work.
            return { [self] _ in .deferred { _ in metricsResponse() } }
        case .openAPI:
            // A constant, so compressed once here instead of on the loop per request.
            let document = Array(OpenAPIDocument.json.utf8)
            let openAPI = Response.json(document, gzipped: Gzip.compress(document))
            return { _ in .response(openAPI) }
        case .index:
            let listed = RouteName.allCases.filter { $0.isEnabled(services.configuration) }.compactMap(\.listedAs).map { "\"\($0)\"" }.joined(separator: ",")
            let index = Response.json(Array("{\"name\":\"FeedProxy\",\"version\":\"\(Configuration.version)\",\"routes\":[\(listed)]}".utf8))
            return { _ in .response(index) }
        case .demo:
            return { context in .response(DemoAssets.page.answer(context.request)) }
        case .demoFile:
            let missing = Response.error(status: 404, code: "not_found", message: "no such file in the demo page")
            return { context in .response(DemoAssets.file(context.pathParameters["file"] ?? "")?.answer(context.request) ?? missing) }
        case .photos, .podcasts, .podcast, .episodes, .episode, .episodeBatch, .loans, .loan, .images:
            throw RouteTableError(description: "\(route.rawValue) is neither an upstream's route (Catalog/) nor an operational one")
        }
    }

    private func metricsResponse() -> Response {
        let s = services
        let breakers = s.upstream.breakerStates().map { b -> (host: String, state: Int) in
            switch b.state {
            case .closed: return (b.host, 0)
            case .halfOpen: return (b.host, 1)
            case .open: return (b.host, 2)
            }
        }
        let text = s.metrics.render(
            .init(
                openConnections: statistics.open, loopConnections: statistics.perLoop, connectionsMoved: statistics.moved,
                cacheBytes: s.cache.byteCount, cacheEntries: s.cache.entryCount, breakers: breakers, feedBreakers: s.upstream.feedBreakerCounts(),
                draining: shutdown.isAnnounced, droppedLogLines: s.logger.sink.droppedLines, queues: s.upstream.queueStats(),
                trackedClients: s.clients.limiter?.trackedClients ?? 0, untrustedForwarded: s.clients.untrustedForwarding?.count ?? 0))
        let body = Array(text.utf8)
        var r = Response(status: 200, body: body, gzippedBody: Gzip.compress(body), compressible: true)
        r.headers.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        return Self.uncacheable(r)
    }

    private static func uncacheable(_ response: Response) -> Response {
        var r = response
        r.headers.add("Cache-Control", "no-store")
        return r
    }
}
