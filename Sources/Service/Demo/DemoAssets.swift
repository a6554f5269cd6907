import HTTPServer
import Primitives

/// `GET /demo`: the three seed apps (photos, podcasts, loans) as one page on this server's
/// public API: plain HTML, CSS and one JavaScript module (demo.html, demo.css, demo.js beside
/// this file, embedded at build time), no build step, no external assets. The page has
/// landmarks and labelled controls and no inline script or style (the CSP forbids both);
/// upstream text is only ever set as text, the only HTML inserted being an episode's
/// `notesHtml`, which the server has sanitized. Each file is answered from bytes made once, with an ETag
/// per encoding and `304` for a matching `If-None-Match`.
enum DemoAssets {
    /// Scripts and styles only from this origin, never inline or evaluated; images from this
    /// origin (the image proxy) and `https:` (the upstream CDNs), media from `https:`; API
    /// calls to this origin only.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; media-src https:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// One embedded file, as a handler answers it.
    struct Asset: Sendable {
        let plain: Response
        let gzipped: Response
        let etag: String
        let gzipETag: String

        init(_ body: [UInt8], contentType: String) {
            let fingerprint = XXH64.hex(XXH64.hash(body))
            etag = "\"demo-\(fingerprint)\""
            gzipETag = "\"demo-\(fingerprint)-gz\""
            let compressed = Gzip.compress(body)
            func response(_ tag: String) -> Response {
                var headers = HTTPHeaders()
                headers.add("Content-Type", contentType)
                headers.add("ETag", tag)
                // Revalidated on every use (a cheap 304), so a new binary's page shows at once.
                headers.add("Cache-Control", "no-cache")
                headers.add("X-Content-Type-Options", "nosniff")
                headers.add("Content-Security-Policy", DemoAssets.contentSecurityPolicy)
                headers.add("Referrer-Policy", "no-referrer")
                return Response(status: 200, headers: headers, body: body, gzippedBody: compressed, compressible: true)
            }
            plain = response(etag)
            gzipped = response(gzipETag)
        }

        /// The answer for `request`: the variant it accepts, or `304` when it has it already.
        func answer(_ request: Request) -> Response {
            let gzip = request.acceptsGzip && plain.gzippedBody != nil
            let chosen = gzip ? gzipped : plain
            if let condition = request.headers["if-none-match"], CachedRendering.matches(condition, selectedTag: gzip ? gzipETag : etag) {
                var headers = HTTPHeaders()
                headers.add("ETag", gzip ? gzipETag : etag)
                headers.add("Cache-Control", "no-cache")
                return Response(status: 304, headers: headers, compressible: true)
            }
            return chosen
        }
    }

    // Sources/Service/Demo/demo.{html,css,js}, embedded at build time (SwiftPM resources).
    static let page = Asset(PackageResources.demo_html, contentType: "text/html; charset=utf-8")
    static let script = Asset(PackageResources.demo_js, contentType: "text/javascript; charset=utf-8")
    static let style = Asset(PackageResources.demo_css, contentType: "text/css; charset=utf-8")

    /// `/demo/:file`: the script and the stylesheet; anything else is not part of the page.
    static func file(_ name: String) -> Asset? {
        switch name {
        case "app.js": return script
        case "app.css": return style
        default: return nil
        }
    }
}
