import HTTPServer

/// A route, its OpenAPI operation, when it is on, and how its handler is built over the
/// services. Every route is one: an upstream's in its declaration (`Catalog/`), the others in
/// `OperationalRoutes`; the router, the index, `/metrics` and the API document read them.
/// Never an optional handler: a function stored in an Optional or any generic container is
/// called through reabstraction thunks, about 1 % more instructions on every cache hit.
struct RouteDeclaration: Sendable {
    let name: RouteName
    /// `GET` (with `HEAD`), or `POST` for what a client sends a document to.
    let method: String
    /// Its `operationId`, tag and description in the OpenAPI document: what a generated client
    /// names the call, groups it under and types it by. nil: not in the document (the demo
    /// page's files).
    let operation: RouteOperation?
    /// Served only when the configuration turns it on.
    let isEnabled: @Sendable (Configuration) -> Bool
    let make: @Sendable (Services) -> DeclaredHandler

    /// A route an upstream declares: its handler runs metered (client identity and the miss
    /// quota), the only kind that can cost an upstream.
    init(
        _ name: RouteName, method: String = "GET", operation id: String, tag: OperationTag, described pathItem: OpenAPIValue,
        when isEnabled: @escaping @Sendable (Configuration) -> Bool = { _ in true }, _ make: @escaping @Sendable (Services) -> MeteredHandler
    ) {
        self.name = name
        self.method = method
        operation = RouteOperation(name, method, id, tag, pathItem)
        self.isEnabled = isEnabled
        self.make = { .metered(make($0)) }
    }

    /// One of FeedProxy's own routes (health, metrics, the document …): no upstream, no quota.
    init(
        operational name: RouteName, operation id: String, tag: OperationTag, described pathItem: OpenAPIValue,
        when isEnabled: @escaping @Sendable (Configuration) -> Bool = { _ in true }, _ make: @escaping @Sendable (Services) -> AppHandler
    ) {
        self.name = name
        method = "GET"
        operation = RouteOperation(name, method, id, tag, pathItem)
        self.isEnabled = isEnabled
        self.make = { .open(make($0)) }
    }

    /// An operational route the API document leaves out.
    init(undocumented name: RouteName, when isEnabled: @escaping @Sendable (Configuration) -> Bool, _ make: @escaping @Sendable (Services) -> AppHandler) {
        self.name = name
        method = "GET"
        operation = nil
        self.isEnabled = isEnabled
        self.make = { .open(make($0)) }
    }

    /// Every route FeedProxy serves, in the order the index lists them: each upstream's, then
    /// the operational ones.
    static var all: [RouteDeclaration] { UpstreamCatalog.all.flatMap(\.routes) + OperationalRoutes.all }

    /// The paths the index lists, each once (a path with a GET and a POST is one entry).
    static func listed(_ routes: [RouteDeclaration]) -> [String] {
        var seen = Set<String>()
        return routes.compactMap(\.name.listedAs).filter { seen.insert($0).inserted }
    }
}

/// A route's handler, of the context it runs over: the router puts metered ones in the group
/// that makes their `MeteredRequestContext`.
enum DeclaredHandler: Sendable {
    case open(AppHandler)
    case metered(MeteredHandler)
}

/// A route's operation in the OpenAPI document.
struct RouteOperation: Sendable {
    let route: RouteName
    /// `GET` or `POST`.
    let method: String
    let id: String
    let tag: OperationTag
    /// Its path item (`{"get": …}`, `{"post": …}`): parameters, answers, errors; the id and tag are added.
    let pathItem: OpenAPIValue

    init(_ route: RouteName, _ method: String, _ id: String, _ tag: OperationTag, _ pathItem: OpenAPIValue) {
        self.route = route
        self.method = method
        self.id = id
        self.tag = tag
        self.pathItem = pathItem
    }

    /// Its key in the path item: `get`, `post`.
    var methodKey: String { method.lowercased() }

    /// The route's path as OpenAPI writes it (`/podcasts/{id}`).
    var path: String {
        route.path.split(separator: "/", omittingEmptySubsequences: false).map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
    }
}

/// An OpenAPI tag operations are grouped under (a generated client's module), declared beside
/// the routes that use it; the document lists tags in the order routes first use them.
struct OperationTag: Sendable, Equatable {
    let name: String
    let description: String

    init(_ name: String, _ description: String) {
        self.name = name
        self.description = description
    }
}
