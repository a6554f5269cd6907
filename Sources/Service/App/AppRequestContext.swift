import HTTPServer
import Primitives

/// What FeedProxy keeps per request beside what the server knows (`core`): filled in by its
/// middleware and handlers, read by the middleware that see the request's end (the access
/// log, the server span), handed to deferred work and back.
struct AppRequestContext: RootRequestContext {
    let core: CoreRequestContext
    /// Who the client is, once worked out (on requests that cost the upstream, through their
    /// `MeteredRequestContext`): the access log and the span take it from here instead of
    /// resolving it again.
    var client: IPAddress?
    /// Extra fields for the access log and the server span (not sent), e.g. the cache status.
    var logFields: [(String, String)] = []
    /// When the answer is due (monotonic seconds), once the handler set one: everything done
    /// for the request (the upstream's budget, queue waits included) fits before it.
    var deadline: Double?

    /// The trace's flags as the tracing middleware decided its sampling (the caller's until
    /// then): the only part of the server's trace (`core.trace`) the application changes.
    var traceFlags: UInt8

    init(core: CoreRequestContext) {
        self.core = core
        traceFlags = core.traceFlags
    }

    /// The request's trace and span, sampled as decided.
    var trace: TraceContext {
        var trace = core.trace
        trace.flags = traceFlags
        return trace
    }

    /// A request built in process (tests), not routed.
    static func make(
        method: String = "GET", target: String, headers: [(String, String)] = [], body: [UInt8] = [], peer: IPAddress? = nil,
        pathParameters: [String: String] = [:]
    ) -> AppRequestContext {
        AppRequestContext(core: .make(method: method, target: target, headers: headers, body: body, peer: peer, pathParameters: pathParameters))
    }
}

/// What FeedProxy's operational routes are: handlers over its context.
typealias AppHandler = Handler<AppRequestContext>
typealias AppResult = HandlerResult<AppRequestContext>
