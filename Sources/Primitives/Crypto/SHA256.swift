import CCrypto

/// SHA-256 (FIPS 180-4), from OpenSSL's libcrypto.
public enum SHA256 {
    /// The 32-byte digest; empty if libcrypto fails (never a crash on a request's path).
    public static func hash<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        withContiguousBytes(bytes) { data in
            [UInt8](unsafeUninitializedCapacity: 32) { out, count in
                count = ccrypto_sha256(data.baseAddress, data.count, out.baseAddress) == 1 ? 32 : 0
            }
        }
    }
}

/// `bytes` as one contiguous buffer: in place where the collection has one (arrays, native
/// strings' UTF-8), else copied.
@inline(__always) func withContiguousBytes<C: Collection, R>(_ bytes: C, _ body: (UnsafeRawBufferPointer) -> R) -> R
where C.Element == UInt8 {
    if let result = bytes.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
    return Array(bytes).withUnsafeBytes(body)
}
