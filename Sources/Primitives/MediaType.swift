/// The media type every JSON answer carries, written by the server's JSON responses and by
/// a cached entry's pre-rendered headers alike: one spelling.
public enum MediaType {
    public static let json = "application/json; charset=utf-8"

    /// A Content-Type's type/subtype in lower case, its parameters dropped (RFC 9110 §8.3.1).
    public static func essence(_ value: String) -> String {
        (value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? "").trimmingWhitespace().lowercased()
    }
}
