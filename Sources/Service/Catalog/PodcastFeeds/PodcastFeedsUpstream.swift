import Feeds

extension UpstreamDeclaration {
    /// Each podcast's own RSS/Atom feed on its publisher's host (found through the iTunes
    /// lookup), and the chapters and transcript files it points to: one episode list, one
    /// episode, a library's episodes, its event stream and pings, the library by feed URL.
    /// The routes are declared by concern beside this file (episodes, events, library).
    static let podcastFeeds = UpstreamDeclaration(
        source: SourceName.episodes,
        endpoints: .none(because: "each podcast's feed is at the URL its iTunes lookup (ITUNES_LOOKUP_URL) or its feed id names"),
        rateLimit: .none(because: "each publisher's own host, with its own breaker and fair turns (8 transfers at once per host)"),
        settings: [
            Option("--cache-ttl-episodes", "CACHE_TTL_EPISODES", \.[Setting.ttlEpisodes], .seconds(), "seconds /podcasts/{id}/episodes stays fresh"),
            Option("--cache-ttl-chapters", "CACHE_TTL_CHAPTERS", \.[Setting.ttlChapters], .seconds(), "seconds an episode's chapters file stays fresh"),
            Option("--cache-ttl-transcripts", "CACHE_TTL_TRANSCRIPTS", \.[Setting.ttlTranscripts], .seconds(), "seconds an episode's transcript stays fresh"),
            Option(
                "--episodes-batch-deadline", "EPISODES_BATCH_DEADLINE_S", \.[Setting.episodesBatchDeadline], .seconds(allowZero: false),
                "seconds from a request's arrival /episodes waits for podcasts not cached before answering them pending"),
            Option("--feed-max-body-bytes", "FEED_MAX_BODY_BYTES", \.[Setting.feedMaxBodyBytes], .bytes(1024...(1 << 31)), "largest podcast RSS feed accepted"),
            Option(
                "--feed-id-ttl", "FEED_ID_TTL", \.[Setting.feedIDTTL], .seconds(allowZero: false),
                "seconds a feed id's URL is remembered (here and in the shared tier) after its feed was last read"),
            Option(
                "--watch-refresh-min-s", "WATCH_REFRESH_MIN_S", \.[Setting.watchRefreshMin], .seconds(allowZero: false),
                "shortest interval a feed an event stream watches is read again at (a twentieth of the gap between its episodes, within these)"),
            Option(
                "--watch-refresh-max-s", "WATCH_REFRESH_MAX_S", \.[Setting.watchRefreshMax], .seconds(allowZero: false),
                "longest interval a watched feed is read again at (a dormant feed's)"),
            Option(
                "--watch-refreshes-per-min", "WATCH_REFRESHES_PER_MIN", \.[Setting.watchRefreshesPerMinute], .integer(1...100_000),
                "ceiling on this replica's background reads of watched feeds a minute (the longest waiting first)"),
            Option(
                "--event-streams-max", "EVENT_STREAMS_MAX", \.[Setting.eventStreamsMax], .integer(1...1_000_000),
                "event streams (/episodes/events) one replica holds"),
            Option(
                "--event-streams-per-client", "EVENT_STREAMS_PER_CLIENT", \.[Setting.eventStreamsPerClient], .integer(1...1_000_000),
                "event streams one client address holds once the replica holds half of EVENT_STREAMS_MAX (until then an address, many people behind one NAT, is not limited)"
            ),
            Option(
                "--websub-key", "WEBSUB_KEY", \.[Setting.websubKey], .optionalSecret,
                "secret shared by the replicas that makes WebSub callbacks and secrets (with PUBLIC_BASE_URL: watched feeds that name a hub are subscribed to)"),
            Option("--websub-key-file", "WEBSUB_KEY_FILE", \.[Setting.websubKey], .secretFile, "file holding WEBSUB_KEY (a mounted Secret)"),
            Option(
                "--websub-lease-s", "WEBSUB_LEASE_S", \.[Setting.websubLease], .integer(60...2_592_000),
                "lease asked of WebSub hubs, in seconds (renewed at four fifths of it)"),
            Option(
                "--episode-file-max-bytes", "EPISODE_FILE_MAX_BYTES", \.[Setting.episodeFileMaxBytes], .bytes(1024...(1 << 30)),
                "the most read of a chapters or transcript file (a larger one is served cut, the transcript truncated)"),
        ],
        routes: PodcastFeeds.episodeRoutes + PodcastFeeds.eventRoutes + PodcastFeeds.libraryRoutes,
        schemas: PodcastFeedsAPI.schemas.merging(LibraryAPI.schemas),
        fuzz: FuzzEntry(reading: ["rss/1200361736.xml", "rss/1580000001.xml"]) { EpisodesAdapter.fuzz($0) })
}

