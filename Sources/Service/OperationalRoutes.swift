import HTTPServer
import ResponseCache
import Synchronization
import Upstream

/// Health, readiness, metrics and the API description.
struct OperationalRoutes: Sendable {
    let metrics: Metrics
    let cache: ResponseCache
    let upstream: UpstreamClient
    let draining: Draining
    let logger: Logger
    let openConnections: @Sendable () -> Int
    var loopConnections: @Sendable () -> [Int] = { [] }
    var connectionsMoved: @Sendable () -> Int = { 0 }
    var trackedClients: @Sendable () -> Int = { 0 }
    var untrustedForwarded: @Sendable () -> Int = { 0 }

    func register(on router: inout Router) {
        // A shared cache must never keep "ready" while this replica drains.
        let healthy = Self.uncacheable(.json(Array("{\"status\":\"ok\"}".utf8)))
        let ready = Self.uncacheable(.json(Array("{\"status\":\"ready\"}".utf8)))
        let drainingResponse = Self.uncacheable(.json(Array("{\"status\":\"draining\"}".utf8), status: 503))
        router.get("/healthz") { _ in .response(healthy) }
        router.get("/readyz") { [draining] _ in .response(draining.isDraining ? drainingResponse : ready) }
        router.get("/metrics") { [self] _ in
            let breakers = upstream.breakerStates().map { b -> (host: String, state: Int) in
                switch b.state {
                case .closed: return (b.host, 0)
                case .halfOpen: return (b.host, 1)
                case .open: return (b.host, 2)
                }
            }
            let text = metrics.render(
                .init(
                    openConnections: openConnections(), loopConnections: loopConnections(), connectionsMoved: connectionsMoved(), cacheBytes: cache.byteCount,
                    cacheEntries: cache.entryCount,
                    breakers: breakers, feedBreakers: upstream.feedBreakerCounts(), draining: draining.isDraining, droppedLogLines: logger.sink.droppedLines,
                    queues: upstream.queueStats(), trackedClients: trackedClients(), untrustedForwarded: untrustedForwarded()))
            var r = Response(status: 200, body: Array(text.utf8), compressible: true)
            r.headers.add("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return .response(Self.uncacheable(r))
        }
        let openAPI = Response.json(Array(OpenAPIDocument.json.utf8))
        router.get("/openapi.json") { _ in .response(openAPI) }
        let index = Response.json(
            Array(
                """
                {"name":"FeedProxy","version":"\(Configuration.version)","routes":["/photos","/podcasts?term=","/podcasts/{id}/episodes","/loans","/healthz","/readyz","/metrics","/openapi.json"]}
                """.utf8))
        router.get("/") { _ in .response(index) }
    }

    private static func uncacheable(_ response: Response) -> Response {
        var r = response
        r.headers.add("Cache-Control", "no-store")
        return r
    }
}

/// Set once when shutdown starts; read by `/readyz`.
final class Draining: Sendable {
    private let flag = Atomic<Bool>(false)
    var isDraining: Bool { flag.load(ordering: .relaxed) }
    func begin() { flag.store(true, ordering: .relaxed) }
}
