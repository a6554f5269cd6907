import Primitives

/// A finished response as the cache keeps it: encoded bytes, a gzip variant,
/// a strong ETag and its freshness policy. A hit does no JSON or compression work.
/// A class: a hit passes one reference along, not ten retained fields.
public final class CachedResponse: Sendable {
    public let status: Int
    public let body: [UInt8]
    public let gzippedBody: [UInt8]?
    public let etag: String
    /// The gzip representation is a different representation, so it has its own validator.
    public let gzipETag: String
    public let storedAt: Double
    public let policy: FreshnessPolicy
    /// The full lifetime, sent as is with an honest `Age` (RFC 9111 §4.2.3: the
    /// remaining freshness is `max-age − Age`); built once, not per hit.
    public let cacheControl: String
    /// A `Link` header value (RFC 8288 paging links) that belongs to this answer; nil: none.
    public let link: String?
    /// The header lines every 200 of this entry sends, rendered once: Cache-Control, ETag
    /// (the identity one, or the gzip one), Link, Content-Type.
    public let headerLines: [UInt8]
    public let gzipHeaderLines: [UInt8]
    /// The upstream's validators for this answer (and a moved feed's address): what makes
    /// the next refresh conditional, here or on another replica (kept in the shared tier too).
    public let revalidation: Revalidation?
    /// JSON, or an image's type: an image is chosen by `Accept`, so it says `Vary: Accept`
    /// (and is never compressed again).
    public let contentType: String

    public init(
        status: Int = 200, body: [UInt8], gzippedBody: [UInt8]?, storedAt: Double, policy: FreshnessPolicy, link: String? = nil,
        revalidation: Revalidation? = nil, contentType: String = MediaType.json
    ) {
        self.status = status
        self.contentType = contentType
        self.revalidation = status == 200 ? revalidation : nil
        self.link = link
        self.body = body
        self.gzippedBody = gzippedBody
        let etag = ETag.strong(for: body)
        self.etag = etag
        self.gzipETag = String(etag.dropLast()) + "-gz\""
        self.storedAt = storedAt
        self.policy = policy
        self.cacheControl =
            status == 200
            ? "public, max-age=\(Self.delta(policy.ttl)), stale-while-revalidate=\(Self.delta(policy.staleWhileRevalidate)), stale-if-error=\(Self.delta(policy.staleIfError))"
            : "no-store"
        headerLines = Self.lines(cacheControl: cacheControl, etag: status == 200 ? etag : nil, link: link, contentType: contentType)
        gzipHeaderLines =
            gzippedBody == nil ? [] : Self.lines(cacheControl: cacheControl, etag: status == 200 ? gzipETag : nil, link: link, contentType: contentType)
    }

    static func lines(cacheControl: String, etag: String?, link: String?, contentType: String) -> [UInt8] {
        var text = "Cache-Control: \(cacheControl)\r\n"
        if let etag { text += "ETag: \(etag)\r\n" }
        if let link { text += "Link: \(link)\r\n" }
        if contentType != MediaType.json { text += "Vary: Accept\r\n" }
        return Array((text + "Content-Type: \(contentType)\r\n").utf8)
    }

    /// JSON (a gzip variant may be chosen by `Accept-Encoding`); an image is sent as it is.
    public var isJSON: Bool { contentType == MediaType.json }

    /// Whole seconds for a header, never trapping: RFC 9111 §1.2.2 caps delta-seconds at
    /// 2147483648, and a policy read from a shared tier could be anything.
    static func delta(_ seconds: Double) -> Int { seconds.isFinite ? Int(min(max(seconds, 0), 2_147_483_648)) : 0 }

    /// The same response as stored at another time (an entry read from the shared tier).
    public func restamped(storedAt: Double) -> CachedResponse {
        CachedResponse(restamping: self, storedAt: storedAt, revalidation: revalidation)
    }

    /// After a `304 Not Modified`: the same bytes and client-facing ETag, fresh again from
    /// `storedAt` (RFC 9111 §4.3.4), with the validators the 304 brought.
    public func renewed(storedAt: Double, revalidation: Revalidation) -> CachedResponse {
        CachedResponse(restamping: self, storedAt: storedAt, revalidation: revalidation)
    }

    /// Bodies and validators shared, not recomputed.
    private init(restamping other: CachedResponse, storedAt: Double, revalidation: Revalidation?) {
        self.revalidation = revalidation
        contentType = other.contentType
        status = other.status
        body = other.body
        gzippedBody = other.gzippedBody
        etag = other.etag
        gzipETag = other.gzipETag
        self.storedAt = storedAt
        policy = other.policy
        cacheControl = other.cacheControl
        link = other.link
        headerLines = other.headerLines
        gzipHeaderLines = other.gzipHeaderLines
    }

    /// Approximate memory held, for the byte budget.
    var cost: Int {
        body.count + (gzippedBody?.count ?? 0) + etag.utf8.count + (link?.utf8.count ?? 0) + (revalidation?.serialized.utf8.count ?? 0) + 128
    }

    public func age(at now: Double) -> Double { max(0, now - storedAt) }
    public func isFresh(at now: Double) -> Bool { age(at: now) < policy.ttl }
}
