/// One answer as it is sent: its status, its bytes (and a gzip variant), its validators and
/// the header lines that describe it, rendered once. The one result type from the adapter to
/// the writer: a feed's load builds it, the cache keeps it (with when it was stored and how
/// long it stays fresh), and the writer sends its bytes and lines as they are. A class: a hit
/// passes one reference along, not each of its arrays.
public final class Representation: Sendable {
    public let status: Int
    public let body: [UInt8]
    /// A pre-compressed variant of `body`, sent when the client accepts gzip.
    public let gzippedBody: [UInt8]?
    /// Whether the writer may gzip `body` on the fly when there is no variant.
    public let compressible: Bool
    /// The media type a described representation's lines state; nil: the response's own
    /// headers say (an error, an operational answer).
    public let contentType: String?
    /// A `Link` header value (RFC 8288 paging links); nil: none.
    public let link: String?
    /// Strong validators of each variant (the gzip variant is a different representation).
    public let etag: String
    public let gzipETag: String
    /// ETag (a 200's), Link, Vary: Accept (an image, chosen by `Accept`), Content-Type: what
    /// every response of each variant sends, rendered once, not per request.
    public let headerLines: [UInt8]
    public let gzipHeaderLines: [UInt8]

    /// A described representation, as a feed's load builds it and a cache keeps it: its
    /// validators and header lines are worked out here, once.
    /// `etag`: a validator the builder names (nil: from the bytes).
    public init(
        _ body: [UInt8], status: Int = 200, contentType: String = MediaType.json, link: String? = nil, gzippedBody: [UInt8]? = nil, etag: String? = nil
    ) {
        self.status = status
        self.body = body
        self.gzippedBody = gzippedBody
        self.compressible = contentType == MediaType.json
        self.contentType = contentType
        self.link = link
        let etag = etag ?? ETag.strong(for: body)
        self.etag = etag
        gzipETag = String(etag.dropLast()) + "-gz\""
        headerLines = Self.lines(etag: status == 200 ? etag : nil, link: link, contentType: contentType)
        gzipHeaderLines = gzippedBody == nil ? [] : Self.lines(etag: status == 200 ? gzipETag : nil, link: link, contentType: contentType)
    }

    /// Bytes the response's own headers describe (no validator, no lines of its own).
    public init(plain body: [UInt8], gzippedBody: [UInt8]? = nil, compressible: Bool) {
        status = 200
        self.body = body
        self.gzippedBody = gzippedBody
        self.compressible = compressible
        contentType = nil
        link = nil
        etag = ""
        gzipETag = ""
        headerLines = []
        gzipHeaderLines = []
    }

    /// The same representation with a gzip variant kept beside it (JSON only: an image is
    /// never compressed again); validators and identity lines shared, not recomputed.
    public func compressed() -> Representation {
        guard gzippedBody == nil, contentType == MediaType.json, let gzip = Gzip.compress(body) else { return self }
        return Representation(self, gzippedBody: gzip)
    }

    private init(_ other: Representation, gzippedBody: [UInt8]) {
        status = other.status
        body = other.body
        self.gzippedBody = gzippedBody
        compressible = other.compressible
        contentType = other.contentType
        link = other.link
        etag = other.etag
        gzipETag = other.gzipETag
        headerLines = other.headerLines
        gzipHeaderLines = Self.lines(etag: status == 200 ? gzipETag : nil, link: link, contentType: other.contentType ?? MediaType.json)
    }

    /// JSON (a gzip variant may be chosen by `Accept-Encoding`); an image is sent as it is.
    public var isJSON: Bool { contentType == MediaType.json }

    static func lines(etag: String?, link: String?, contentType: String) -> [UInt8] {
        var text = ""
        if let etag { text += "ETag: \(etag)\r\n" }
        if let link { text += "Link: \(link)\r\n" }
        if contentType != MediaType.json { text += "Vary: Accept\r\n" }
        return Array((text + "Content-Type: \(contentType)\r\n").utf8)
    }
}
