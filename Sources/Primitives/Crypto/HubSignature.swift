import CCrypto

/// A WebSub content notification's `X-Hub-Signature` (`sha1=…`, `sha256=…`, `sha384=…`,
/// `sha512=…`: an HMAC of the body, in hex, under the subscription's secret), checked with
/// libcrypto's HMAC and a comparison whose time does not depend on where the bytes differ.
public enum HubSignature {
    public static func valid<C: Collection>(_ header: String, body: C, secret: [UInt8]) -> Bool where C.Element == UInt8 {
        let parts = header.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, let algorithm = ["sha1": 1, "sha256": 256, "sha384": 384, "sha512": 512][parts[0].lowercased()],
            let given = hexBytes(parts[1])
        else { return false }
        let computed = secret.withUnsafeBytes { key in
            withContiguousBytes(body) { data in
                [UInt8](unsafeUninitializedCapacity: 64) { out, count in
                    count = Int(ccrypto_hmac(Int32(algorithm), key.baseAddress, key.count, data.baseAddress, data.count, out.baseAddress))
                }
            }
        }
        return !computed.isEmpty && HMACSHA256.equal(given, computed)
    }

    /// Lower- or upper-case hex, at most 64 bytes' worth; nil for anything else.
    static func hexBytes(_ text: Substring) -> [UInt8]? {
        let u = Array(text.utf8)
        guard !u.isEmpty, u.count % 2 == 0, u.count <= 128 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            case 65...70: c - 55
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        for i in stride(from: 0, to: u.count, by: 2) {
            guard let hi = nibble(u[i]), let lo = nibble(u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        return out
    }

    /// Bytes as lower-case hex (a callback's token, a secret).
    public static func hex(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out += [JSONBytes.hexDigit(b >> 4), JSONBytes.hexDigit(b & 15)] }
        return String(decoding: out, as: UTF8.self)
    }
}
