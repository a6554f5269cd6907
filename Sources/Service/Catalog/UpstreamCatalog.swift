import Feeds

/// Every upstream FeedProxy fetches from. A new one is a declaration added here; everything
/// that lists upstreams or their routes reads this list, in this order (the index's, `--help`'s).
public enum UpstreamCatalog {
    static let all: [UpstreamDeclaration] = [.flickr, .itunes, .podcastFeeds, .kiva, .images]

    /// What `make fuzz` runs (Fuzz/ParserFuzzer): an upstream's answers end to end, through the
    /// entry its declaration names; a broken promise, or nil.
    public static func fuzz(_ bytes: [UInt8], source: String) -> String? {
        all.first { $0.source == source }?.fuzz.run(bytes).finding
    }

    /// Every upstream's fuzz entry but those of `excluded` (fuzzed on their own).
    public static func fuzzEntries(excluding excluded: Set<String>) -> [@Sendable ([UInt8]) -> FuzzRun] {
        all.filter { !excluded.contains($0.source) }.map(\.fuzz.run)
    }

    /// The metrics' source labels.
    static var sources: [String] { all.map(\.source) }

    /// Each rate-limited upstream's requests per minute, as configured.
    static func ratesPerMinute(_ c: Configuration) -> [String: Double] {
        Dictionary(uniqueKeysWithValues: all.compactMap { u in u.rateLimit.published.map { (u.source, $0.perMinute(c)) } })
    }

    /// What the configured upstream endpoints are, for the shared-cache fingerprint: their
    /// URLs, or, when they stand for something else (`--fixtures`), which optional ones are set.
    static func endpointIdentity(_ c: Configuration) -> [String] {
        let endpoints = all.flatMap(\.endpoints.all)
        guard let identity = c.upstreamIdentity else { return endpoints.map { $0.value(c) ?? "" } }
        return [identity] + endpoints.filter(\.isOptional).map { $0.value(c) == nil ? "unset" : "set" }
    }

    /// The settings that point every upstream at a fixture upstream listening at `baseURL`
    /// (optional endpoints, which switch an API, left out), for tests and scripts that start
    /// replicas against one.
    public static func fixtureEnvironment(baseURL: String) -> [String: String] {
        var env: [String: String] = [:]
        for endpoint in all.flatMap(\.endpoints.all) where !endpoint.isOptional { env[endpoint.option.env] = baseURL + endpoint.fixturePath }
        return env
    }

    /// The variables of every upstream's rate limit (tests raise them all).
    public static var rateLimitVariables: [String] { all.compactMap { $0.rateLimit.published?.option.env } }

    /// Where the fixture upstream must answer as each endpoint would.
    public static var fixturePaths: [String] { all.flatMap(\.endpoints.all).map(\.fixturePath) }
}

extension Configuration {
    /// `--fixtures`: every upstream endpoint at the fixture upstream at `baseURL`, which is on
    /// loopback (so feed URLs may be private), and one fingerprint for all such replicas.
    public mutating func pointUpstreams(atFixtures baseURL: String) {
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints.all) { endpoint.point(&self, baseURL) }
        allowPrivateFeedHosts = true
        upstreamIdentity = "fixtures"
        // The recorded feeds' artwork is served through the image proxy: offline, one known
        // key (so fixture replicas still share Redis), unless one is given.
        if self[Setting.imageProxyKey] == nil { self[Setting.imageProxyKey] = "feedproxy-fixtures" }
    }
}
