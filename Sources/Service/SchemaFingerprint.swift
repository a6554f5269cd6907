/// A short hash of everything that shapes a cached response: the response schema (the
/// OpenAPI document the service publishes), the version, the upstream endpoints and the
/// freshness settings. It prefixes every shared-cache key, so during a rolling deploy
/// pods of two versions never read each other's JSON.
enum SchemaFingerprint {
    static func compute(_ c: Configuration) -> String {
        let parts = [
            OpenAPIDocument.json, Configuration.version, c.flickrFeedURL, c.itunesSearchURL, c.itunesLookupURL, c.kivaGraphQLURL,
            c.kivaLoansURL ?? "", "\(c.feedMaxBodyBytes)", "\(c.negativeTTL)",
        ]
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for part in parts {
            for b in part.utf8 {
                hash ^= UInt64(b)
                hash = hash &* 0x0000_0100_0000_01B3
            }
            hash ^= 0xFF
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
