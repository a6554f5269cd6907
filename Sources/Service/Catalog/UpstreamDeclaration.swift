import HTTPServer

/// One upstream FeedProxy fetches from, declared once: where it is, its other settings, its
/// shared rate budget and its routes. The option list, the upstream client's rate table, the
/// metrics' source labels, the shared-cache fingerprint, `--fixtures`, the router and the
/// tests' fixture environment are derived from `UpstreamCatalog.all`. Every part is a
/// required argument: a declaration that leaves one out does not compile.
struct UpstreamDeclaration: Sendable {
    /// What its rate budget, queue, breakers, metrics and answers call it (`SourceName`).
    let source: String
    /// The settings that say where it is.
    let endpoints: [UpstreamEndpoint]
    /// Requests per minute all replicas share; nil for publishers' own hosts, where each host
    /// has its breaker and nobody's budget is spent.
    let rateLimit: RateLimitSetting?
    /// Its other settings (freshness, bounds), in `--help` order after its endpoints.
    let settings: [Option]
    /// Its routes, each built over the services.
    let routes: [FeedRouteDeclaration]

    /// Its settings as the parser, `--help` and docs/configuration.md list them.
    var options: [Option] { endpoints.map(\.option) + settings + (rateLimit.map { [$0.option] } ?? []) }
}

/// A route of an upstream, its OpenAPI operation, and how it is built (when
/// `RouteName.isEnabled` says it is on). Never an optional handler: a function stored in an
/// Optional or any generic container is called through reabstraction thunks, about 1 % more
/// instructions on every cache hit.
struct FeedRouteDeclaration: Sendable {
    let name: RouteName
    /// Its `operationId` and tag in the OpenAPI document (scripts/generate/openapi.py reads them
    /// from this declaration): what a generated client names the call and groups it under.
    let operation: RouteOperation
    let make: @Sendable (Services) -> Handler

    init(_ name: RouteName, operation id: String, tag: OperationTag, _ make: @escaping @Sendable (Services) -> Handler) {
        self.name = name
        operation = RouteOperation(name, id, tag)
        self.make = make
    }
}

/// A route's operation in the OpenAPI document, written as a `RouteOperation` of a route case,
/// an id literal and a tag case, or as a `FeedRouteDeclaration`'s arguments: the generator reads these forms.
struct RouteOperation: Sendable, Equatable {
    let route: RouteName
    let id: String
    let tag: OperationTag

    init(_ route: RouteName, _ id: String, _ tag: OperationTag) {
        self.route = route
        self.id = id
        self.tag = tag
    }

    /// The route's path as OpenAPI writes it (`/podcasts/{id}`).
    var path: String {
        route.rawValue.split(separator: "/", omittingEmptySubsequences: false).map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
    }
}

/// The OpenAPI tags operations are grouped under (a generated client's modules).
enum OperationTag: String, Sendable, CaseIterable {
    case photos = "Photos", podcasts = "Podcasts", loans = "Loans", images = "Images", operations = "Operations"
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

/// An upstream's published request rate, one budget for all replicas.
struct RateLimitSetting: Sendable {
    let option: Option
    let perMinute: @Sendable (Configuration) -> Double

    init(_ flag: String, _ env: String, _ keyPath: WritableKeyPath<Configuration, Double> & Sendable, _ help: String) {
        option = Option(flag, env, keyPath, .rate(), help)
        perMinute = { $0[keyPath: keyPath] }
    }
}
