import Primitives
import Synchronization

/// State shared by all event loops: configuration, routes, counters, the shutdown phase.
final class ServerContext: Sendable {
    let configuration: ServerConfiguration
    let router: Router
    let observer: any ServerObserver
    let statistics: ServerStatistics
    let shutdown: ShutdownPhase
    /// `configuration.spanSink`, read once: the hit path does not copy the configuration.
    let spanSink: (any SpanSink)?
    private let requestIDs = RequestIDGenerator()

    init(configuration: ServerConfiguration, router: Router, observer: any ServerObserver, statistics: ServerStatistics, shutdown: ShutdownPhase) {
        self.statistics = statistics
        self.shutdown = shutdown
        self.configuration = configuration
        spanSink = configuration.spanSink
        self.router = router
        self.observer = observer
    }

    var isDraining: Bool { shutdown.isDraining }

    /// An id for an answer given before (or without) a parsed request: refusals and rejections.
    func generatedRequestID() -> String { requestIDs.next() }

    func assignRequestID(_ request: inout Request) {
        if let given = request.headers["x-request-id"], RequestIDGenerator.isValid(given) {
            request.requestID = given
        } else {
            request.requestID = requestIDs.next()
        }
    }

    /// Routes a request: handler, 404, 405 with `Allow`, or a CORS preflight for OPTIONS.
    func handle(_ request: Request) -> (HandlerResult, route: String) {
        if request.method == "OPTIONS" && request.target == "*" {
            return (.response(preflight(allow: ["GET", "HEAD", "OPTIONS"])), "*")
        }
        switch router.match(method: request.method, rawPath: request.rawPath) {
        case .found(let handler, let parameters, let pattern):
            if parameters.isEmpty { return (handler(request), pattern) }
            var routed = request
            routed.pathParameters = parameters
            return (handler(routed), pattern)
        case .methodNotAllowed(let allow, let pattern):
            if request.method == "OPTIONS" { return (.response(preflight(allow: allow)), pattern) }
            var response = Response.error(status: 405, code: "method_not_allowed", message: "\(request.method) is not allowed on this path")
            response.headers.add("Allow", allow.joined(separator: ", "))
            return (.response(response), pattern)
        case .notFound:
            return (.response(.error(status: 404, code: "not_found", message: "no route for this path")), "(unmatched)")
        }
    }

    private func preflight(allow: [String]) -> Response {
        var response = Response(status: 204)
        let methods = allow.joined(separator: ", ")
        response.headers.add("Allow", methods)
        response.headers.add("Access-Control-Allow-Methods", methods)
        response.headers.add("Access-Control-Allow-Headers", configuration.cors.allowedRequestHeaders.joined(separator: ", "))
        response.headers.add("Access-Control-Max-Age", String(configuration.cors.maxAge))
        return response
    }
}
