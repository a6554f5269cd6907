import HTTPServer
import Primitives

/// What FeedProxy keeps per request beside what the server knows (`core`): filled in by its
/// middleware and handlers, read by the middleware that see the request's end (the access
/// log, the server span), handed to deferred work and back.
struct AppRequestContext: RequestContext {
    let core: CoreRequestContext
    /// Who the client is, once worked out (on requests that cost the upstream): the access
    /// log and the span take it from here instead of resolving it again.
    var client: IPAddress?
    /// How clients are told apart and their costly work metered: put here by the identity
    /// middleware, which only routes that can cost an upstream run.
    var identity: (any ClientIdentity)?
    /// Extra fields for the access log and the server span (not sent), e.g. the cache status.
    var logFields: [(String, String)] = []
    /// When the answer is due (monotonic seconds), once the handler set one: everything done
    /// for the request (the upstream's budget, queue waits included) fits before it.
    var deadline: Double?

    init(core: CoreRequestContext) {
        self.core = core
    }

    /// A request built in process (tests), not routed.
    static func make(
        method: String = "GET", target: String, headers: [(String, String)] = [], body: [UInt8] = [], peer: IPAddress? = nil,
        pathParameters: [String: String] = [:]
    ) -> AppRequestContext {
        AppRequestContext(core: .make(method: method, target: target, headers: headers, body: body, peer: peer, pathParameters: pathParameters))
    }

    /// Works out who the client is, once (a request about to cost the upstream).
    mutating func identifyClient() {
        if client == nil, let identity { client = identity.client(of: self) }
    }

    /// This request went to the upstream (a miss): counted where misses are watched
    /// (forwarding from a peer outside `TRUSTED_PROXIES`).
    func noteMiss() { identity?.noteMiss(self) }
}

/// What FeedProxy's routes are: handlers over its context.
typealias AppHandler = Handler<AppRequestContext>
typealias AppResult = HandlerResult<AppRequestContext>
