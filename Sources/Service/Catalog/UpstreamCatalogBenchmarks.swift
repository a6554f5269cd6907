/// What FeedBench (`make bench`) times, read from the catalog so the benchmark names no
/// upstream: each declared upstream's adapter over its recorded answers.
extension UpstreamCatalog {
    /// Every upstream's source name, in the catalog's order (its recorded answers, when it has
    /// its own, are in `Fixtures/<source>/`).
    public static var declaredSources: [String] { sources }

    /// `bytes` through the adapter of the upstream named `source`, end to end, every shape it
    /// reads (its declaration's fuzz entry: decode, normalise, encode); the outcome is dropped.
    public static func runAdapter(_ bytes: [UInt8], source: String) {
        _ = all.first { $0.source == source }?.fuzz(bytes)
    }
}
