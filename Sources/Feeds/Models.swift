// The public item models. Encoders are explicit so `nil` becomes `null`.

public struct Photo: Codable, Sendable, Equatable {
    public var id: String?
    public var title: String?
    public var link: String?
    public var imageUrl: String?
    public var largeImageUrl: String?
    public var author: String?
    public var authorId: String?
    public var tags: [String]
    public var published: String?
    public var taken: String?
    public var description: String?

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(title, forKey: .title)
        try c.encode(link, forKey: .link)
        try c.encode(imageUrl, forKey: .imageUrl)
        try c.encode(largeImageUrl, forKey: .largeImageUrl)
        try c.encode(author, forKey: .author)
        try c.encode(authorId, forKey: .authorId)
        try c.encode(tags, forKey: .tags)
        try c.encode(published, forKey: .published)
        try c.encode(taken, forKey: .taken)
        try c.encode(description, forKey: .description)
    }
}

public struct Podcast: Codable, Sendable, Equatable {
    public var id: Int
    public var title: String?
    public var author: String?
    public var feedUrl: String?
    public var artworkUrl: String?
    public var genres: [String]
    public var primaryGenre: String?
    public var episodeCount: Int?
    public var releaseDate: String?
    public var country: String?
    public var explicit: Bool?
    public var storeUrl: String?

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(title, forKey: .title)
        try c.encode(author, forKey: .author)
        try c.encode(feedUrl, forKey: .feedUrl)
        try c.encode(artworkUrl, forKey: .artworkUrl)
        try c.encode(genres, forKey: .genres)
        try c.encode(primaryGenre, forKey: .primaryGenre)
        try c.encode(episodeCount, forKey: .episodeCount)
        try c.encode(releaseDate, forKey: .releaseDate)
        try c.encode(country, forKey: .country)
        try c.encode(explicit, forKey: .explicit)
        try c.encode(storeUrl, forKey: .storeUrl)
    }
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
    public var postedAt: String?
    public var expiresAt: String?
    public var borrowerCount: Int?
    public var lenderCount: Int?
    public var partnerName: String?
    public var tags: [String]

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(use, forKey: .use)
        try c.encode(amount, forKey: .amount)
        try c.encode(fundedAmount, forKey: .fundedAmount)
        try c.encode(status, forKey: .status)
        try c.encode(country, forKey: .country)
        try c.encode(countryCode, forKey: .countryCode)
        try c.encode(town, forKey: .town)
        try c.encode(sector, forKey: .sector)
        try c.encode(activity, forKey: .activity)
        try c.encode(imageUrl, forKey: .imageUrl)
        try c.encode(postedAt, forKey: .postedAt)
        try c.encode(expiresAt, forKey: .expiresAt)
        try c.encode(borrowerCount, forKey: .borrowerCount)
        try c.encode(lenderCount, forKey: .lenderCount)
        try c.encode(partnerName, forKey: .partnerName)
        try c.encode(tags, forKey: .tags)
    }
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
    public var summary: String?
    public var link: String?

    public init() {}

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(title, forKey: .title)
        try c.encode(published, forKey: .published)
        try c.encode(audioUrl, forKey: .audioUrl)
        try c.encode(audioType, forKey: .audioType)
        try c.encode(audioBytes, forKey: .audioBytes)
        try c.encode(duration, forKey: .duration)
        try c.encode(episode, forKey: .episode)
        try c.encode(season, forKey: .season)
        try c.encode(explicit, forKey: .explicit)
        try c.encode(imageUrl, forKey: .imageUrl)
        try c.encode(summary, forKey: .summary)
        try c.encode(link, forKey: .link)
    }
}
