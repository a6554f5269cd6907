import Primitives

/// A URL a stranger wrote (a feed's link, enclosure, image, a show note's href), made safe to
/// hand an app: an absolute `http(s)` URL or nothing. Relative references are resolved
/// against a base (the feed's final URL, or an Atom `xml:base`) as RFC 3986 §5.2 says; any
/// other scheme (`javascript:`, `data:`, `vbscript:`, `file:` …), a reference with nothing to
/// resolve it against, credentials in the authority, or characters no URL has give nil.
package enum URLReference {
    /// Longest URL kept (browsers and CDNs refuse far shorter ones in practice).
    static let maxLength = 4096

    package static func absolute(_ reference: String, base: String? = nil) -> String? {
        if isPlainAbsolute(reference) { return reference }
        return resolvedAbsolute(reference, base: base)
    }

    /// `absolute` without its fast path (what `isPlainAbsolute` is tested and fuzzed against).
    package static func resolvedAbsolute(_ reference: String, base: String? = nil) -> String? {
        guard let ref = cleaned(reference) else { return nil }
        if let scheme = scheme(of: ref) {
            guard scheme == "http" || scheme == "https" else { return nil }
            return validated(ref.utf8.starts(with: scheme.utf8) ? ref : scheme + ref.dropFirst(scheme.count))  // the scheme lowercased
        }
        // RFC 3986 §4.2: a relative path's first segment has no colon (it would read as a
        // scheme: "java script:…" after XML turned a tab into a space).
        let firstSegment = ref.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !firstSegment.contains(":") else { return nil }
        guard let base, let b = Parts(base), b.authority != nil else { return nil }
        return validated(resolve(ref, against: b))
    }

    /// Whether `s` is what nearly every feed writes, an absolute URL that `resolvedAbsolute`
    /// returns as it is, decided in one pass over its bytes: `http://` or `https://` (the
    /// scheme in lowercase), a host of letters, digits, `-`, `.`, `_` with at most one colon and
    /// a port of up to five digits not above 65535, then only printable ASCII with nothing to
    /// refuse, at most `maxLength` bytes. False sends it the long way, which decides the rest
    /// (credentials, IPv6 literals, spaces to encode, relative references, other schemes).
    package static func isPlainAbsolute(_ s: String) -> Bool {
        s.utf8.withContiguousStorageIfAvailable { b -> Bool in
            let n = b.count
            guard n <= maxLength, n > 7, b[0] == 0x68, b[1] == 0x74, b[2] == 0x74, b[3] == 0x70 else { return false }  // "http"
            var i = b[4] == 0x73 ? 5 : 4  // "s"
            guard i + 3 <= n, b[i] == 0x3A, b[i + 1] == 0x2F, b[i + 2] == 0x2F else { return false }  // "://"
            i += 3
            let hostStart = i
            var colon = -1
            while i < n {
                let c = b[i]
                if c == 0x2F || c == 0x3F || c == 0x23 { break }  // "/", "?", "#": the authority's end
                if c == 0x3A {
                    guard colon < 0 else { return false }
                    colon = i
                } else if colon >= 0 {
                    guard isASCIIDigit(c), i - colon <= 5 else { return false }
                } else {
                    guard isASCIILetter(c) || isASCIIDigit(c) || c == 0x2D || c == 0x2E || c == 0x5F else { return false }
                }
                i += 1
            }
            let hostEnd = colon >= 0 ? colon : i
            guard hostEnd > hostStart, hostEnd - hostStart <= 253 else { return false }
            if colon >= 0 {
                var port = 0
                for k in (colon + 1)..<i { port = port * 10 + Int(b[k] - 0x30) }  // at most five digits
                guard port <= 65535 else { return false }
            }
            while i < n {
                let c = b[i]
                guard c > 0x20, c < 0x7F, !refused(c) else { return false }
                i += 1
            }
            return true
        } ?? false
    }

    /// `mailto:` addresses as links in show notes, checked for the one thing they carry.
    package static func mailto(_ reference: String) -> String? {
        guard let ref = cleaned(reference), ref.lowercased().hasPrefix("mailto:") else { return nil }
        let rest = ref.dropFirst(7)
        guard !rest.isEmpty, rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: ">") && $0 != 0x22 }),
            rest.contains("@")
        else { return nil }
        return "mailto:" + rest
    }

    // MARK: parsing

    /// Leading and trailing spaces and controls go (as browsers strip them); tabs and line
    /// breaks inside go too; other controls make it no URL at all.
    private static func cleaned(_ text: String) -> String? {
        guard text.utf8.count <= maxLength * 2 else { return nil }
        if text.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) { return text }  // nothing to take out: as it is
        var bytes = Array(text.utf8)
        while let first = bytes.first, first <= 0x20 { bytes.removeFirst() }
        while let last = bytes.last, last <= 0x20 { bytes.removeLast() }
        bytes.removeAll { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The scheme, lowercased, when `ref` starts with one (RFC 3986 §3.1: ASCII only, so
    /// looked at byte by byte).
    package static func scheme(of ref: String) -> String? {
        var length = 0
        for b in ref.utf8 {
            if b == UInt8(ascii: ":") {
                guard length > 0 else { return nil }
                let scheme = ref.utf8.prefix(length)
                if scheme.elementsEqual("https".utf8) { return "https" }  // the usual ones, already lowercase
                if scheme.elementsEqual("http".utf8) { return "http" }
                return String(decoding: scheme.lazy.map { (65...90).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
            }
            let ok = isASCIILetter(b) || (length > 0 && (isASCIIDigit(b) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")))
            guard ok else { return nil }
            length += 1
        }
        return nil
    }

    static func isASCIILetter(_ b: UInt8) -> Bool { (65...90).contains(b) || (97...122).contains(b) }
    static func isASCIIDigit(_ b: UInt8) -> Bool { (48...57).contains(b) }

    /// An absolute http(s) URL's components as slices of it (RFC 3986 §3), what `Parts`
    /// keeps as Strings (checking a URL needs no copies of them).
    struct Slices {
        var scheme: String
        var authority: Substring?
        var path: Substring
        var query: Substring?

        init?(_ url: String) {
            guard let s = URLReference.scheme(of: url), s == "http" || s == "https" else { return nil }
            scheme = s
            var rest = url.dropFirst(s.count + 1)
            if let hash = URLReference.firstIndex(of: "#", in: rest) { rest = rest[..<hash] }
            if let q = URLReference.firstIndex(of: "?", in: rest) {
                query = rest[rest.index(after: q)...]
                rest = rest[..<q]
            }
            if rest.hasPrefix("//") {
                let afterSlashes = rest.dropFirst(2)
                let end = URLReference.firstIndex(of: "/", in: afterSlashes) ?? afterSlashes.endIndex
                authority = afterSlashes[..<end]
                path = afterSlashes[end...]
            } else {
                authority = nil
                path = rest
            }
        }
    }

    /// An absolute URL's components (RFC 3986 §3).
    struct Parts {
        var scheme: String
        var authority: String?
        var path: String
        var query: String?

        init?(_ url: String) {
            guard let c = Slices(url) else { return nil }
            scheme = c.scheme
            authority = c.authority.map(String.init)
            path = String(c.path)
            query = c.query.map(String.init)
        }

        var serialized: String {
            scheme + ":" + (authority.map { "//" + $0 } ?? "") + path + (query.map { "?" + $0 } ?? "")
        }
    }

    /// RFC 3986 §5.2.2, strict: a reference with a scheme was handled before.
    private static func resolve(_ ref: String, against base: Parts) -> String {
        var r = Substring(ref)
        var fragment: Substring?
        if let hash = firstIndex(of: "#", in: r) {
            fragment = r[r.index(after: hash)...]
            r = r[..<hash]
        }
        var query: Substring?
        if let q = firstIndex(of: "?", in: r) {
            query = r[r.index(after: q)...]
            r = r[..<q]
        }
        var target = base
        if r.hasPrefix("//") {
            let afterSlashes = r.dropFirst(2)
            let end = firstIndex(of: "/", in: afterSlashes) ?? afterSlashes.endIndex
            target.authority = String(afterSlashes[..<end])
            target.path = removeDotSegments(String(afterSlashes[end...]))
            target.query = query.map(String.init)
        } else if r.isEmpty {
            if let query { target.query = String(query) }
        } else {
            if r.hasPrefix("/") {
                target.path = removeDotSegments(String(r))
            } else {
                // §5.2.3: merge with the base path's directory.
                let directory: Substring
                if base.authority != nil && base.path.isEmpty {
                    directory = "/"
                } else if let slash = lastIndex(of: "/", in: base.path[...]) {
                    directory = base.path[...slash]
                } else {
                    directory = ""
                }
                target.path = removeDotSegments(String(directory) + r)
            }
            target.query = query.map(String.init)
        }
        return target.serialized + (fragment.map { "#" + $0 } ?? "")
    }

    /// RFC 3986 §5.2.4, on segments.
    static func removeDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        let absolute = path.hasPrefix("/")
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        for (i, segment) in segments.enumerated() {
            let last = i == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if output.count > (absolute ? 1 : 0) { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        var joined = output.joined(separator: "/")
        if absolute && !joined.hasPrefix("/") { joined = "/" + joined }
        return joined
    }

    // MARK: checking the result

    /// An absolute http(s) URL with a host, no credentials, a valid port, and only bytes a
    /// URL may carry (spaces and non-ASCII percent-encoded; quotes, angle brackets and
    /// backslashes, which browsers and apps read differently, refused).
    private static func validated(_ url: String) -> String? {
        guard let parts = Slices(url), let authority = parts.authority, !authority.isEmpty, firstIndex(of: "@", in: authority) == nil else { return nil }
        guard validHostAndPort(authority) else { return nil }
        // Nothing to encode or refuse (the usual case): as it is.
        if url.utf8.count <= maxLength, url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !refused($0) }) { return url }
        var out: [UInt8] = []
        out.reserveCapacity(url.utf8.count)
        for b in url.utf8 {
            switch b {
            case 0x20: out.append(contentsOf: Array("%20".utf8))
            case _ where refused(b): return nil
            case 0x80...:
                out.append(UInt8(ascii: "%"))
                out.append(hexDigit(b >> 4))
                out.append(hexDigit(b & 0x0F))
            default: out.append(b)
            }
        }
        guard out.count <= maxLength else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// `" < > \ ` { } | ^`
    private static func refused(_ b: UInt8) -> Bool {
        switch b {
        case 0x22, 0x3C, 0x3E, 0x5C, 0x60, 0x7B, 0x7D, 0x7C, 0x5E: true
        default: false
        }
    }

    /// `s.firstIndex(of: c)`, found by its byte when it is plain: a `c` byte between ASCII
    /// neighbours is a Character of its own (only non-ASCII scalars join one to its
    /// neighbour); next to a non-ASCII scalar (a combining mark, a prepended one), the
    /// Characters are walked as `firstIndex(of:)` does.
    package static func firstIndex(of c: Character, in s: Substring) -> String.Index? {
        guard let byte = c.asciiValue, byte != 0x0A, byte != 0x0D else { return s.firstIndex(of: c) }
        guard let p = byteIndex(of: byte, in: s, last: false) else { return nil }  // no such byte: no such Character
        return hasASCIINeighbours(p, in: s) ? p : s.firstIndex(of: c)
    }

    /// `s.lastIndex(of: c)`, found by its byte when it is plain (as `firstIndex(of:in:)`).
    package static func lastIndex(of c: Character, in s: Substring) -> String.Index? {
        guard let byte = c.asciiValue, byte != 0x0A, byte != 0x0D else { return s.lastIndex(of: c) }
        guard let p = byteIndex(of: byte, in: s, last: true) else { return nil }
        return hasASCIINeighbours(p, in: s) ? p : s.lastIndex(of: c)
    }

    private static func byteIndex(of byte: UInt8, in s: Substring, last: Bool) -> String.Index? {
        let offset = s.utf8.withContiguousStorageIfAvailable { last ? $0.lastIndex(of: byte) : $0.firstIndex(of: byte) }
        guard let offset else { return last ? s.utf8.lastIndex(of: byte) : s.utf8.firstIndex(of: byte) }  // not contiguous (bridged)
        return offset.map { s.utf8.index(s.utf8.startIndex, offsetBy: $0) }
    }

    private static func hasASCIINeighbours(_ p: String.Index, in s: Substring) -> Bool {
        let utf8 = s.utf8
        let next = utf8.index(after: p)
        return (p == utf8.startIndex || utf8[utf8.index(before: p)] < 0x80) && (next == utf8.endIndex || utf8[next] < 0x80)
    }

    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x41 + v - 10 }

    package static func validHostAndPort(_ authority: String) -> Bool { validHostAndPort(authority[...]) }

    static func validHostAndPort(_ authority: Substring) -> Bool {
        var host = authority
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = firstIndex(of: "]", in: host) else { return false }
            let inside = host[host.index(after: host.startIndex)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return false }
                port = after.dropFirst()
            }
            host = inside
        } else {
            if let colon = lastIndex(of: ":", in: host) {
                port = host[host.index(after: colon)...]
                host = host[..<colon]
            }
            guard !host.isEmpty, host.utf8.count <= 253,
                // ASCII only: an internationalised host reaches apps as its punycode form.
                host.utf8.allSatisfy({ isASCIILetter($0) || isASCIIDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") })
            else { return false }
        }
        if let port, !port.isEmpty {
            guard port.count <= 5, port.allSatisfy(\.isASCIIDigit), let n = Int(port), n <= 65535 else { return false }
        }
        return true
    }
}
