import HTTPServer

/// Cross-origin reading (`CORS_ORIGIN`): who may read responses, which response headers page
/// scripts may read beyond the safelisted ones, and a preflight's answer. The lines every
/// response carries are rendered once here.
final class CORSMiddleware: Middleware {
    /// Every header a script of the demo page or an app reads: the server's own and this application's.
    static let exposedHeaders = ["ETag", "Age", "X-Request-ID", "Retry-After", "X-Cache", "Link"]
    /// What a preflight allows a request to carry.
    static let allowedRequestHeaders = ["Accept", "Accept-Encoding", "Cache-Control", "If-None-Match", "X-Request-ID", "traceparent", "tracestate"]
    /// A preflight's answer is kept a day.
    static let maxAgeSeconds = 86400

    let phases: MiddlewarePhases = .headerLines
    private let lines: [UInt8]
    private let preflightLines: [UInt8]

    /// nil when no origin is allowed (`CORS_ORIGIN` empty): no CORS headers at all.
    init?(origin: String) {
        guard !origin.isEmpty else { return nil }
        lines = Array("Access-Control-Allow-Origin: \(origin)\r\nAccess-Control-Expose-Headers: \(Self.exposedHeaders.joined(separator: ", "))\r\n".utf8)
        preflightLines = Array(
            "Access-Control-Allow-Headers: \(Self.allowedRequestHeaders.joined(separator: ", "))\r\nAccess-Control-Max-Age: \(Self.maxAgeSeconds)\r\n".utf8)
    }

    func headerLines(for response: Response, in context: RequestContext) -> [UInt8] {
        // A preflight (the server's `204` to OPTIONS) also says which methods and headers may follow.
        guard response.status == 204, context.request.method == "OPTIONS", let allow = response.headers["Allow"] else { return lines }
        return lines + Array("Access-Control-Allow-Methods: \(allow)\r\n".utf8) + preflightLines
    }
}
