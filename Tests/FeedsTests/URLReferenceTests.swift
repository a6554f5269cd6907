import FeedFormats
import Primitives
import TestSupport
import Testing

/// Issue 57: the scheme and host checks look at bytes (RFC 3986's are ASCII), not at Unicode
/// properties; they must say what the property lookups said, on ASCII and non-ASCII input alike.
@Suite(.offPool) struct URLReferenceASCIITests {
    /// The checks as they were, on Unicode scalars' properties.
    static func schemeByProperties(_ ref: String) -> String? {
        var scheme = ""
        for (i, c) in ref.unicodeScalars.enumerated() {
            if c == ":" { return i > 0 ? scheme.lowercased() : nil }
            let ok = c.isASCII && (c.properties.isAlphabetic || (i > 0 && (("0"..."9").contains(c) || c == "+" || c == "-" || c == ".")))
            guard ok else { return nil }
            scheme.unicodeScalars.append(c)
        }
        return nil
    }

    static func hostAndPortByProperties(_ authority: String) -> Bool {
        var host = Substring(authority)
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let inside = host[host.index(after: host.startIndex)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return false }
                port = after.dropFirst()
            }
            host = inside
        } else {
            if let colon = host.lastIndex(of: ":") {
                port = host[host.index(after: colon)...]
                host = host[..<colon]
            }
            guard !host.isEmpty, host.utf8.count <= 253,
                host.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "." || $0 == "_") }
                )
            else { return false }
        }
        if let port, !port.isEmpty {
            guard port.count <= 5, port.allSatisfy(\.isASCIIDigit), let n = Int(port), n <= 65535 else { return false }
        }
        return true
    }

    static let samples = [
        "https://example.com/a", "HTTP://EXAMPLE.COM", "hTtPs://Ex-am_ple.org:8080/x", "ftp://x", "a+b-c.d:rest", "1http://x", ":nothing", "",
        "javascript:alert(1)",
        "https://bücher.example/", "https://xn--bcher-kva.example/", "https://例え.テスト/", "https://ｅｘａｍｐｌｅ.com/", "ªbc://x", "https://exa mple.com/",
        "https://[::1]:8080/", "https://[２００１::1]/", "https://host:99999/", "https://host:０/", "https://ho\u{301}st/", "https://İstanbul.example/",
        "h\u{212A}tp://x",
        "https://a.b.c.d.e/", "https://-/", "https://_/", "https://host:/", "https://host:80:80/", "mailto:a@b", "Ⓗttps://x", "https://x\u{0}y/",
    ]

    @Test func theByteChecksAgreeWithThePropertyChecks() {
        var inputs = Self.samples
        // Random strings over ASCII and letters, digits and marks from other scripts.
        let alphabet = Array("aZz09+-._:/[]@%?#é ß𝒳ＡªⅫ٣\u{301}İK\u{212A}ſ".unicodeScalars)
        var rng = SplitMix(seed: 57)
        for _ in 0..<5_000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<(rng.next() % 12) { s.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
            inputs.append(String(s))
            inputs.append("https://" + String(s) + "/")
        }
        for input in inputs {
            #expect(URLReference.scheme(of: input) == Self.schemeByProperties(input), "\(input.debugDescription)")
            let authority = String(input.drop { $0 != "/" }.drop { $0 == "/" }.prefix { $0 != "/" })
            #expect(URLReference.validHostAndPort(authority) == Self.hostAndPortByProperties(authority), "\(input.debugDescription)")
        }
    }

    /// The URL parts are found by their ASCII delimiters' bytes, with Character semantics
    /// kept: a `#` with a combining mark after it, or a prepended mark before it, is no `#`.
    @Test func delimitersFoundByTheirBytesAreTheCharactersOnes() {
        let alphabet = Array("ab#?/:@]%\u{301}\u{600}\u{200D}\u{1F600}\u{1F1E6}\u{1100}\u{1161}\r\né ".unicodeScalars)
        var rng = SplitMix(seed: 5757)
        for _ in 0..<20_000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<(rng.next() % 10) { scalars.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
            let string = String(scalars)
            let bounds = Array(string.unicodeScalars.indices) + [string.endIndex]
            let a = bounds[Int(rng.next() % UInt64(bounds.count))], b = bounds[Int(rng.next() % UInt64(bounds.count))]
            let s = string[min(a, b)..<max(a, b)]
            for c: Character in ["#", "?", "/", ":", "@", "]"] {
                #expect(URLReference.firstIndex(of: c, in: s) == s.firstIndex(of: c), "\(s.debugDescription) \(c)")
                #expect(URLReference.lastIndex(of: c, in: s) == s.lastIndex(of: c), "\(s.debugDescription) \(c)")
            }
        }
    }

    /// The one-pass check of the usual URL (what a big feed's show notes are full of) says
    /// "as it is" exactly where the long way returns the reference unchanged: hand-picked
    /// edges, then random strings of URL pieces and hostile bytes, with and without a base.
    @Test func thePlainURLFastPathAgreesWithTheLongWay() async throws {
        try await offPool { Self.plainURLFastPath() }  // 60,000 resolutions: not on the test pool
    }

    static func plainURLFastPath() {
        let usual = [
            "https://example.com/links/1/2", "http://shop.example.org/p?id=3&ref=pod", "https://patreon.example/show", "https://a.example",
            "https://a.example:8443/x#frag", "http://a.example:/", "https://cdn.example/ep%20one.mp3?x=%C3%A9", "http://a_b.example/",
        ]
        for url in usual {
            #expect(URLReference.isPlainAbsolute(url), "\(url)")
            #expect(URLReference.resolvedAbsolute(url) == url, "\(url)")
        }
        let edges = [
            "HTTPS://a.example/", "https:/a.example", "https:///x", "https://:80/", "https://a.example:65536/", "https://a.example:123456/",
            "https://a.example:65535/", "https://a:b:80/", "https://u:p@a.example/", "https://[::1]:80/", "https://a.example/ b",
            "https://a.example/\"x", "https://a.example/<", "https://a.example/é", "https://ex ample.com/", " https://a.example/",
            "https://a.example/\u{7F}", "https://a.example\\@b.example/", "https://a.example?q", "https://a.example#f", "httpx://a.example/",
            "https://a.example:8a/", "http://" + String(repeating: "a", count: 254) + "/", "https://a.example/" + String(repeating: "p", count: 4100),
            "https://a.example/%zz", "https://a.example/{x}", "https://a.ex%41mple/", "http://a.example:00080/", "javascript:alert(1)",
        ]
        let pieces = [
            "http", "https", "HTTP", ":", "//", "/", "a", "b.example", ".", "-", "_", "@", "[", "]", "::1", "80", "65535", "99999", "?", "#",
            "=", "&", "%", "%20", " ", "\t", "\"", "<", "\\", "é", "\u{301}", "x", "..", "\u{7F}", "\0",
        ]
        var inputs = usual + edges
        var rng = SplitMix(seed: 5700)
        for _ in 0..<30_000 {
            var s = rng.next() % 2 == 0 ? "https://" : ""
            for _ in 0..<(rng.next() % 10) { s += pieces[Int(rng.next() % UInt64(pieces.count))] }
            inputs.append(s)
        }
        var plain = 0
        for input in inputs {
            for base in [nil, "https://feeds.example/a/b?c=d"] {
                #expect(URLReference.absolute(input, base: base) == URLReference.resolvedAbsolute(input, base: base), "\(input.debugDescription)")
            }
            if URLReference.isPlainAbsolute(input) {
                plain += 1
                #expect(URLReference.resolvedAbsolute(input) == input, "\(input.debugDescription)")
            }
        }
        #expect(plain > 1_000, "\(plain) of \(inputs.count) on the fast path")
    }
}
