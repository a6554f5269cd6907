import Feeds

extension UpstreamDeclaration {
    /// A news API's top headlines: `/news`.
    static let news = UpstreamDeclaration(
        source: SourceName.news,
        endpoints: [UpstreamEndpoint("--news-api-url", "NEWS_API_URL", \.newsAPIURL, fixturePath: "/news/v2/top", "News API endpoint")],
        rateLimit: RateLimitSetting("--rate-limit-news", "RATE_LIMIT_NEWS_PER_MIN", \.rateNewsPerMinute, "News API requests per minute"),
        settings: [Option("--cache-ttl-news", "CACHE_TTL_NEWS", \.ttlNews, .seconds(), "seconds /news stays fresh")],
        routes: [
            RouteDeclaration(.news, operation: "listNews", tag: .news) { s in
                s.feedRoute(NewsAdapter(url: s.configuration.newsAPIURL), ttl: s.configuration.ttlNews).handle
            }
        ],
        fuzz: { NewsAdapter.fuzz($0) })
}

extension RouteName {
    static let news = RouteName("/news")
}
