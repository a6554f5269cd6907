/// Percent-decoding for paths and queries (RFC 3986), with validation up front
/// so later decoding cannot fail.
public enum PercentCoding {
    /// True when every `%` is followed by two hex digits.
    static func hasValidEscapes(_ bytes: some Collection<UInt8>) -> Bool {
        var pending = 0
        for b in bytes {
            if pending > 0 {
                guard hexValue(b) != nil else { return false }
                pending -= 1
            } else if b == UInt8(ascii: "%") {
                pending = 2
            }
        }
        return pending == 0
    }

    /// Decodes a path segment (`+` stays a plus).
    public static func decodePathSegment(_ s: Substring) -> String { decode(s, plusIsSpace: false) }

    /// Decodes a query name or value (`+` is a space).
    public static func decodeQueryComponent(_ s: Substring) -> String { decode(s, plusIsSpace: true) }

    static func decode(_ s: Substring, plusIsSpace: Bool) -> String {
        let utf8 = s.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(s)
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var it = utf8.makeIterator()
        while let b = it.next() {
            if b == UInt8(ascii: "%") {
                guard let h = it.next(), let l = it.next(), let hv = hexValue(h), let lv = hexValue(l) else { break }
                out.append(hv << 4 | lv)
            } else if plusIsSpace && b == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always) static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
