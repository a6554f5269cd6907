/// Strong validators for a representation's bytes.
public enum ETag {
    /// A strong validator from the bytes (xxHash64 + length; not a security hash): every
    /// replica computes the same one for the same bytes.
    public static func strong(for body: [UInt8]) -> String {
        "\"" + XXH64.hex(XXH64.hash(body)) + "-" + String(body.count, radix: 16) + "\""
    }
}
