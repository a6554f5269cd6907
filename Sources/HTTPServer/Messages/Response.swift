import Primitives

/// What a handler answers. Bodies are shared byte arrays: a cached response is
/// written without being copied or re-encoded.
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    /// What is sent: the bytes, a gzip variant, and the header lines that describe them (a
    /// cached answer's, rendered when it was loaded).
    public var representation: Representation
    /// Header lines rendered by whoever keeps the answer (a cache entry's `Cache-Control`),
    /// written as they are, before the representation's own.
    public var renderedHeaders: [UInt8]
    /// Header lines many responses share (`X-Cache: HIT\r\n`): constant bytes, not copied.
    public var constantHeaders: [UInt8]
    /// `Age` in seconds (RFC 9111 §5.1), written from the number: a cache hit makes no String for it.
    public var age: Int?
    /// Header lines a middleware adds to every answer (CORS), rendered once by it: shared
    /// bytes, so adding them copies nothing.
    public var addedHeaders: [UInt8] = []

    /// A representation as it is (a cache hit): inlinable, so it is built in place in the
    /// caller's storage (an opaque init cost a copy and a destroy of the whole value).
    @inlinable public init(
        sending representation: Representation, status: Int, renderedHeaders: [UInt8] = [], constantHeaders: [UInt8] = [], age: Int? = nil
    ) {
        self.status = status
        self.headers = HTTPHeaders()
        self.representation = representation
        self.renderedHeaders = renderedHeaders
        self.constantHeaders = constantHeaders
        self.age = age
    }

    /// Bytes that `headers` describe.
    public init(
        status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], gzippedBody: [UInt8]? = nil, compressible: Bool = false,
        constantHeaders: [UInt8] = [], age: Int? = nil
    ) {
        self.status = status
        self.headers = headers
        self.representation = Representation(plain: body, gzippedBody: gzippedBody, compressible: compressible)
        self.renderedHeaders = []
        self.constantHeaders = constantHeaders
        self.age = age
    }

    public var body: [UInt8] { representation.body }
    public var gzippedBody: [UInt8]? { representation.gzippedBody }
    public var compressible: Bool { representation.compressible }

    /// A JSON response from already-encoded bytes.
    public static func json(_ body: [UInt8], status: Int = 200, gzipped: [UInt8]? = nil, compressible: Bool = true) -> Response {
        var headers = HTTPHeaders()
        headers.add("Content-Type", MediaType.json)
        return Response(status: status, headers: headers, body: body, gzippedBody: gzipped, compressible: compressible)
    }

    /// The uniform JSON error response (`ClientError.body`), never stored by a cache.
    public static func error(_ error: ClientError) -> Response {
        var r = json(error.body, status: error.status, compressible: false)
        // 404 and 405 are cacheable by heuristic (RFC 9110 §15.1); no error should outlive its cause.
        r.headers.add("Cache-Control", "no-store")
        // Every refusal says when to come back (RFC 9110 §10.2.3), so clients and front
        // proxies back off instead of retrying at once.
        if error.status == 429 || error.status == 503 {
            r.headers.add("Retry-After", String(Saturating.retryAfterSeconds(error.retryAfter ?? 1)))
        }
        return r
    }

    public static func error(status: Int, code: String, message: String) -> Response {
        error(ClientError(status: status, code: code, message: message))
    }
}
