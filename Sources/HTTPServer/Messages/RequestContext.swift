import Primitives

/// Everything one request is, in one value: what was parsed (`request`), what the server
/// learned of it (id, trace, peer, route, when it arrived) and what the application's
/// middleware and handler add (the client it resolved, its quota, log fields, the span
/// sink of a sampled trace). Handlers get it `inout`; deferred work gets it back, so what the
/// work learned (the client, the cache status) reaches the access log without a side channel.
public struct RequestContext: Sendable {
    /// The request as parsed; the server appends its body, nobody else changes it.
    public internal(set) var request: Request
    /// `X-Request-ID` from the client when valid, otherwise generated.
    public internal(set) var requestID = ""
    /// The W3C trace this request belongs to and its span here (see `TraceContext`); the
    /// tracing middleware decides whether it is sampled.
    public var trace = TraceContext(traceHigh: 0, traceLow: 0, spanID: 0)
    /// The address of the connection's peer (a proxy, when there is one); nil in process.
    public internal(set) var peer: IPAddress?
    /// The matched route pattern (`/podcasts/:id/episodes`), or a fixed label: `(unmatched)`, `*`, `(invalid)`.
    public internal(set) var route = ""
    /// Values captured by `:name` segments of the matched route.
    public internal(set) var pathParameters: [String: String] = [:]
    /// When the loop learned of the request (monotonic seconds): queueing in its wake-up counts.
    public internal(set) var receivedAt = 0.0
    /// When the answer is due (monotonic seconds), once the handler set one: everything done
    /// for the request (the upstream's budget, queue waits included) fits before it.
    public var deadline: Double?
    /// Who the client is, once the application worked it out (on requests that cost the upstream).
    public var client: IPAddress?
    /// How the application tells clients apart and meters their costly work, when a middleware set it.
    public var identity: (any ClientIdentity)?
    /// Where this request's spans go, set by the tracing middleware when the trace is sampled:
    /// deferred work runs under it (`TraceScope`).
    public var spanSink: (any SpanSink)?
    /// Extra fields for the access log and the server span (not sent), e.g. the cache status.
    public var logFields: [(String, String)] = []

    init(request: Request) {
        self.request = request
    }

    /// A context for a request built in process (tests, internal callers).
    public static func make(
        method: String = "GET", target: String, headers: [(String, String)] = [], body: [UInt8] = [], peer: IPAddress? = nil,
        pathParameters: [String: String] = [:]
    ) -> RequestContext {
        var context = RequestContext(request: .make(method: method, target: target, headers: headers, body: body))
        context.peer = peer
        context.pathParameters = pathParameters
        context.receivedAt = NativeThread.monotonicSeconds()
        return context
    }

    /// The stand-in for a request that could not be parsed (its refusal is still logged).
    static func unparsed(requestID: String) -> RequestContext {
        var context = RequestContext(request: .make(method: "", target: ""))
        context.requestID = requestID
        context.route = "(invalid)"
        return context
    }
}
