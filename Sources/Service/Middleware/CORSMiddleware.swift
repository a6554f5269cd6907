import HTTPServer

/// Cross-origin reading (`CORS_ORIGIN`): who may read responses, which response headers page
/// scripts may read beyond the safelisted ones, and a preflight's answer. The lines every
/// response carries are rendered once here. On the router: every answer carries them.
final class CORSMiddleware: Middleware {
    /// Every header a script of the demo page or an app reads: the server's own and this application's.
    static let exposedHeaders = ["ETag", "Age", "X-Request-ID", "Retry-After", "X-Cache", "Link"]
    /// What a preflight allows a request to carry.
    static let allowedRequestHeaders = ["Accept", "Accept-Encoding", "Cache-Control", "If-None-Match", "X-Request-ID", "traceparent", "tracestate"]
    /// A preflight's answer is kept a day.
    static let maxAgeSeconds = 86400

    private let lines: [UInt8]
    private let preflightLines: [UInt8]

    /// nil when no origin is allowed (`CORS_ORIGIN` empty): no CORS headers at all.
    init?(origin: String) {
        guard !origin.isEmpty else { return nil }
        lines = Array("Access-Control-Allow-Origin: \(origin)\r\nAccess-Control-Expose-Headers: \(Self.exposedHeaders.joined(separator: ", "))\r\n".utf8)
        preflightLines = Array(
            "Access-Control-Allow-Headers: \(Self.allowedRequestHeaders.joined(separator: ", "))\r\nAccess-Control-Max-Age: \(Self.maxAgeSeconds)\r\n".utf8)
    }

    func handle(_ context: inout AppRequestContext, next: (inout AppRequestContext) -> HandlerResult<AppRequestContext>) -> HandlerResult<
        AppRequestContext
    > {
        // Spelled out rather than `map`: an answer given now gets its lines without a closure made for it.
        let result = next(&context)
        switch consume result {
        case .response(var response):
            add(to: &response, for: context)
            return .response(response)
        case .deferred(let work):
            return .deferred { [self] context in
                var response = await work(&context)
                add(to: &response, for: context)
                return response
            }
        case .stream(var head, let open):
            add(to: &head, for: context)
            return .stream(head, open)
        }
    }

    private func add(to response: inout Response, for context: AppRequestContext) {
        // A preflight (the router's `204` to OPTIONS) also says which methods and headers may follow.
        let added: [UInt8]
        if response.status == 204, context.request.isOptions, let allow = response.headers["Allow"] {
            added = lines + Array("Access-Control-Allow-Methods: \(allow)\r\n".utf8) + preflightLines
        } else {
            added = lines
        }
        if response.addedHeaders.isEmpty { response.addedHeaders = added } else { response.addedHeaders += added }
    }
}
