/// Every route FeedProxy serves, declared once: the router registers each, `/metrics`
/// labels requests by them, and the index document lists them in this order.
enum RouteName: String, CaseIterable, Sendable {
    case photos = "/photos"
    case podcasts = "/podcasts"
    case podcast = "/podcasts/:id"
    case episodes = "/podcasts/:id/episodes"
    case episode = "/podcasts/:id/episodes/:episodeId"
    case episodeBatch = "/episodes"
    case loans = "/loans"
    case loan = "/loans/:id"
    case images = "/images"
    case healthz = "/healthz"
    case readyz = "/readyz"
    case metrics = "/metrics"
    case openAPI = "/openapi.json"
    case demo = "/demo"
    case demoFile = "/demo/:file"
    case index = "/"

    /// Served only when the configuration turns it on (`DEMO_PAGE`).
    func isEnabled(_ c: Configuration) -> Bool {
        switch self {
        case .demo, .demoFile: return c.demoPage
        case .images: return c.imageProxyKey != nil
        default: return true
        }
    }

    /// How the index document (`GET /`) shows it; nil: not listed.
    var listedAs: String? {
        switch self {
        case .podcasts: return "/podcasts?term="
        case .podcast: return "/podcasts/{id}"
        case .episodes: return "/podcasts/{id}/episodes"
        case .episode: return "/podcasts/{id}/episodes/{episodeId}"
        case .episodeBatch: return "/episodes?podcasts="
        case .loan: return "/loans/{id}"
        case .images: return "/images?url=&w=&sig="
        case .index, .demoFile: return nil
        default: return rawValue
        }
    }
}