extension EpisodesAdapter {
    /// A podcast's episode data stays within what one cache entry may take (a quarter of the
    /// cache, at most 32 MiB; a long feed's episodes compressed), so a long feed is kept whole
    /// rather than fetched again for every page.
    init(_ c: Configuration, lookups: PodcastLookups, registry: FeedRegistry) {
        self.init(
            lookups: lookups, maxFeedBytes: c[Setting.feedMaxBodyBytes], allowPrivateHosts: c.allowPrivateFeedHosts,
            maxDataBytes: max(64 << 10, min(32 << 20, c.cacheMaxBytes / 4 - (64 << 10))),
            imageLinks: c.imageProxyLinks, registry: registry)
    }
}

extension RouteName {
    static let episodes = RouteName("/podcasts/:id/episodes")
    static let episode = RouteName("/podcasts/:id/episodes/:episodeId")
    static let episodeBatch = RouteName("/episodes", listedAs: "/episodes?podcasts=")
    static let episodeEvents = RouteName("/episodes/events", listedAs: "/episodes/events?podcasts=")
    static let episodeEventsLibrary = RouteName("/episodes/events/library")
    static let hubNotify = RouteName("/hub/notify", listedAs: "/hub/notify?url=")
    static let hubWebSub = RouteName("/hub/websub")
    static let podcastByFeedURL = RouteName("/podcasts/byfeedurl", listedAs: "/podcasts/byfeedurl?url=")
    static let library = RouteName("/library/opml")
    static let libraryExport = RouteName("/library/opml/export")
}

extension OperationTag {
    static let library = OperationTag("Library", "a podcast app's library by feed URL: its subscription list (OPML) in and out")
}

extension Setting {
    static let ttlEpisodes = SettingKey(default: 1800.0)
    /// Chapters and transcript files change rarely once published.
    static let ttlChapters = SettingKey(default: 86400.0)
    static let ttlTranscripts = SettingKey(default: 86400.0)
    /// Seconds `/episodes` waits for podcasts not cached before answering them `pending`.
    static let episodesBatchDeadline = SettingKey(default: 3.0)
    static let feedMaxBodyBytes = SettingKey(default: 32 << 20)
    static let episodeFileMaxBytes = SettingKey(default: 5 << 20)
    /// Thirty days: a library refreshed monthly keeps its feed ids.
    static let feedIDTTL = SettingKey(default: 30.0 * 86400)
    static let watchRefreshMin = SettingKey(default: 120.0)
    static let watchRefreshMax = SettingKey(default: 1800.0)
    static let watchRefreshesPerMinute = SettingKey(default: 600)
    static let eventStreamsMax = SettingKey(default: 10_000)
    static let eventStreamsPerClient = SettingKey(default: 256)
    /// Makes WebSub callbacks and secrets (`WEBSUB_KEY`, or `WEBSUB_KEY_FILE`); nil: no WebSub.
    static let websubKey = SettingKey<String?>(default: nil)
    static let websubLease = SettingKey(default: 86_400)
}

extension Configuration {
    /// WebSub needs an address hubs can call back (`PUBLIC_BASE_URL`) and a key.
    var websubEnabled: Bool { self[Setting.websubKey] != nil && self[Setting.publicBaseURL] != nil }
}
