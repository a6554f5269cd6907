import FeedFormats
import Primitives
import Upstream

/// `/podcasts/{id}/episodes`: iTunes lookup for the feed URL, then the podcast's own RSS.
/// The feed host is chosen by a third party, so that fetch only reaches public addresses
/// (checked on the address connected to, redirects included) unless explicitly allowed.
public struct EpisodesAdapter: FeedAdapter {
    public let source = SourceName.episodes
    let lookupURL: String
    let maxFeedBytes: Int
    let allowPrivateHosts: Bool

    public init(lookupURL: String, maxFeedBytes: Int, allowPrivateHosts: Bool) {
        self.lookupURL = lookupURL
        self.maxFeedBytes = maxFeedBytes
        self.allowPrivateHosts = allowPrivateHosts
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        let number = try PodcastAdapter.collectionID(p)
        let limit = try p.int("limit", in: 1...500, default: 100)
        let lookup = UpstreamRequest(upstream: SourceName.itunes, url: lookupURL.addingQuery("id=\(number)&entity=podcast"))
        let maxFeedBytes = self.maxFeedBytes, publicOnly = !allowPrivateHosts
        return PreparedFeed(source: source, cacheKey: "episodes|id=\(number)|limit=\(limit)", upstreamRequest: lookup) { client, previous in
            let found = try Self.feedURL(fromLookup: try await client.send(lookup).body)
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
            let validators = Revalidation(
                listedURL: found.feedURL, url: response.permanentRedirect ?? feed.url, etag: response.header("ETag"),
                lastModified: response.header("Last-Modified"))
            if response.isNotModified, let previous { return .notModified(validators.keepingValidators(of: previous)) }
            var output = try Self.render(
                feed: response.body, contentType: response.header("Content-Type"), lookupTitle: found.title, limit: limit, base: response.effectiveURL)
            if validators.isUseful { output.revalidation = validators }
            return .rendered(output)
        }
    }

    /// A podcast's feed body → the episodes envelope's JSON (parse, normalise, encode).
    /// `base`: the feed's final URL, which relative links resolve against.
    static func render(feed body: [UInt8], contentType: String?, lookupTitle: String?, limit: Int, base: String? = nil) throws(ClientError) -> FeedOutput {
        let parsed = try RSSParser.parse(body, limit: limit, contentType: contentType, base: base)
        let envelope = EpisodesEnvelope(
            title: parsed.title ?? lookupTitle, updated: parsed.episodes.first?.published, description: parsed.description, author: parsed.author,
            imageUrl: parsed.imageUrl, link: parsed.link, language: parsed.language, podcastGuid: parsed.podcastGuid, locked: parsed.locked,
            funding: parsed.funding, persons: parsed.persons, newFeedUrl: parsed.newFeedUrl, count: parsed.episodes.count, items: parsed.episodes, page: nil)
        return FeedOutput(try FeedJSON.encode(envelope))
    }

    struct Lookup: Decodable {
        struct Result: Decodable {
            let collectionName: String?
            let feedUrl: String?
        }
        let results: [Result]
    }

    static func feedURL(fromLookup body: [UInt8]) throws(ClientError) -> (feedURL: String, title: String?) {
        let lookup = try FeedJSON.decode(Lookup.self, from: JSONRepair.stripJSONP(body), source: SourceName.itunes)
        guard let podcast = lookup.results.first else {
            throw ClientError(status: 404, code: "podcast_not_found", message: "no podcast has this id")
        }
        guard let url = podcast.feedUrl?.trimmingWhitespace(), !url.isEmpty else {
            throw ClientError(status: 404, code: "feed_unavailable", message: "this podcast publishes no feed")
        }
        return (url, podcast.collectionName)
    }
}

extension EpisodesAdapter {
    /// Parses a podcast feed body (for benchmarks and tools).
    public static func parseFeed(_ body: [UInt8], limit: Int, contentType: String? = nil) throws(ClientError) -> (title: String?, episodes: [Episode]) {
        let result = try RSSParser.parse(body, limit: limit, contentType: contentType)
        return (result.title, result.episodes)
    }
}
