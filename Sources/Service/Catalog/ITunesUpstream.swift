import Feeds

extension UpstreamDeclaration {
    /// iTunes Search and Lookup: `/podcasts?term=` and `/podcasts/{id}` (the lookup also finds
    /// each podcast's own feed, which `podcastFeeds` fetches).
    static let itunes = UpstreamDeclaration(
        source: SourceName.itunes,
        endpoints: [
            UpstreamEndpoint("--itunes-search-url", "ITUNES_SEARCH_URL", \.itunesSearchURL, fixturePath: "/search", "iTunes Search endpoint"),
            UpstreamEndpoint(
                "--itunes-lookup-url", "ITUNES_LOOKUP_URL", \.itunesLookupURL, fixturePath: "/lookup", "iTunes Lookup endpoint (podcast episodes)"),
        ],
        rateLimit: RateLimitSetting(
            "--rate-limit-itunes", "RATE_LIMIT_ITUNES_PER_MIN", \.rateITunesPerMinute, "iTunes requests per minute (its published limit is about 20)"),
        settings: [
            Option("--cache-ttl-podcasts", "CACHE_TTL_PODCASTS", \.ttlPodcasts, .seconds(), "seconds /podcasts stays fresh"),
            Option(
                "--podcast-min-term-chars", "PODCAST_MIN_TERM_CHARS", \.podcastMinTermChars, .integer(1...50),
                "shortest /podcasts search term accepted (shorter: 400; a keystroke, not a search)"),
        ],
        routes: [
            RouteDeclaration(.podcasts, operation: "searchPodcasts", tag: .podcasts) { s in
                let c = s.configuration
                return s.feedRoute(ITunesAdapter(searchURL: c.itunesSearchURL, minTermLength: c.podcastMinTermChars), ttl: c.ttlPodcasts).handle
            },
            RouteDeclaration(.podcast, operation: "getPodcast", tag: .podcasts) { s in
                s.feedRoute(PodcastAdapter(lookupURL: s.configuration.itunesLookupURL), ttl: s.configuration.ttlPodcasts).handle
            },
        ],
        fuzz: { ITunesAdapter.fuzz($0) })
}

extension RouteName {
    static let podcasts = RouteName("/podcasts", listedAs: "/podcasts?term=")
    static let podcast = RouteName("/podcasts/:id", listedAs: "/podcasts/{id}")
}
