/// An upstream request's URL, parsed once when it is set: what the send path needs from it
/// (the scheme check libcurl's setup makes, the host its circuit breaker and client span
/// name) without scanning the string again on every send or attempt.
struct UpstreamURL: Sendable, Hashable {
    /// The URL as given; what libcurl is handed.
    let string: String
    /// The scheme is `http` or `https`, in any case: the only ones a transfer may start with.
    let isHTTP: Bool
    /// The authority's host, lowercased, without userinfo or port; an IPv6 literal keeps its
    /// brackets. Nil without a `scheme://` authority, with an empty host or an unclosed `[`.
    let host: String?
    /// Host and port (the scheme's default when none is written): what libcurl counts
    /// connections by, and so what `HostSlots` shares fairly. Nil with no host.
    let hostAndPort: String?

    init(_ string: String) {
        self.string = string
        isHTTP = Self.isHTTP(string)
        let authority = Self.authority(string)
        host = authority?.host
        hostAndPort = authority.map { a in a.host + ":" + (a.port ?? (string.prefix(6).lowercased() == "https:" ? "443" : "80")) }
    }

    /// `http://` or `https://` at the start, case-insensitively (what
    /// `string.lowercased().hasPrefix(…)` said, without lowercasing the whole URL).
    static func isHTTP(_ url: String) -> Bool {
        let head = url.prefix(8).lowercased()
        return head.hasPrefix("http://") || head.hasPrefix("https://")
    }

    /// The host of `scheme://[userinfo@]host[:port]` (RFC 3986: the scheme is a letter, then
    /// letters, digits, `+`, `-` or `.`); the authority ends at `/`, `?`, `#` or the end.
    static func host(_ url: String) -> String? { authority(url)?.host }

    /// The host and the port written after it (nil: none written).
    static func authority(_ url: String) -> (host: String, port: String?)? {
        let utf8 = url.utf8
        guard let first = utf8.first, Self.isLetter(first) else { return nil }
        var i = utf8.index(after: utf8.startIndex)
        while i != utf8.endIndex, Self.isSchemeByte(utf8[i]) { i = utf8.index(after: i) }
        guard utf8[i...].starts(with: "://".utf8) else { return nil }
        let authority = utf8[utf8.index(i, offsetBy: 3)...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        let hostPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] } ?? authority
        let host: Substring.UTF8View
        if hostPort.first == UInt8(ascii: "[") {
            guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = hostPort[...close]
        } else {
            host = hostPort.prefix { $0 != UInt8(ascii: ":") }
        }
        // Every cut is at an ASCII byte, so the slices are whole UTF-8.
        guard !host.isEmpty else { return nil }
        let rest = hostPort[host.endIndex...]
        let port = rest.first == UInt8(ascii: ":") && rest.count > 1 ? String(decoding: rest.dropFirst(), as: UTF8.self) : nil
        return (String(decoding: host, as: UTF8.self).lowercased(), port)
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }
}
