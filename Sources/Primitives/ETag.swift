/// Strong validators for a representation's bytes.
public enum ETag {
    /// A strong validator from the bytes (xxHash64 + length; not a security hash): every
    /// replica computes the same one for the same bytes.
    public static func strong(for body: [UInt8]) -> String {
        "\"" + XXH64.hex(XXH64.hash(body)) + "-" + String(body.count, radix: 16) + "\""
    }

    /// A strong validator from a hash that names the representation's state (a sync answer's:
    /// the state it brings its client to) rather than its bytes.
    public static func strong(named hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - digits.count) + digits + "-s\""
    }
}
