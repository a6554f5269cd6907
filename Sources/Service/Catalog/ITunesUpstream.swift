import Feeds

extension UpstreamDeclaration {
    /// iTunes Search and Lookup: `/podcasts?term=` and `/podcasts/{id}` (the lookup also finds
    /// each podcast's own feed, which `podcastFeeds` fetches).
    static let itunes = UpstreamDeclaration(
        source: SourceName.itunes,
        endpoints: .at(
            UpstreamEndpoint("--itunes-search-url", "ITUNES_SEARCH_URL", \.[Setting.itunesSearchURL], fixturePath: "/search", "iTunes Search endpoint"),
            UpstreamEndpoint(
                "--itunes-lookup-url", "ITUNES_LOOKUP_URL", \.[Setting.itunesLookupURL], fixturePath: "/lookup", "iTunes Lookup endpoint (podcast episodes)")),
        rateLimit: .published(
            RateLimitSetting(
                "--rate-limit-itunes", "RATE_LIMIT_ITUNES_PER_MIN", \.[Setting.rateITunesPerMinute],
                "iTunes requests per minute (its published limit is about 20)")),
        settings: [
            Option("--cache-ttl-podcasts", "CACHE_TTL_PODCASTS", \.[Setting.ttlPodcasts], .seconds(), "seconds /podcasts stays fresh"),
            Option(
                "--podcast-min-term-chars", "PODCAST_MIN_TERM_CHARS", \.[Setting.podcastMinTermChars], .integer(1...50),
                "shortest /podcasts search term accepted (shorter: 400; a keystroke, not a search)"),
        ],
        routes: [
            RouteDeclaration(.podcasts, operation: "searchPodcasts", tag: .podcasts, described: ITunesAPI.search) { s in
                let c = s.configuration
                return s.feedRoute(
                    ITunesAdapter(searchURL: c[Setting.itunesSearchURL], minTermLength: c[Setting.podcastMinTermChars], imageLinks: c.imageProxyLinks),
                    ttl: c[Setting.ttlPodcasts]
                ).handle
            },
            RouteDeclaration(.podcast, operation: "getPodcast", tag: .podcasts, described: ITunesAPI.podcast) { s in
                s.feedRoute(PodcastAdapter(lookups: s.podcastLookups), ttl: s.configuration[Setting.ttlPodcasts]).handle
            },
        ],
        schemas: ITunesAPI.schemas,
        fuzz: FuzzEntry(reading: ["itunes/search.json", "itunes/lookup.json"]) { ITunesAdapter.fuzz($0) })
}

extension OperationTag {
    static let podcasts = OperationTag("Podcasts", "iTunes search and lookup, each podcast's own feed, a library's episodes")
}

extension RouteName {
    static let podcasts = RouteName("/podcasts", listedAs: "/podcasts?term=")
    static let podcast = RouteName("/podcasts/:id")
}

extension Setting {
    static let itunesSearchURL = SettingKey(default: "https://itunes.apple.com/search")
    static let itunesLookupURL = SettingKey(default: "https://itunes.apple.com/lookup")
    static let ttlPodcasts = SettingKey(default: 3600.0)
    static let rateITunesPerMinute = SettingKey(default: 20.0)
    /// Shortest `/podcasts?term=` accepted: one-character searches are keystroke noise.
    static let podcastMinTermChars = SettingKey(default: 2)
}
