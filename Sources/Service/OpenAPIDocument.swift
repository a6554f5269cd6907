/// Placeholder replaced below.
enum OpenAPIDocument {
    static let json = "{}"
}
