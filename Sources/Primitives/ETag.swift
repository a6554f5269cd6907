/// Strong validators for a representation's bytes.
public enum ETag {
    /// A strong validator from the bytes (xxHash64 + length; not a security hash): every
    /// replica computes the same one for the same bytes.
    public static func strong(for body: [UInt8]) -> String {
        "\"" + XXH64.hex(XXH64.hash(body)) + "-" + String(body.count, radix: 16) + "\""
    }

    /// A strong validator from a hash that names the representation's state (an episode list
    /// that gives a sync token: the state it brings its client to, and the data it shows)
    /// rather than its bytes. Strong still: for one URL the state changes whenever the bytes do.
    public static func strong(named hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - digits.count) + digits + "-s\""
    }
}
