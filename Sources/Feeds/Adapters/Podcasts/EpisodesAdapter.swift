import EpisodeSync
import FeedFormats
import Primitives
import Upstream

/// `/podcasts/{id}/episodes`: iTunes lookup for the feed URL, then the podcast's own RSS.
/// The feed host is chosen by a third party, so that fetch only reaches public addresses
/// (checked on the address connected to, redirects included) unless explicitly allowed.
public struct EpisodesAdapter: FeedAdapter {
    public let source = SourceName.episodes
    let lookups: PodcastLookups
    let maxFeedBytes: Int
    let allowPrivateHosts: Bool
    /// The most one podcast's episode data may take (kept within what the cache admits).
    let maxDataBytes: Int
    /// With the image proxy on: the proxied sizes of every image, and show notes' images proxied.
    let imageLinks: ImageProxyLinks?
    /// Where feed ids' URLs are remembered: every load of one renews it.
    let registry: FeedRegistry?

    public init(
        lookups: PodcastLookups, maxFeedBytes: Int, allowPrivateHosts: Bool, maxDataBytes: Int = 8 << 20, imageLinks: ImageProxyLinks? = nil,
        registry: FeedRegistry? = nil
    ) {
        self.imageLinks = imageLinks
        self.registry = registry
        self.lookups = lookups
        self.maxFeedBytes = maxFeedBytes
        self.allowPrivateHosts = allowPrivateHosts
        self.maxDataBytes = maxDataBytes
    }

