import Feeds

extension UpstreamDeclaration {
    /// Flickr's public photo feed: `/photos`.
    static let flickr = UpstreamDeclaration(
        source: SourceName.flickr,
        endpoints: .at(
            UpstreamEndpoint(
                "--flickr-feed-url", "FLICKR_FEED_URL", \.[Setting.flickrFeedURL], fixturePath: "/services/feeds/photos_public.gne",
                "Flickr public photo feed endpoint")),
        rateLimit: .published(
            RateLimitSetting("--rate-limit-flickr", "RATE_LIMIT_FLICKR_PER_MIN", \.[Setting.rateFlickrPerMinute], "Flickr feed requests per minute")),
        settings: [Option("--cache-ttl-photos", "CACHE_TTL_PHOTOS", \.[Setting.ttlPhotos], .seconds(), "seconds /photos stays fresh")],
        routes: [
            RouteDeclaration(.photos, operation: "listPhotos", tag: .photos, described: FlickrAPI.photos) { s in
                s.feedRoute(FlickrAdapter(feedURL: s.configuration[Setting.flickrFeedURL]), ttl: s.configuration[Setting.ttlPhotos]).handle
            }
        ],
        schemas: FlickrAPI.schemas,
        fuzz: FuzzEntry(reading: ["flickr/photos_public.json"]) { FlickrAdapter.fuzz($0) })
}

extension OperationTag {
    static let photos = OperationTag("Photos", "Flickr public photos")
}

extension RouteName {
    static let photos = RouteName("/photos")
}

extension Setting {
    static let flickrFeedURL = SettingKey(default: "https://api.flickr.com/services/feeds/photos_public.gne")
    static let ttlPhotos = SettingKey(default: 60.0)
    static let rateFlickrPerMinute = SettingKey(default: 60.0)
}
