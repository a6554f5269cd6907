/// Every route FeedProxy serves, declared once: the router registers each, `/metrics`
/// labels requests by them, and the index document lists them in this order.
enum RouteName: String, CaseIterable, Sendable {
    case photos = "/photos"
    case podcasts = "/podcasts"
    case podcast = "/podcasts/:id"
    case episodes = "/podcasts/:id/episodes"
    case loans = "/loans"
    case loan = "/loans/:id"
    case healthz = "/healthz"
    case readyz = "/readyz"
    case metrics = "/metrics"
    case openAPI = "/openapi.json"
    case index = "/"

    /// How the index document (`GET /`) shows it; nil: not listed.
    var listedAs: String? {
        switch self {
        case .podcasts: return "/podcasts?term="
        case .podcast: return "/podcasts/{id}"
        case .episodes: return "/podcasts/{id}/episodes"
        case .loan: return "/loans/{id}"
        case .index: return nil
        default: return rawValue
        }
    }
}
