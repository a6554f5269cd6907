/// Every route FeedProxy serves, declared once: the router registers each, `/metrics`
/// labels requests by them, and the index document lists them in this order.
enum RouteName: String, CaseIterable, Sendable {
    case photos = "/photos"
    case podcasts = "/podcasts"
    case episodes = "/podcasts/:id/episodes"
    case loans = "/loans"
    case healthz = "/healthz"
    case readyz = "/readyz"
    case metrics = "/metrics"
    case openAPI = "/openapi.json"
    case index = "/"

    /// How the index document (`GET /`) shows it; nil: not listed.
    var listedAs: String? {
        switch self {
        case .podcasts: return "/podcasts?term="
        case .episodes: return "/podcasts/{id}/episodes"
        case .index: return nil
        default: return rawValue
        }
    }
}
