// The items the lists carry (Photo, Podcast, Loan, Episode). FeedJSON writes every absent value as `null`.

public struct Photo: Codable, Sendable, Equatable {
    public var id: String?
    public var title: String?
    public var link: String?
    public var imageUrl: String?
    public var largeImageUrl: String?
    /// Every size Flickr serves (`s`, `q`, `t`, `m`, `n`, `z`, `b`); nil without an image.
    public var images: PhotoImages?
    public var author: String?
    public var authorId: String?
    public var tags: [String]
    public var published: String?
    public var taken: String?
    public var description: String?
}

public struct Podcast: Codable, Sendable, Equatable {
    public var id: Int
    public var title: String?
    public var author: String?
    public var feedUrl: String?
    public var artworkUrl: String?
    /// Artwork at 30, 60, 100 and 600 px.
    public var images: PodcastImages?
    public var genres: [String]
    public var primaryGenre: String?
    public var episodeCount: Int?
    public var releaseDate: String?
    public var country: String?
    public var explicit: Bool?
    public var storeUrl: String?
}

public struct Loan: Codable, Sendable, Equatable {
    public var id: Int
    public var name: String?
    public var use: String?
    public var amount: Double?
    public var fundedAmount: Double?
    public var status: String?
    public var country: String?
    public var countryCode: String?
    public var town: String?
    public var sector: String?
    public var activity: String?
    public var imageUrl: String?
    public var images: LoanImages?
    public var postedAt: String?
    public var expiresAt: String?
    public var borrowerCount: Int?
    public var lenderCount: Int?
    public var partnerName: String?
    public var tags: [String]
    /// The borrower's story, as plain text: only in `GET /loans/{id}` (null in lists).
    public var description: String?
}

public struct Episode: Codable, Sendable, Equatable {
    public var id: String?
    public var title: String?
    public var published: String?
    public var audioUrl: String?
    public var audioType: String?
    public var audioBytes: Int?
    public var duration: Int?
    public var episode: Int?
    public var season: Int?
    public var explicit: Bool?
    public var imageUrl: String?
    /// `imageUrl` through the image proxy at 60, 120, 300 and 600 px wide (null when it is off).
    public var images: ProxiedImages?
    public var summary: String?
    /// The show notes as sanitized HTML (see `HTMLSanitizer`): safe to insert as markup.
    public var notesHtml: String?
    public var link: String?
    /// `itunes:episodeType`: `full`, `trailer` or `bonus`.
    public var episodeType: String?
    /// `podcast:season`'s `name`.
    public var seasonName: String?
    public var transcripts: [Transcript] = []
    public var chapters: Chapters?
    public var persons: [Person] = []
    public var soundbites: [Soundbite] = []
    /// Podlove Simple Chapters given in the feed itself: not in lists, only in
    /// `/podcasts/{id}/episodes/{episodeId}?include=chapters`.
    public var inlineChapters: [ChapterMark] = []

    public init() {}

    enum CodingKeys: String, CodingKey {
        case id, title, published, audioUrl, audioType, audioBytes, duration, episode, season, explicit, imageUrl, images, summary, notesHtml, link
        case episodeType, seasonName, transcripts, chapters, persons, soundbites
    }
}
