import Feeds

extension UpstreamDeclaration {
    /// A news API's top headlines: `/news`.
    static let news = UpstreamDeclaration(
        source: SourceName.news,
        endpoints: .at(UpstreamEndpoint("--news-api-url", "NEWS_API_URL", \.[Setting.newsAPIURL], fixturePath: "/news/v2/top", "News API endpoint")),
        rateLimit: .published(
            RateLimitSetting("--rate-limit-news", "RATE_LIMIT_NEWS_PER_MIN", \.[Setting.rateNewsPerMinute], "News API requests per minute")),
        settings: [Option("--cache-ttl-news", "CACHE_TTL_NEWS", \.[Setting.ttlNews], .seconds(), "seconds /news stays fresh")],
        routes: [
            RouteDeclaration(.news, operation: "listNews", tag: .news, described: newsOperation) { s in
                s.feedRoute(NewsAdapter(url: s.configuration[Setting.newsAPIURL]), ttl: s.configuration[Setting.ttlNews]).handle
            }
        ],
        schemas: [
            "Article": .closedObject([
                "title": .nullable("string"), "url": .nullable("string"), "imageUrl": .nullable("string"), "published": .timestamp,
                "outlet": .nullable("string"),
            ]),
            "NewsFeed": .envelope(items: .ref("Article"), source: "news", page: nil),
        ],
        fuzz: FuzzEntry(reading: ["news/top.json"]) { NewsAdapter.fuzz($0) })

    private static let newsOperation = OpenAPIValue.feedOperation(
        "Top headlines of a news API", answers: "NewsFeed",
        [
            .query(
                "category", "the headlines' category",
                ["type": "string", "enum": .array(NewsAdapter.categories.map { .string($0) }), "default": "general"])
        ],
        errors: ["400": .error("invalid category")])
}

extension RouteName {
    static let news = RouteName("/news")
}

extension OperationTag {
    static let news = OperationTag("News", "a news API's top headlines")
}

extension Setting {
    static let newsAPIURL = SettingKey(default: "https://newsapi.org/v2/top-headlines")
    static let ttlNews = SettingKey(default: 300.0)
    static let rateNewsPerMinute = SettingKey(default: 30.0)
}
