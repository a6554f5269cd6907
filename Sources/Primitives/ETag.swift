/// Strong validators for a representation's bytes.
public enum ETag {
    /// A strong validator from the bytes (FNV-1a 64 + length; not a security hash).
    public static func strong(for body: [UInt8]) -> String {
        var hash = FNV1a()
        hash.add(body)
        return "\"" + hash.hex + "-" + String(body.count, radix: 16) + "\""
    }
}
