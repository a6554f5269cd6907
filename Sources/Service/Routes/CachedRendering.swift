import HTTPServer
import Primitives
import ResponseCache

/// Turns a cache entry into an HTTP response: validators, freshness headers,
/// `X-Cache`, and 304 for a matching `If-None-Match`. No JSON work, no compression.
enum CachedRendering {
    /// `X-Cache` says HIT, MISS or STALE; the access log's `cache` field also tells
    /// this replica's cache (HIT) from the shared one (L2_HIT, L2_WAIT).
    enum CacheStatus: String {
        case hit = "HIT", miss = "MISS", stale = "STALE", sharedHit = "L2_HIT", sharedWait = "L2_WAIT"

        init(_ origin: LoadOrigin) {
            switch origin {
            case .upstream: self = .miss
            case .sharedHit: self = .sharedHit
            case .sharedWait: self = .sharedWait
            case .staleWhileOtherRefreshes: self = .stale
            }
        }

        private static let hitLine = Array("X-Cache: HIT\r\n".utf8)
        private static let missLine = Array("X-Cache: MISS\r\n".utf8)
        private static let staleLine = Array("X-Cache: STALE\r\n".utf8)

        /// `X-Cache: …\r\n`: one shared array per value.
        var headerLine: [UInt8] {
            switch self {
            case .hit, .sharedHit, .sharedWait: return Self.hitLine
            case .miss: return Self.missLine
            case .stale: return Self.staleLine
            }
        }

        /// Shared arrays, so a hit allocates none for its access-log field.
        private static let hitFields = [("cache", "HIT")]
        private static let missFields = [("cache", "MISS")]
        private static let staleFields = [("cache", "STALE")]
        private static let sharedHitFields = [("cache", "L2_HIT")]
        private static let sharedWaitFields = [("cache", "L2_WAIT")]

        var logFields: [(String, String)] {
            switch self {
            case .hit: return Self.hitFields
            case .miss: return Self.missFields
            case .stale: return Self.staleFields
            case .sharedHit: return Self.sharedHitFields
            case .sharedWait: return Self.sharedWaitFields
            }
        }
    }

    static let conditionHeld = ClientError(
        status: 412, code: "precondition_failed",
        message: "If-None-Match names the current answer: a POST is never answered 304 (RFC 9110 §13.1.2); send it without If-None-Match")

    /// The answer from `entry`; the cache status goes into the context's log fields.
    static func response(_ entry: CachedResponse, for context: inout MeteredRequestContext, cacheStatus: CacheStatus, now: Double) -> Response {
        context.logFields = cacheStatus.logFields
        let representation = entry.representation
        // The writer sends the gzip variant when the request accepts it; its validator is its own.
        let etag = representation.gzippedBody != nil && context.request.acceptsGzip ? representation.gzipETag : representation.etag
        // Nothing is formatted here: the entry's lines were rendered once, X-Cache is a
        // constant, and the writer renders Age from the number.
        if representation.status == 200, let condition = context.request.headers["if-none-match"], matches(condition, selectedTag: etag) {
            // RFC 9110 §13.1.2: a matching If-None-Match is a 304 for GET and HEAD only; a form's POST gets 412.
            guard context.request.method == "GET" || context.request.isHead else { return .error(Self.conditionHeld) }
            var headers = HTTPHeaders()
            // RFC 9110 §15.4.5: the 304 carries what the 200 would (Cache-Control, ETag, Date, Vary);
            // `compressible` is what makes the writer send `Vary: Accept-Encoding`, as on the 200.
            headers.add("Cache-Control", entry.cacheControl)
            headers.add("ETag", etag)
            if let link = representation.link { headers.add("Link", link) }
            if !representation.isJSON { headers.add("Vary", "Accept") }
            return Response(
                status: 304, headers: headers, compressible: representation.isJSON, constantHeaders: cacheStatus.headerLine,
                age: age(entry, now))
        }
        // Built in place and returned as is: the representation goes to the writer as it was loaded.
        return Response(
            sending: representation, status: representation.status, renderedHeaders: entry.cacheControlLine, constantHeaders: cacheStatus.headerLine,
            age: age(entry, now))
    }

    /// RFC 9111 §5.1, in whole seconds, clamped (a clock step never makes it negative or huge).
    private static func age(_ entry: CachedResponse, _ now: Double) -> Int {
        Saturating.int(entry.age(at: now), in: 0...Int(Int32.max))
    }

    /// RFC 9110 §13.1.2: weak comparison, `*`, comma-separated lists, against the tag of the
    /// representation this request selected only (the identity tag does not match a gzip response).
    static func matches(_ header: String, selectedTag: String) -> Bool {
        for raw in header.split(separator: ",") {
            var tag = raw.trimmingASCIIWhitespace()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag == selectedTag { return true }
        }
        return false
    }
}
