import Foundation
import Testing
import TestSupport

/// `GET /demo` as HTTP: the page and its two files, safe headers, revalidation, and the
/// setting that turns it off. (What it does in a browser: scripts/tests/demo-test.py.)
@Suite(.serialized, .offPool) struct DemoPageEndToEndTests {
    @Test func thePageAndItsFilesAreServedWithAPolicyAndValidators() async throws {
        try await offPool {
            let h = try Harness()
            let page = try h.get("/demo")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            let csp = try #require(page.header("Content-Security-Policy"))
            #expect(csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"))
            #expect(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"))
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            #expect(page.text.contains(#"<script type="module" src="demo/app.js"></script>"#))
            #expect(!page.text.contains("<script>"), "no inline script")
            let etag = try #require(page.header("ETag"))
            let again = try h.get("/demo", headers: ["If-None-Match: \(etag)"])
            #expect(again.status == 304 && again.body.isEmpty)
            #expect(try h.get("/demo/app.js").header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(try h.get("/demo/app.css").header("Content-Type") == "text/css; charset=utf-8")
            #expect(try h.get("/demo/other.js").status == 404)
            // Issue 69: with a trailing slash the page's relative links would miss: sent to /demo.
            let slashed = try h.get("/demo/")
            #expect(slashed.status == 301 && slashed.header("Location") == "/demo")
            #expect(try h.get("/").text.contains(#""/demo""#))
            // The page costs no upstream request and no quota.
            #expect(h.upstream.requestCount(for: "flickr") == 0)
        }
    }

    @Test func demoPageFalseLeavesTheJSONAPIAlone() async throws {
        try await offPool {
            let h = try Harness(environment: ["DEMO_PAGE": "false"])
            #expect(try h.get("/demo").status == 404)
            #expect(try h.get("/demo/app.js").status == 404)
            #expect(!(try h.get("/").text.contains("/demo")))
            #expect(try h.get("/photos").status == 200)
        }
    }
}
