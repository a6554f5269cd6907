import Feeds

/// What FeedBench (`make bench`) times, read from the catalog so the benchmark names no
/// upstream: each declared upstream's adapter over the recorded answers its declaration names.
extension UpstreamCatalog {
    /// Every upstream's source name and the recorded answers (paths under `Fixtures/`) its fuzz
    /// entry reads, in the catalog's order.
    public static var recordedAnswers: [(source: String, files: [String])] { all.map { ($0.source, $0.fuzz.recorded) } }

    /// `bytes` through the adapter of the upstream named `source`, end to end, every shape it
    /// reads (its declaration's fuzz entry: decode, normalise, encode); the items it read.
    @discardableResult
    public static func runAdapter(_ bytes: [UInt8], source: String) -> Int {
        all.first { $0.source == source }?.fuzz.run(bytes).items ?? 0
    }
}
