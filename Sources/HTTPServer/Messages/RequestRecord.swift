import Primitives

/// One finished request, for access logs and metrics.
public struct RequestRecord: Sendable {
    public let method: String
    public let target: String
    /// The matched route pattern (`/podcasts/:id/episodes`), or a fixed label for unmatched ones.
    public let route: String
    public let status: Int
    public let bodyBytes: Int
    public let durationSeconds: Double
    public let requestID: String
    public let logFields: [(String, String)]
    /// Which event loop (0..<threads) served it, so observers can keep per-loop state.
    public let loop: Int
    /// The connection's peer (nil when unknown); the access log formats it.
    public var peer: IPAddress? = nil
    /// The client as the handler resolved it (`Response.client`); nil when it did not.
    public var client: IPAddress? = nil
    /// The request's header fields (shared, not copied), for observers that need one.
    public var requestHeaders = RequestHeaders()
    /// The request's trace (all zero for a request that could not be parsed).
    public var trace = TraceContext(traceHigh: 0, traceLow: 0, spanID: 0)
}
