/// Unpadded base64url (RFC 4648 §5): opaque tokens that travel in a URL's query as they are.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i]), b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0, b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if i + 1 < bytes.count { out.append(alphabet[Int(n >> 6 & 63)]) }
            if i + 2 < bytes.count { out.append(alphabet[Int(n & 63)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or nil for any character outside the alphabet, padding, or a length no
    /// encoding has (one character left over).
    public static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt32] = []
        values.reserveCapacity(text.utf8.count)
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(UInt32(c - UInt8(ascii: "A")))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(UInt32(c - UInt8(ascii: "a")) + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(UInt32(c - UInt8(ascii: "0")) + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i < values.count {
            let rest = min(4, values.count - i)
            var n: UInt32 = 0
            for k in 0..<4 { n = n << 6 | (k < rest ? values[i + k] : 0) }
            out.append(UInt8(n >> 16 & 0xFF))
            if rest > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if rest > 3 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}
