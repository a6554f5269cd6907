/// Cross-origin rules the application hands the server (the server itself knows no
/// application headers): who may read responses, which response headers page scripts may
/// read, and which request headers a preflight allows.
public struct CORSPolicy: Sendable, Equatable {
    /// `Access-Control-Allow-Origin`; nil sends no CORS headers at all.
    public var origin: String?
    /// `Access-Control-Expose-Headers`: beyond the safelisted ones, what scripts may read.
    public var exposedHeaders: [String]
    /// The response headers this server itself writes that scripts may read.
    public static let serverHeaders = ["ETag", "Age", "X-Request-ID", "Retry-After"]
    /// `Access-Control-Allow-Headers` on a preflight.
    public var allowedRequestHeaders: [String]
    /// `Access-Control-Max-Age` of a preflight, in seconds.
    public var maxAge: Int

    public init(
        origin: String? = "*", exposedHeaders: [String] = CORSPolicy.serverHeaders,
        allowedRequestHeaders: [String] = ["Accept", "Accept-Encoding", "Cache-Control", "If-None-Match", "X-Request-ID", "traceparent", "tracestate"],
        maxAge: Int = 86400
    ) {
        self.origin = origin
        self.exposedHeaders = exposedHeaders
        self.allowedRequestHeaders = allowedRequestHeaders
        self.maxAge = maxAge
    }

    /// The server's own exposed headers plus the application's (`X-Cache`, `Link`, …).
    public init(origin: String?, alsoExposing applicationHeaders: [String]) {
        self.init(origin: origin, exposedHeaders: Self.serverHeaders + applicationHeaders)
    }
}