    /// The key a podcast's episode data (`EpisodeFeedData`) is cached under.
    public static func dataKey(_ podcastID: Int) -> String { "episodes-feed|id=\(podcastID)" }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        let number = try PodcastAdapter.collectionID(p)
        let limit = try p.int("limit", in: 1...500, default: 100)
        let since = try EpisodeSince.parse(p)
        let cursor = try p.value("cursor").map { text throws(ClientError) in try EpisodeCursor.decode(text, scope: String(number)) }
        // Only this podcast's position counts: the answer's token names it alone.
        let sync = try EpisodeSyncRequest.parse(p, since: since, cursor: cursor)?.keeping([number])
        // The page's key names what it is cut from and how: equivalent spellings share it.
        var key = "episodes|id=\(number)|limit=\(limit)"
        if let since { key += "|since=\(since)" }
        if let cursor { key += "|after=\(cursor.index).\(cursor.anchor)" }
        if let sync { key += sync[number].map { "|sync=\($0.seq).\($0.versionID).\($0.ordinal)" } ?? "|sync=-" }
        let view = FeedView(dataKey: Self.dataKey(number), startingFrom: startingFromPodcast(number)) { blob in
            EpisodeFeedData(blob)?.page(podcastID: number, limit: limit, since: since, cursor: cursor, sync: sync)
        }
        return PreparedFeed(source: source, cacheKey: key, upstreamRequest: lookup(number), view: view, refresh: load(number))
    }

    /// Podcast `number`'s episode data as a load of its own (a batch's, one episode's),
    /// starting from its `/podcasts/{id}` answer when one is at hand.
    public func dataFeed(_ number: Int, listed: ListedFeed? = nil) -> PreparedFeed {
        let key = Self.dataKey(number)
        return PreparedFeed(
            source: source, cacheKey: key, upstreamRequest: lookup(number),
            view: FeedView(dataKey: key, startingFrom: startingFromPodcast(number)) { _ in nil },
            refresh: load(number, listed: listed))
    }

    /// `/podcasts/{id}`'s cached answer names the feed: a load that starts from it skips the lookup.
    func startingFromPodcast(_ number: Int) -> (
        key: String, load: @Sendable ([UInt8]) -> (@Sendable (UpstreamClient, PreviousAnswer?) async throws -> FeedLoad)?
    ) {
        (PodcastAdapter.cacheKey(number), { body in Self.listed(fromPodcastAnswer: body).map { self.load(number, listed: $0) } })
    }

    /// The feed a cached `/podcasts/{id}` answer names, or nil when it is not one.
    public static func listed(fromPodcastAnswer body: [UInt8]) -> ListedFeed? {
        struct Answer: Decodable {
            struct Item: Decodable {
                let title: String?
                let feedUrl: String?
            }
            let item: Item
        }
        guard let answer = try? FeedJSON.decode(Answer.self, from: body, source: SourceName.itunes) else { return nil }
        guard let url = answer.item.feedUrl, !url.isEmpty else { return .noFeed }
        return .feed(url: url, title: answer.item.title)
    }

    func lookup(_ number: Int) -> UpstreamRequest {
        UpstreamRequest(upstream: SourceName.itunes, url: lookups.lookupURL.addingQuery("id=\(number)&entity=podcast"))
    }

    /// Loads podcast `number`'s episode data: the iTunes lookup for its feed URL (unless a
    /// batch lookup already `listed` it), then the feed, conditionally when it is the same
    /// listed feed as last time.
    public func load(_ number: Int, listed: ListedFeed? = nil) -> @Sendable (UpstreamClient, PreviousAnswer?) async throws -> FeedLoad {
        let lookups = self.lookups
        let maxFeedBytes = self.maxFeedBytes, publicOnly = !allowPrivateHosts, maxDataBytes = self.maxDataBytes, imageLinks = self.imageLinks
        let registry = FeedID.isFeedID(number) ? self.registry : nil
        // Every podcast read is recorded with its feed: a ping by URL finds it on any replica.
        let records = self.registry?.records
        return { client, replaced in
            let previous = replaced?.validators
            let found: (feedURL: String, title: String?)
            switch listed {
            case .feed(let url, let title)?: found = (url, title)
            case .noFeed?: throw Self.noFeed
            case nil:
                // Looked up with whatever else this replica is looking up now.
                switch await lookups.answer(for: number, with: client) {
                case .success(let body):
                    switch Self.listed(fromPodcastAnswer: body) {
                    case .feed(let url, let title)?: found = (url, title)
                    case .noFeed?: throw Self.noFeed
                    case nil: throw ClientError.badUpstreamResponse("the iTunes lookup")
                    }
                case .failure(let failure): throw failure.thrown()
                }
            }
            var feed = UpstreamRequest(
                upstream: SourceName.episodes, url: found.feedURL,
                headers: [("Accept", "application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5")],
                maxBodyBytes: maxFeedBytes, publicAddressesOnly: publicOnly)
            feed.urlChosenByThirdParty = true
            // The same listed feed as last time: ask where it moved for good, conditionally.
            // (A new address passes the same address checks and redirect limit as any.)
            if let previous, previous.listedURL == found.feedURL {
                feed.url = previous.url
                if previous.etag != nil || previous.lastModified != nil { feed.revalidation = previous }
            }
            let response = try await client.send(feed)
            if let url = FeedID.normalised(found.feedURL) { records?.keep(number, url: url) }
            let validators = Revalidation(
                listedURL: found.feedURL, url: response.permanentRedirect ?? feed.url, etag: response.header("ETag"),
                lastModified: response.header("Last-Modified"))
            if response.isNotModified, let previous {
                // Still in use: a feed id's URL is remembered for another FEED_ID_TTL.
                if let registry, let url = FeedID.normalised(found.feedURL), let data = replaced.flatMap({ EpisodeFeedData($0.body) }) {
                    registry.remember(normalised: url, channel: FeedChannel(data))
                }
                return .notModified(validators.keepingValidators(of: previous))
            }
            // The history as last recorded: the cached data this replaces may be gone (evicted,
            // emptied, a restart, another release's key) while the apps' tokens still stand on it.
            let recorded = await records?.history(of: number).flatMap { EpisodeHistory(record: $0) }
            let parsing = LeafSpan.start()
            let data: [UInt8]
            do {
                // The data it replaces (this replica's, or the shared tier's when newer) says
                // when each episode was first seen: sync tokens stay positions in one history.
                let finalURL = response.permanentRedirect ?? feed.url
                // A long feed is parsed off the cooperative pool: it holds a thread for a good part
                // of a second, and the awaits of every other request beside it would wait as long.
                let built = try await CPUWorkers.shared.run(over: response.body.count) { () throws(ClientError) in
                    try EpisodeFeedData.built(
                        feed: response.body, contentType: response.header("Content-Type"), lookupTitle: found.title, base: response.effectiveURL,
                        maxBytes: maxDataBytes, images: imageLinks, previous: replaced.flatMap { EpisodeFeedData($0.body) }, history: recorded,
                        hints: PublisherHints(headers: response.headers)
                    ) { newFeedURL in Self.movedTo(number, listed: found.feedURL, finalURL: finalURL, newFeedURL: newFeedURL) }
                }
                data = built.blob
                let readBack = EpisodeFeedData(data)
                if let records, let kept = readBack.map(EpisodeHistory.init), kept != recorded {
                    records.keepHistory(number, seq: kept.log.current.seq, kept.encoded)
                }
                if let registry {
                    let channel = FeedChannel(
                        title: built.channel.title, author: built.channel.author, imageUrl: built.channel.imageUrl, updated: built.channel.updated,
                        episodeCount: readBack?.entries.count)
                    if let url = FeedID.normalised(found.feedURL) { registry.remember(normalised: url, channel: channel) }
                    // Moved: the new address's id names it from now on, with the same description.
                    if let moved = built.channel.movedTo { registry.remember(normalised: moved.url, channel: channel, unlessKnown: true) }
                }
            } catch {
                parsing?.end("parse feed", [("http.response.body.size", .int(Int64(response.body.count)))], error: String(describing: error))
                throw error
            }
            parsing?.end("parse feed", [("http.response.body.size", .int(Int64(response.body.count)))])
            return .rendered(Representation(data), revalidation: validators.isUseful ? validators : nil)
        }
    }

    /// A podcast's feed body → the first page of its episodes as the route answers it (parse,
    /// normalise, encode once, cut). `base`: the feed's final URL, which relative links resolve against.
    static func render(feed body: [UInt8], contentType: String?, lookupTitle: String?, limit: Int, base: String? = nil) throws(ClientError) -> Representation {
        let blob = try EpisodeFeedData.build(feed: body, contentType: contentType, lookupTitle: lookupTitle, base: base, maxBytes: 64 << 20)
        guard let page = EpisodeFeedData(blob)?.page(podcastID: 0, limit: limit, since: nil, cursor: nil) else {
            throw .badUpstreamResponse("the podcast feed")
        }
        return page
    }

    static let notFound = ClientError(status: 404, code: "podcast_not_found", message: "no podcast has this id")

    /// Where podcast `number`'s feed moved for good, when it did: the address its feed names
    /// (`itunes:new-feed-url`), else the one a permanent redirect led to; with the id that
    /// names it now (a feed id's podcast: the new address's feed id; iTunes': its own).
    static func movedTo(_ number: Int, listed: String, finalURL: String, newFeedURL: String?) -> MovedFeed? {
        let from = FeedID.normalised(listed)
        for candidate in [newFeedURL, finalURL] {
            guard let url = candidate.flatMap(FeedID.normalised), url != from else { continue }
            return MovedFeed(url: url, id: FeedID.isFeedID(number) ? FeedID.id(ofNormalised: url) : number)
        }
        return nil
    }
    static let noFeed = ClientError(status: 404, code: "feed_unavailable", message: "this podcast publishes no feed")

    /// Where iTunes lists a podcast's feed, as its `/podcasts/{id}` answer says.
    public enum ListedFeed: Sendable, Equatable {
        case feed(url: String, title: String?)
        case noFeed
    }
}

extension EpisodesAdapter {
    /// Parses a podcast feed body (for benchmarks and tools).
    public static func parseFeed(_ body: [UInt8], limit: Int, contentType: String? = nil) throws(ClientError) -> (title: String?, episodes: [Episode]) {
        let result = try RSSParser.parse(body, limit: limit, contentType: contentType)
        return (result.title, result.episodes)
    }
}

extension EpisodesAdapter {
    /// `make fuzz`: a feed end to end, and the same bytes through the unknown-encoding handler,
    /// as a Content-Type charset would send them.
    package static func fuzz(_ body: [UInt8]) -> FuzzRun {
        var run = FuzzRun()
        for (contentType, base) in [(nil, "https://feeds.example/podcast/rss"), ("application/rss+xml; charset=windows-1252", nil)] {
            let blob = try? EpisodeFeedData.build(feed: body, contentType: contentType, lookupTitle: nil, base: base, maxBytes: 64 << 20)
            let data = blob.flatMap { EpisodeFeedData($0) }
            // Read as an app would: the first page rendered, counted by its episodes.
            run.read(data?.page(podcastID: 0, limit: 50, since: nil, cursor: nil) == nil ? nil : data?.entries.count)
        }
        return run
    }
}
