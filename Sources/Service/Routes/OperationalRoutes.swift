import Observability
import Push
import HTTPServer
import Primitives
import ResponseCache
import Upstream

/// Health, readiness, metrics, the API description, the demo page and the index: the routes
/// that never touch an upstream.
enum OperationalRoutes {
    static let all: [RouteDeclaration] = [
        RouteDeclaration(operational: .healthz, operation: "getHealth", tag: .operations, described: OperationalRoutesAPI.health) { _ in
            let healthy = uncacheable(.json(Array("{\"status\":\"ok\"}".utf8)))
            return { _ in .response(healthy) }
        },
        RouteDeclaration(operational: .readyz, operation: "getReadiness", tag: .operations, described: OperationalRoutesAPI.readiness) { s in
            // A shared cache must never keep "ready" while this replica drains.
            let ready = uncacheable(.json(Array("{\"status\":\"ready\"}".utf8)))
            let drainingResponse = {
                var r = uncacheable(.json(Array("{\"status\":\"draining\"}".utf8), status: 503))
                // Like every 503: when to come back (another replica answers by then).
                r.headers.add("Retry-After", "1")
                return r
            }()
            // Redis is optional: without it a replica still serves (its own cache, its own streams),
            // and says so, for an operator's eyes rather than a balancer's.
            let alone = uncacheable(
                .json(
                    Array(
                        (#"{"status":"ready","redis":"down","note":"Redis is unreachable: this replica serves from its own cache, and its event "#
                            + #"streams hear only of changes it reads itself"}"#).utf8)))
            let shutdown = s.shutdown, metrics = s.metrics
            return { _ in .response(shutdown.isAnnounced ? drainingResponse : metrics.shared.redisIsUp == false ? alone : ready) }
        },
        RouteDeclaration(operational: .metrics, operation: "getMetrics", tag: .operations, described: OperationalRoutesAPI.metrics) { s in
            // Rendered and compressed on a pool thread: tens of KiB of text per scrape is
            // not the event loop's work.
            { _ in .deferred { _ in metricsResponse(s) } }
        },
        RouteDeclaration(operational: .openAPI, operation: "getOpenAPIDocument", tag: .operations, described: OperationalRoutesAPI.document) { _ in
            // A constant, so compressed once here instead of on the loop per request.
            let document = Array(OpenAPIDocument.json.utf8)
            let openAPI = Response.json(document, gzipped: Gzip.compress(document))
            return { _ in .response(openAPI) }
        },
        RouteDeclaration(operational: .demo, operation: "getDemoPage", tag: .operations, described: OperationalRoutesAPI.demo, when: { $0.demoPage }) { _ in
            // `/demo/` is sent to `/demo`: its relative links (demo/app.js) would resolve under /demo/demo/.
            let moved = {
                var r = Response(status: 301, body: [])
                r.headers.add("Location", "/demo")
                r.headers.add("Cache-Control", "public, max-age=86400")
                return r
            }()
            return { context in .response(context.request.rawPath.utf8.last == UInt8(ascii: "/") ? moved : DemoAssets.page.answer(context.request)) }
        },
        RouteDeclaration(undocumented: .demoFile, when: { $0.demoPage }) { _ in
            let missing = Response.error(status: 404, code: "not_found", message: "no such file in the demo page")
            return { context in .response(DemoAssets.file(context.pathParameters["file"] ?? "")?.answer(context.request) ?? missing) }
        },
        RouteDeclaration(operational: .index, operation: "getIndex", tag: .operations, described: OperationalRoutesAPI.index) { s in
            let c = s.configuration
            let listed = RouteDeclaration.listed(RouteDeclaration.all.filter { $0.isEnabled(c) }).map { "\"\($0)\"" }.joined(separator: ",")
            let index = Response.json(Array("{\"name\":\"FeedProxy\",\"version\":\"\(Configuration.version)\",\"routes\":[\(listed)]}".utf8))
            return { _ in .response(index) }
        },
    ]

    private static func metricsResponse(_ s: Services) -> Response {
        var parts: [any MetricsPart] = [
            ConnectionGauges(s.statistics), CacheGauges(s.cache), UpstreamGauges(s.upstream), ClientGauges(s.clients),
            EventStreamGauges(hub: s.episodeEvents),
            LifecycleGauges(
                draining: s.shutdown.isAnnounced, droppedLogLines: s.logger.sink.droppedLines, heapTrims: HeapTrimmer.shared.passesThatReleased,
                heapArenas: HeapArenas.inUse),
        ]
        if let images = s.images { parts.append(images.metrics) }
        let text = s.metrics.render(parts)
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

extension OperationTag {
    static let operations = OperationTag("Operations", "index and operations: health, readiness, metrics, the API document, the demo page")
}

extension RouteName {
    static let healthz = RouteName("/healthz")
    static let readyz = RouteName("/readyz")
    static let metrics = RouteName("/metrics")
    static let openAPI = RouteName("/openapi.json")
    static let demo = RouteName("/demo")
    static let demoFile = RouteName("/demo/:file", listedAs: nil)
    static let index = RouteName("/", listedAs: nil)
}
