import FeedFormats
import Primitives

/// Where a feed id's URL is remembered: as that podcast's `/podcasts/{id}` answer (source
/// `rss`, described by its feed's channel), kept here and in the shared tier for FEED_ID_TTL
/// after the feed was last loaded (every load of a feed id's episodes renews it). What makes
/// a feed id usable everywhere an iTunes id is: an episodes load starts from that answer, as
/// it does from an iTunes lookup's.
public final class FeedRegistry: Sendable {
    /// Keeps a feed id's `/podcasts/{id}` answer (here and in the shared tier).
    let keep: @Sendable (Int, [UInt8]) -> Void
    /// Whether this replica holds a feed id's answer now.
    let holds: @Sendable (Int) -> Bool
    /// With the image proxy on, artwork is served through it.
    public let imageLinks: ImageProxyLinks?
    /// Where each id given out is kept for good (nil: only as long as the cache keeps its answer).
    let records: (any FeedRecords)?

    public init(
        imageLinks: ImageProxyLinks? = nil, records: (any FeedRecords)? = nil, keep: @escaping @Sendable (Int, [UInt8]) -> Void,
        holds: @escaping @Sendable (Int) -> Bool = { _ in false }
    ) {
        self.imageLinks = imageLinks
        self.records = records
        self.keep = keep
        self.holds = holds
    }

    /// Remembers the feed at `url` (normalised) as podcast `FeedID.id(ofNormalised: url)`,
    /// described by its channel when its feed has been read; its id. `unlessKnown`: a
    /// description second-hand (an outline's text, the feed that moved to it) does not replace
    /// one its own feed gave.
    @discardableResult
    public func remember(normalised url: String, channel: FeedChannel?, unlessKnown: Bool = false) -> Int {
        let id = FeedID.id(ofNormalised: url)
        records?.keep(id, url: url)
        if unlessKnown, holds(id) { return id }
        if let answer = Self.answer(id: id, url: url, channel: channel, images: imageLinks) { keep(id, answer) }
        return id
    }

    /// The `/podcasts/{id}` answer of a feed id's podcast.
    public static func answer(id: Int, url: String, channel: FeedChannel?, images: ImageProxyLinks?) -> [UInt8]? {
        let podcast = Podcast(
            id: id, title: channel?.title, author: channel?.author, feedUrl: url, artworkUrl: channel?.imageUrl,
            images: images?.podcastImages(for: channel?.imageUrl), genres: [],
            primaryGenre: nil, episodeCount: channel?.episodeCount, releaseDate: channel?.updated, country: nil, explicit: nil, storeUrl: nil)
        return try? FeedJSON.encode(ItemEnvelope(source: "rss", item: podcast))
    }
}

/// What a podcast's answer says of it, from its feed's channel.
public struct FeedChannel: Sendable, Equatable {
    public var title: String?
    public var author: String?
    public var imageUrl: String?
    public var updated: String?
    public var episodeCount: Int?

    public init(title: String?, author: String? = nil, imageUrl: String? = nil, updated: String? = nil, episodeCount: Int? = nil) {
        self.title = title
        self.author = author
        self.imageUrl = imageUrl
        self.updated = updated
        self.episodeCount = episodeCount
    }

    /// The channel of episode data: its head is the channel's JSON up to its list.
    public init?(_ data: EpisodeFeedData) {
        struct Head: Decodable {
            let title: String?
            let author: String?
            let imageUrl: String?
        }
        guard let head = try? FeedJSON.decode(Head.self, from: Array(data.head) + Array("}".utf8), source: SourceName.episodes) else { return nil }
        self.init(title: head.title ?? data.title, author: head.author, imageUrl: head.imageUrl, updated: data.updated, episodeCount: data.entries.count)
    }
}
