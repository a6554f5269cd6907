import Feeds
import Primitives

/// A short hash of everything that shapes a cached response: the response schema (the
/// OpenAPI document the service publishes), the version, the upstream endpoints and the
/// freshness settings. It prefixes every shared-cache key, so during a rolling deploy
/// pods of two versions never read each other's JSON.
enum SchemaFingerprint {
    static func compute(_ c: Configuration) -> String {
        let upstreams = UpstreamCatalog.endpointIdentity(c)
        // Episode answers carry URLs signed with the image key: replicas with another key (or
        // none, or another public base URL) keep apart. The key is hashed, never stored.
        let images =
            c[Setting.imageProxyKey].map { key in
                [Base64URL.encode(HMACSHA256(key: Array(key.utf8)).mac(Array("feedproxy-fingerprint".utf8))), c[Setting.publicBaseURL] ?? ""]
            }
            ?? []
        let parts =
            // The episode data's layout is no part of the API: named too.
            [OpenAPIDocument.json, Configuration.version, "episode-data-\(EpisodeFeedData.version)"] + upstreams + [
                "\(c[Setting.feedMaxBodyBytes])", "\(c[Setting.episodeFileMaxBytes])", "\(c.negativeTTL)",
            ] + images
            + ["\(c[Setting.imageMaxBytes])", "\(c[Setting.imageMaxPixels])"]
        var hash = XXH64.Hasher()
        for part in parts {
            hash.add(part.utf8)
            hash.add(CollectionOfOne(0xFF))  // a separator no UTF-8 text contains
        }
        return hash.hex
    }
}
