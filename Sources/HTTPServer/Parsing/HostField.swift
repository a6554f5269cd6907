/// RFC 9112 §3.2: `Host = uri-host [ ":" port ]` (RFC 3986 authority without userinfo).
/// An empty value is allowed (a target without an authority); anything else that does
/// not parse is a 400.
enum HostField {
    static func isValid(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        if b.isEmpty { return true }
        var i = 0
        if b[0] == UInt8(ascii: "[") {
            // IP-literal: IPv6address or IPvFuture inside brackets.
            guard let close = b.firstIndex(of: UInt8(ascii: "]")), close > 1 else { return false }
            guard b[1..<close].allSatisfy(isLiteralByte) else { return false }
            i = close + 1
        } else {
            // IPv4address is a subset of reg-name: unreserved, pct-encoded, sub-delims.
            while i < b.count, b[i] != UInt8(ascii: ":") {
                if b[i] == UInt8(ascii: "%") {
                    guard i + 2 < b.count, isHex(b[i + 1]), isHex(b[i + 2]) else { return false }
                    i += 3
                    continue
                }
                guard isUnreserved(b[i]) || isSubDelim(b[i]) else { return false }
                i += 1
            }
        }
        if i == b.count { return true }
        guard b[i] == UInt8(ascii: ":") else { return false }
        return b[(i + 1)...].allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    private static func isLiteralByte(_ c: UInt8) -> Bool {
        isUnreserved(c) || isSubDelim(c) || c == UInt8(ascii: ":")
    }

    private static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): return true
        default: return false
        }
    }

    private static func isSubDelim(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            return true
        default: return false
        }
    }

    private static func isHex(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c)
    }
}
