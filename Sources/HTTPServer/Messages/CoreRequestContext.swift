import Primitives

/// What the server knows of one request: what was parsed (`request`) and what it learned of
/// it (id, trace, peer, route, when it arrived). The application's own state per request is in
/// its context type (`RequestContext`), which holds this as its `core`.
///
/// A reference, made once per request by the parser: the request moves from the connection
/// into the application's context and on to deferred work as one pointer (as a value of a
/// dozen fields it was copied and destroyed a retain and a release per field at each hand-over,
/// more than the whole router). Written only by this module, on the loop, before the handler
/// runs: the parser's fields as the request arrives, the server's at dispatch, the route by the
/// router. The application can only read it (no setter leaves this module, so its compiler
/// checks that); what it learns of a request, the trace its tracing decides included, is its
/// context's, a value each piece of deferred work gets and hands back. From the handler on it
/// is only read, and may be read at once by deferred work, the loop (a client that left) and a
/// stream's task.
public final class CoreRequestContext: @unchecked Sendable {
    /// The request as parsed; the server appends its body, nobody else changes it.
    public internal(set) var request: Request
    /// `X-Request-ID` from the client when valid, otherwise generated.
    public var requestID: String { generatedID != 0 ? RequestIDGenerator.text(generatedID) : givenID }
    /// The id the client sent (valid), or the text of one made without a request.
    public internal(set) var givenID = ""
    /// The id made for the request, as a number (0: none); sent and logged as hex, made a
    /// String only when someone asks for `requestID`.
    public internal(set) var generatedID: UInt64 = 0
    /// Both forms of the id in one read, for a writer that renders it itself (the access log).
    /// Read here, in the server's module: a read of these fields from a module that keeps
    /// run-time exclusivity checks cost one (~110 instructions per logged request).
    public var id: (generated: UInt64, given: String) { (generatedID, givenID) }
    /// The W3C trace this request belongs to and its span here (see `TraceContext`), as the
    /// server continued the client's or began one; the application's context starts from it
    /// (a tracing middleware decides there whether it is sampled).
    /// Read here, in the server's module, as `id` is (a read from a module that keeps run-time
    /// exclusivity checks costs one: ~80 instructions a request).
    public var trace: TraceContext { continuedTrace }
    /// Its flags alone (whether the caller sampled it), with no copy of its `tracestate`.
    public var traceFlags: UInt8 { continuedTrace.flags }
    /// Its ids alone, for a writer that renders them (the access log).
    public var traceIDs: (high: UInt64, low: UInt64, span: UInt64) { (continuedTrace.traceHigh, continuedTrace.traceLow, continuedTrace.spanID) }
    var continuedTrace = TraceContext(traceHigh: 0, traceLow: 0, spanID: 0)
    /// The address of the connection's peer (a proxy, when there is one); nil in process.
    public internal(set) var peer: IPAddress?
    /// The matched route pattern (`/podcasts/:id/episodes`), or a fixed label: `(unmatched)`, `*`, `(invalid)`.
    public internal(set) var route = ""
    /// Values captured by `:name` segments of the matched route.
    public internal(set) var pathParameters: [String: String] = [:]
    /// When the loop learned of the request (monotonic seconds): queueing in its wake-up counts.
    public internal(set) var receivedAt = 0.0
    /// The number of the route the router matched (-1: none): which middleware see the end.
    @usableFromInline var routeIndex = -1

    init(request: Request) {
        self.request = request
    }

    /// A request built in process (tests, internal callers), not routed yet.
    public static func make(
        method: String = "GET", target: String, headers: [(String, String)] = [], body: [UInt8] = [], peer: IPAddress? = nil,
        pathParameters: [String: String] = [:]
    ) -> CoreRequestContext {
        let core = CoreRequestContext(request: .make(method: method, target: target, headers: headers, body: body))
        core.peer = peer
        core.pathParameters = pathParameters
        core.receivedAt = NativeThread.monotonicSeconds()
        return core
    }

    /// The stand-in for a request that could not be parsed (its refusal is still recorded).
    static func unparsed(requestID: UInt64) -> CoreRequestContext {
        let core = CoreRequestContext(request: .make(method: "", target: ""))
        core.generatedID = requestID
        core.route = "(invalid)"
        return core
    }
}
