import Feeds

extension UpstreamDeclaration {
    /// Flickr's public photo feed: `/photos`.
    static let flickr = UpstreamDeclaration(
        source: SourceName.flickr,
        endpoints: [
            UpstreamEndpoint(
                "--flickr-feed-url", "FLICKR_FEED_URL", \.flickrFeedURL, fixturePath: "/services/feeds/photos_public.gne", "Flickr public photo feed endpoint")
        ],
        rateLimit: RateLimitSetting("--rate-limit-flickr", "RATE_LIMIT_FLICKR_PER_MIN", \.rateFlickrPerMinute, "Flickr feed requests per minute"),
        settings: [Option("--cache-ttl-photos", "CACHE_TTL_PHOTOS", \.ttlPhotos, .seconds(), "seconds /photos stays fresh")],
        routes: [
            RouteDeclaration(.photos, operation: "listPhotos", tag: .photos) { s in
                s.feedRoute(FlickrAdapter(feedURL: s.configuration.flickrFeedURL), ttl: s.configuration.ttlPhotos).handle
            }
        ],
        fuzz: { FlickrAdapter.fuzz($0) })
}

extension RouteName {
    static let photos = RouteName("/photos")
}
