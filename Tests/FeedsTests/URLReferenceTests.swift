import FeedFormats
import Primitives
import TestSupport
import Testing

/// Issue 57: the scheme and host checks look at bytes (RFC 3986's are ASCII), not at Unicode
/// properties; they must say what the property lookups said, on ASCII and non-ASCII input alike.
@Suite struct URLReferenceASCIITests {
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
}
