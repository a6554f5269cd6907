import HTTPServer
import ResponseCache

/// Turns a cache entry into an HTTP response: validators, freshness headers,
/// `X-Cache`, and 304 for a matching `If-None-Match`. No JSON work, no compression.
enum CachedRendering {
    enum CacheStatus: String {
        case hit = "HIT", miss = "MISS", stale = "STALE"
    }

    static func response(_ entry: CachedResponse, for request: Request, cacheStatus: CacheStatus, now: Double) -> Response {
        let age = Int(entry.age(at: now))
        let policy = entry.policy
        var headers = HTTPHeaders()
        let gzip = entry.gzippedBody != nil && request.acceptsGzip
        let etag = gzip ? entry.gzipETag : entry.etag
        if entry.status == 200 {
            let maxAge = max(0, Int(policy.ttl) - age)
            headers.add(
                "Cache-Control",
                "public, max-age=\(maxAge), stale-while-revalidate=\(Int(policy.staleWhileRevalidate)), stale-if-error=\(Int(policy.staleIfError))")
            headers.add("ETag", etag)
        } else {
            headers.add("Cache-Control", "no-store")
        }
        headers.add("Age", String(age))
        headers.add("X-Cache", cacheStatus.rawValue)
        var response: Response
        if entry.status == 200, let condition = request.headers["if-none-match"], matches(condition, entry) {
            response = Response(status: 304, headers: headers)
        } else {
            headers.add("Content-Type", "application/json; charset=utf-8")
            response = Response(status: entry.status, headers: headers, body: entry.body, gzippedBody: entry.gzippedBody, compressible: true)
        }
        response.logFields = [("cache", cacheStatus.rawValue)]
        return response
    }

    /// RFC 9110 §13.1.2: weak comparison, `*`, comma-separated lists; either representation's tag.
    static func matches(_ header: String, _ entry: CachedResponse) -> Bool {
        for raw in header.split(separator: ",") {
            var tag = raw.trimmingASCIIWhitespace()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag == entry.etag || tag == entry.gzipETag { return true }
        }
        return false
    }
}
