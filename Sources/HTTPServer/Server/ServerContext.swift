import Primitives
import Synchronization

/// State shared by all event loops: configuration, routes, middleware, counters, the shutdown phase.
final class ServerContext: Sendable {
    let configuration: ServerConfiguration
    let router: Router
    let middleware: MiddlewareChain
    let statistics: ServerStatistics
    let shutdown: ShutdownPhase
    private let requestIDs = RequestIDGenerator()

    init(configuration: ServerConfiguration, router: Router, middleware: [any Middleware], statistics: ServerStatistics, shutdown: ShutdownPhase) {
        self.statistics = statistics
        self.shutdown = shutdown
        self.configuration = configuration
        self.router = router
        self.middleware = MiddlewareChain(middleware)
    }

    var isDraining: Bool { shutdown.isDraining }

    /// An id for an answer given before (or without) a parsed request: refusals and rejections.
    func generatedRequestID() -> String { requestIDs.next() }

    func assignRequestID(_ context: inout RequestContext) {
        if let given = context.request.headers["x-request-id"], RequestIDGenerator.isValid(given) {
            context.requestID = given
        } else {
            context.requestID = requestIDs.next()
        }
    }

    /// Routes a request (handler, 404, 405 with `Allow`, or `204` with `Allow` for OPTIONS),
    /// then runs the middleware's `prepare` phase, then the handler.
    func handle(_ context: inout RequestContext) -> HandlerResult {
        let method = context.request.method
        let answer: Response
        if method == "OPTIONS" && context.request.target == "*" {
            context.route = "*"
            answer = Self.options(allow: ["GET", "HEAD", "OPTIONS"])
        } else {
            switch router.match(method: method, rawPath: context.request.rawPath) {
            case .found(let handler, let parameters, let pattern):
                context.route = pattern
                if !parameters.isEmpty { context.pathParameters = parameters }
                if let refused = middleware.prepare(&context) { return .response(refused) }
                return handler(&context)
            case .methodNotAllowed(let allow, let pattern):
                context.route = pattern
                if method == "OPTIONS" {
                    answer = Self.options(allow: allow)
                } else {
                    var response = Response.error(status: 405, code: "method_not_allowed", message: "\(method) is not allowed on this path")
                    response.headers.add("Allow", allow.joined(separator: ", "))
                    answer = response
                }
            case .notFound:
                context.route = "(unmatched)"
                answer = .error(status: 404, code: "not_found", message: "no route for this path")
            }
        }
        return .response(middleware.prepare(&context) ?? answer)
    }

    /// RFC 9110 §9.3.7: what the target allows (a CORS middleware adds its preflight fields).
    private static func options(allow: [String]) -> Response {
        var response = Response(status: 204)
        response.headers.add("Allow", allow.joined(separator: ", "))
        return response
    }
}
