import Feeds
import HTTPServer

/// One upstream FeedProxy fetches from, declared once: where it is, its other settings, its
/// shared rate budget, its routes and the schemas of their answers. The option list, the
/// upstream client's rate table, the metrics' source labels, the shared-cache fingerprint,
/// `--fixtures`, the router, the API document and the tests' fixture environment are derived
/// from `UpstreamCatalog.all`. Every part is a
/// required argument: a declaration that leaves one out does not compile.
struct UpstreamDeclaration: Sendable {
    /// What its rate budget, queue, breakers, metrics and answers call it (`SourceName`).
    let source: String
    /// The settings that say where it is, or none of its own and why.
    let endpoints: UpstreamEndpoints
    /// Its shared rate budget: a published limit, or none and why (never a silent "unlimited").
    let rateLimit: RateBudget
    /// Its other settings (freshness, bounds), in `--help` order after its endpoints.
    let settings: [Option]
    /// Its routes, each built over the services.
    let routes: [RouteDeclaration]
    /// The OpenAPI schemas of its answers, by name (its routes' descriptions refer to them).
    let schemas: OpenAPIValue
    /// Its answers through its adapter end to end, for `make fuzz`, and the recorded answers
    /// it must read.
    let fuzz: FuzzEntry

    /// Its settings as the parser, `--help` and docs/configuration.md list them.
    var options: [Option] { endpoints.all.map(\.option) + settings + (rateLimit.published.map { [$0.option] } ?? []) }
}

/// Where an upstream is, a choice every declaration makes: at least one setting naming its
/// URL (`.at(…)`), or none of its own and why (the publishers' hosts a feed or an image names),
/// which `--help` and docs/configuration.md print. An empty list does not compile.
enum UpstreamEndpoints: Sendable {
    case settings(UpstreamEndpoint, [UpstreamEndpoint])
    case none(because: String)

    static func at(_ first: UpstreamEndpoint, _ more: UpstreamEndpoint...) -> UpstreamEndpoints { .settings(first, more) }

    var all: [UpstreamEndpoint] {
        switch self {
        case .settings(let first, let more): [first] + more
        case .none: []
        }
    }
}

/// A setting naming an upstream URL, and the path the fixture upstream serves it at.
struct UpstreamEndpoint: Sendable {
    let option: Option
    /// Where the fixture upstream (`--fixtures`, the tests) answers as this endpoint would.
    let fixturePath: String
    /// The configured URL; nil when an optional endpoint is unset.
    let value: @Sendable (Configuration) -> String?
    /// Points it at the fixture upstream at this base URL (an unset optional one stays unset:
    /// setting it changes which API is spoken).
    let point: @Sendable (inout Configuration, String) -> Void
    /// Optional endpoints switch an API on when set, so the fixture environment leaves them out.
    let isOptional: Bool

    init(_ flag: String, _ env: String, _ keyPath: WritableKeyPath<Configuration, String> & Sendable, fixturePath: String, _ help: String) {
        option = Option(flag, env, keyPath, .httpURL, help)
        self.fixturePath = fixturePath
        value = { $0[keyPath: keyPath] }
        point = { c, base in c[keyPath: keyPath] = base + fixturePath }
        isOptional = false
    }

    init(_ flag: String, _ env: String, _ keyPath: WritableKeyPath<Configuration, String?> & Sendable, fixturePath: String, _ help: String) {
        option = Option(flag, env, keyPath, .optionalHTTPURL, help)
        self.fixturePath = fixturePath
        value = { $0[keyPath: keyPath] }
        point = { c, base in if c[keyPath: keyPath] != nil { c[keyPath: keyPath] = base + fixturePath } }
        isOptional = true
    }
}

/// How much of an upstream all replicas may use: a choice every declaration makes.
enum RateBudget: Sendable {
    /// The upstream publishes a limit: one budget for all replicas, set by this setting.
    case published(RateLimitSetting)
    /// Nobody's budget is spent (publishers' own hosts, each with its breaker and fair turns):
    /// the reason, which `--help` and docs/configuration.md print.
    case none(because: String)

    var published: RateLimitSetting? {
        if case .published(let setting) = self { return setting }
        return nil
    }
}

/// An upstream's published request rate, one budget for all replicas.
struct RateLimitSetting: Sendable {
    let option: Option
    let perMinute: @Sendable (Configuration) -> Double

    init(_ flag: String, _ env: String, _ keyPath: WritableKeyPath<Configuration, Double> & Sendable, _ help: String) {
        option = Option(flag, env, keyPath, .rate(), help)
        perMinute = { $0[keyPath: keyPath] }
    }
}

/// An upstream's answers through its adapter end to end (the adapter's `fuzz`: a path only
/// its author knows), which `make fuzz` runs over arbitrary bytes, and the recorded answers
/// (files under `Fixtures/`) it must read as items: a test runs it over them, so an entry that
/// reads nothing is found.
struct FuzzEntry: Sendable {
    let recorded: [String]
    let run: @Sendable ([UInt8]) -> FuzzRun

    init(reading recorded: [String], _ run: @escaping @Sendable ([UInt8]) -> FuzzRun) {
        self.recorded = recorded
        self.run = run
    }
}
