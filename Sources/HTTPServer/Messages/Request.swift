import Primitives

/// HTTP versions the server speaks.
public enum HTTPVersion: Sendable, Equatable {
    case http10
    case http11
}

/// One parsed request: what the client sent, nothing else (what the server and the
/// application learn of it is in its `RequestContext`). Handlers only read it.
public struct Request: Sendable {
    public let method: String
    /// The request-target as sent (origin-form, or the path of an absolute-form).
    public let target: String
    /// Path part of the target, still percent-encoded (escapes already validated).
    public let rawPath: Substring
    /// Query part without the `?`, still encoded (escapes already validated).
    public let rawQuery: Substring?
    public let version: HTTPVersion
    /// Emptied when the request becomes a stream (see `EventLoop.startStream`).
    public internal(set) var headers: RequestHeaders
    public internal(set) var body: [UInt8]
    /// Whether the client accepts a gzip-coded response (RFC 9110 §12.5.3). Worked out
    /// once here: both the handler (to pick the validator) and the writer ask.
    public let acceptsGzip: Bool

    init(method: String, target: String, version: HTTPVersion, headers: RequestHeaders, body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.acceptsGzip = headers.withFirstValue("accept-encoding", AcceptEncoding.acceptsGzip) ?? false
        // By byte over contiguous storage: a Character search walks grapheme clusters, and even
        // the UTF-8 view's iterator costs tens of instructions a byte.
        let utf8 = target.utf8
        let offset =
            utf8.withContiguousStorageIfAvailable { $0.firstIndex(of: UInt8(ascii: "?")) }
            ?? utf8.firstIndex(of: UInt8(ascii: "?")).map { utf8.distance(from: utf8.startIndex, to: $0) }
        if let offset {
            let q = utf8.index(utf8.startIndex, offsetBy: offset)
            rawPath = target[..<q]
            rawQuery = target[utf8.index(after: q)...]
        } else {
            rawPath = target[...]
            rawQuery = nil
        }
    }

    /// What a stream's request keeps of its target: its end's log line names it (the route and
    /// the start of its query; each byte kept is held by every open stream).
    public static let streamTargetBytes = 64

    /// What a long-lived answer (a stream) keeps of its request once the handler has read it:
    /// no body, no header section (a reconnect's `Last-Event-ID` holds a library's token, up to
    /// 21 KB), and the target cut at `streamTargetBytes` with `…` (a library's query and token
    /// run to 8 KB): held for hours by thousands of streams, a request is bounded, not sized by
    /// its client. The target is ASCII (the parser checked it), so any byte is a boundary.
    mutating func keepForStream() {
        let utf8 = target.utf8
        guard utf8.count > Self.streamTargetBytes else {
            body = []
            headers = RequestHeaders()
            return
        }
        self = Request(
            method: method, target: String(decoding: utf8.prefix(Self.streamTargetBytes), as: UTF8.self) + "…", version: version,
            headers: RequestHeaders())
    }

    /// Whether this is a HEAD (an OPTIONS) request: the length first, so that a GET costs no
    /// string comparison (a failed `==` between two strings is a call into the runtime).
    @inlinable public var isHead: Bool { method.utf8.count == 4 && method == "HEAD" }
    @inlinable public var isOptions: Bool { method.utf8.count == 7 && method == "OPTIONS" }

    /// Builds a request directly (tests and in-process callers).
    public static func make(method: String = "GET", target: String, headers: [(String, String)] = [], body: [UInt8] = []) -> Request {
        Request(method: method, target: target, version: .http11, headers: RequestHeaders(headers), body: body)
    }

    /// Query items in order, `+` decoded as space, repeated keys kept.
    public var queryItems: [(name: String, value: String)] {
        guard let rawQuery, !rawQuery.isEmpty else { return [] }
        return Self.formItems(rawQuery)
    }

    /// The body's items when it is a form (`application/x-www-form-urlencoded`, what a query
    /// too long for a URL is sent as), read as a query is; none otherwise.
    public var formItems: [(name: String, value: String)] {
        guard let type = headers["content-type"], MediaType.essence(type) == "application/x-www-form-urlencoded" else { return [] }
        return Self.formItems(Substring(String(decoding: body, as: UTF8.self)))
    }

    private static func formItems(_ rawQuery: Substring) -> [(name: String, value: String)] {
        rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let eq = pair.firstIndex(of: "=") {
                return (PercentCoding.decodeQueryComponent(pair[..<eq]), PercentCoding.decodeQueryComponent(pair[pair.index(after: eq)...]))
            }
            return (PercentCoding.decodeQueryComponent(pair), "")
        }
    }

    /// The first value for a query parameter.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }
}
