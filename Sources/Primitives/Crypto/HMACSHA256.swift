import CCrypto

/// HMAC-SHA256 (RFC 2104) under one key, from OpenSSL's libcrypto: signs image URLs.
public struct HMACSHA256: Sendable {
    let key: [UInt8]

    public init<C: Collection>(key: C) where C.Element == UInt8 {
        self.key = Array(key)
    }

    /// The 32-byte MAC; empty if libcrypto fails (never equal to a MAC a client sends, and
    /// never a crash on a request's path).
    public func mac<C: Collection>(_ message: C) -> [UInt8] where C.Element == UInt8 {
        key.withUnsafeBytes { key in
            withContiguousBytes(message) { data in
                [UInt8](unsafeUninitializedCapacity: 32) { out, count in
                    let ok = ccrypto_hmac_sha256(key.baseAddress, key.count, data.baseAddress, data.count, out.baseAddress) == 1
                    count = ok ? 32 : 0
                }
            }
        }
    }

    /// Compares two MACs in time that depends on their length only (CRYPTO_memcmp: no early
    /// exit to time).
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in ccrypto_equal(a.baseAddress, b.baseAddress, a.count) == 1 } }
    }
}
