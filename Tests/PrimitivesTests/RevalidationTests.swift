import TestSupport
import Testing

@testable import Primitives

/// Validators kept for conditional refreshes come from upstreams and the shared tier:
/// read back like network input.
@Suite(.offPool) struct RevalidationTests {
    @Test func roundTripsThroughItsSharedTierForm() {
        let r = Revalidation(
            listedURL: "https://old.example/feed", url: "https://new.example/feed", etag: "\"abc\"", lastModified: "Mon, 03 Nov 2025 14:20:05 GMT")
        #expect(Revalidation(serialized: r.serialized) == r)
        #expect(r.conditionalHeaders.map(\.0) == ["If-None-Match", "If-Modified-Since"])
    }

    @Test func hostileValidatorsAndAddressesAreDropped() {
        // A CR/LF would inject request header fields; an overlong value is no validator.
        let r = Revalidation(
            listedURL: "https://a.example/f", url: "javascript:alert(1)", etag: "\"x\"\r\nHost: evil", lastModified: String(repeating: "9", count: 300))
        #expect(r.etag == nil && r.lastModified == nil)
        #expect(r.url == "https://a.example/f")
        #expect(!r.isUseful)
        for text in [
            "", "https://a.example/f", "ftp://a/f\nhttps://b/f\n\n", "https://a.example/f\nhttps://b.example/f\n\"e\"", String(repeating: "x", count: 20_000),
        ] {
            #expect(Revalidation(serialized: text) == nil, "\(text.prefix(40))")
        }
    }

    /// A moved address is kept only when it is absolute http(s), whatever the scheme's case.
    @Test func onlyAbsoluteHTTPAddressesAreRemembered() {
        for (url, kept) in [
            ("https://b.example/f", true), ("HTTP://B.EXAMPLE/F", true), ("HtTpS://b.example/f", true), ("http://x", false),
            ("https:/b.example/f", false), ("httpx://b.example/f", false), ("hxxps://b.example/f", false), ("https://b.example/ f", false),
            ("ftp://b.example/f", false), ("https\n://b.example", false), ("//b.example/f", false),
        ] {
            #expect(Revalidation.isAbsoluteHTTP(url) == kept, "\(url)")
        }
    }

    @Test func aNotModifiedAnswerKeepsTheValidatorItLeftOut() {
        let before = Revalidation(listedURL: "https://a.example/f", url: "https://a.example/f", etag: "\"1\"", lastModified: "Mon, 03 Nov 2025 14:20:05 GMT")
        let after = Revalidation(listedURL: "https://a.example/f", url: "https://a.example/f", etag: "\"1\"", lastModified: nil)
        #expect(after.keepingValidators(of: before).lastModified == before.lastModified)
    }
}
