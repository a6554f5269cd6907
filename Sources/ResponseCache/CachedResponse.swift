import Primitives

/// A representation as the cache keeps it: when it was stored, its freshness policy and the
/// `Cache-Control` line that policy sends, and the upstream's validators for the next refresh.
/// A hit does no JSON or compression work: the representation goes to the writer as it is.
public final class CachedResponse: Sendable {
    public let representation: Representation
    public let storedAt: Double
    public let policy: FreshnessPolicy
    /// The full lifetime, sent as is with an honest `Age` (RFC 9111 §4.2.3: the
    /// remaining freshness is `max-age − Age`); built once, not per hit.
    public let cacheControl: String
    /// `Cache-Control: …\r\n`, written before the representation's own lines.
    public let cacheControlLine: [UInt8]
    /// The upstream's validators for this answer (and a moved feed's address): what makes
    /// the next refresh conditional, here or on another replica (kept in the shared tier too).
    public let revalidation: Revalidation?

    /// `representation`: a described one (its validators and lines its own), as a load builds it.
    public init(_ representation: Representation, storedAt: Double, policy: FreshnessPolicy, revalidation: Revalidation? = nil) {
        assert(representation.contentType != nil, "a cache keeps described representations: plain bytes have no validator or lines")
        self.representation = representation
        self.storedAt = storedAt
        self.policy = policy
        self.revalidation = representation.status == 200 ? revalidation : nil
        cacheControl =
            representation.status == 200
            ? "public, max-age=\(Self.delta(policy.ttl)), stale-while-revalidate=\(Self.delta(policy.staleWhileRevalidate)), stale-if-error=\(Self.delta(policy.staleIfError))"
            : "no-store"
        cacheControlLine = Array("Cache-Control: \(cacheControl)\r\n".utf8)
    }

    public convenience init(
        status: Int = 200, body: [UInt8], gzippedBody: [UInt8]?, storedAt: Double, policy: FreshnessPolicy, link: String? = nil,
        revalidation: Revalidation? = nil, contentType: String = MediaType.json
    ) {
        self.init(
            Representation(body, status: status, contentType: contentType, link: link, gzippedBody: gzippedBody), storedAt: storedAt, policy: policy,
            revalidation: revalidation)
    }

    /// The representation's, for the cache's own decisions and the shared tier.
    public var status: Int { representation.status }
    public var body: [UInt8] { representation.body }
    public var gzippedBody: [UInt8]? { representation.gzippedBody }
    public var link: String? { representation.link }
    public var etag: String { representation.etag }
    public var contentType: String { representation.contentType ?? MediaType.json }
    public var isJSON: Bool { representation.isJSON }

    /// Whole seconds for a header, never trapping: RFC 9111 §1.2.2 caps delta-seconds at
    /// 2147483648, and a policy read from a shared tier could be anything.
    static func delta(_ seconds: Double) -> Int { seconds.isFinite ? Int(min(max(seconds, 0), 2_147_483_648)) : 0 }

    /// The same response as stored at another time (an entry read from the shared tier).
    public func restamped(storedAt: Double) -> CachedResponse {
        CachedResponse(restamping: self, storedAt: storedAt, revalidation: revalidation)
    }

    /// After a `304 Not Modified`: the same representation, fresh again from `storedAt`
    /// (RFC 9111 §4.3.4), with the validators the 304 brought.
    public func renewed(storedAt: Double, revalidation: Revalidation) -> CachedResponse {
        CachedResponse(restamping: self, storedAt: storedAt, revalidation: revalidation)
    }

    /// The representation and rendered line shared, not recomputed.
    private init(restamping other: CachedResponse, storedAt: Double, revalidation: Revalidation?) {
        representation = other.representation
        self.revalidation = revalidation
        self.storedAt = storedAt
        policy = other.policy
        cacheControl = other.cacheControl
        cacheControlLine = other.cacheControlLine
    }

    /// Approximate memory held, for the byte budget.
    var cost: Int {
        // Capacity, not count: what the arrays hold in memory is what the budget bounds.
        body.capacity + (gzippedBody?.capacity ?? 0) + etag.utf8.count + (link?.utf8.count ?? 0) + (revalidation?.serialized.utf8.count ?? 0) + 128
    }

    public func age(at now: Double) -> Double { max(0, now - storedAt) }
    public func isFresh(at now: Double) -> Bool { age(at: now) < policy.ttl }
}
