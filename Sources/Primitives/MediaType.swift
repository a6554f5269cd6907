/// The media type every JSON answer carries, written by the server's JSON responses and by
/// a cached entry's pre-rendered headers alike: one spelling.
public enum MediaType {
    public static let json = "application/json; charset=utf-8"
}
