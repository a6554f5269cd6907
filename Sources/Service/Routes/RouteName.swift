/// A route's path as the router matches it (`/podcasts/:id`), declared beside what serves it:
/// an upstream's routes in its declaration (`Catalog/`), the others in `OperationalRoutes`.
/// Not an enum, so a new upstream adds its routes in its own file.
struct RouteName: Hashable, Sendable {
    let path: String
    /// How the index document (`GET /`) shows it; nil: not listed.
    let listedAs: String?

    /// Listed in the index as its path, each `:name` segment written `{name}` (as the API
    /// document writes it).
    init(_ path: String) {
        let listed = path.split(separator: "/", omittingEmptySubsequences: false).map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
        self.init(path, listedAs: listed.joined(separator: "/"))
    }

    init(_ path: String, listedAs: String?) {
        self.path = path
        self.listedAs = listedAs
    }

    static func == (a: RouteName, b: RouteName) -> Bool { a.path == b.path }
    func hash(into hasher: inout Hasher) { hasher.combine(path) }
}
