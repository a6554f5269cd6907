/// The one shape every list response has.
public struct FeedEnvelope<Item: Codable & Sendable>: Codable, Sendable {
    public var source: String
    public var title: String?
    public var updated: String?
    public var count: Int
    public var items: [Item]
    public var page: PageInfo?

    public init(source: String, title: String?, updated: String?, items: [Item], page: PageInfo?) {
        self.source = source
        self.title = title
        self.updated = updated
        self.count = items.count
        self.items = items
        self.page = page
    }
}

public struct PageInfo: Codable, Sendable, Equatable {
    public var number: Int
    public var size: Int
    public var total: Int
    public var pages: Int
    /// The same request at other pages (as in the `Link` header); null where there is none.
    public var first: String?
    public var prev: String?
    public var next: String?
    public var last: String?

    public init(number: Int, size: Int, total: Int) {
        self.number = number
        self.size = size
        self.total = total
        // Division first: `total + size - 1` would overflow for a total near Int.max.
        self.pages = size > 0 && total > 0 ? total / size + (total % size == 0 ? 0 : 1) : 0
    }
}

extension PageInfo {
    /// Fills `first`/`prev`/`next`/`last` from `url(page)` and returns the RFC 8288 `Link`
    /// header value with the same targets.
    mutating func link(_ url: (Int) -> String) -> String {
        let lastPage = max(pages, 1)
        first = url(1)
        last = url(lastPage)
        prev = number > 1 ? url(min(number - 1, lastPage)) : nil
        next = number < pages ? url(number + 1) : nil
        let rels: [(String, String?)] = [("first", first), ("prev", prev), ("next", next), ("last", last)]
        return rels.compactMap { rel, target in target.map { "<\($0)>; rel=\"\(rel)\"" } }.joined(separator: ", ")
    }
}

/// A single item (`GET /podcasts/{id}`, `GET /loans/{id}`): where it came from, and it.
public struct ItemEnvelope<Item: Codable & Sendable>: Codable, Sendable {
    public var source: String
    public var item: Item
}

/// `/podcasts/{id}/episodes`: the list envelope plus what the feed says of its channel.
public struct EpisodesEnvelope: Codable, Sendable {
    public var source = "rss"
    public var title: String?
    public var updated: String?
    public var description: String?
    public var author: String?
    public var imageUrl: String?
    /// `imageUrl` through the image proxy at 60, 120, 300 and 600 px wide (null when it is off).
    public var images: ProxiedImages?
    public var link: String?
    public var language: String?
    /// `podcast:guid`: the podcast's global id.
    public var podcastGuid: String?
    /// `podcast:locked`: the publisher asks other platforms not to import the feed.
    public var locked: Bool?
    public var funding: [Funding] = []
    public var persons: [Person] = []
    /// `itunes:new-feed-url`: where the publisher says the feed now lives.
    public var newFeedUrl: String?
    /// The feed moved for good (`itunes:new-feed-url`, or a permanent redirect FeedProxy
    /// follows): its new address and the id that names it now.
    public var movedTo: MovedFeed?
    /// The feed lists more episodes than are kept (5,000, within the per-feed budget): the
    /// oldest were left out, and `page.total` counts those kept.
    public var truncated = false
    public var count: Int
    public var items: [Episode]
    public var page: CursorPageInfo?
    /// Where the client stands once it has this answer: sent back as `sync=`, the next answer
    /// holds only what is new or changed since (null on a page reached by a cursor).
    public var syncToken: String?
    /// The token sent named a point this feed's history no longer holds: every episode is
    /// being sent again (apps keep one copy per episode id).
    public var resync = false
    /// With `sync`: ids of episodes the feed no longer lists, removed since the token (drop
    /// them before taking `items`).
    public var removed: [String] = []
    /// With `sync`: ids of the episodes in `items` the client had before (changed, not new).
    public var changed: [String] = []
}

/// `page` of an episode list: how many a page holds, how many match in all, and the next
/// page (its URL, also in `Link: rel="next"`, and the opaque cursor in it); null at the end.
public struct CursorPageInfo: Codable, Sendable, Equatable {
    public var size: Int
    public var total: Int
    public var next: String?
    public var nextCursor: String?
}

/// Where a podcast's feed moved: its new address, and the id an app's library should name it
/// by from now on (a feed id's podcast gets the new address's feed id; an iTunes podcast keeps
/// its own).
public struct MovedFeed: Codable, Sendable, Equatable {
    public var url: String
    public var id: Int

    public init(url: String, id: Int) {
        self.url = url
        self.id = id
    }
}
