import FeedFormats
import Primitives
import Upstream

/// iTunes Search (podcasts) → `/podcasts?term=`.
public struct ITunesAdapter: FeedAdapter {
    public let source = SourceName.itunes
    let searchURL: String
    /// Shorter terms are refused (`PODCAST_MIN_TERM_CHARS`): keystroke noise, not searches.
    let minTermLength: Int
    /// With the image proxy on, artwork is served through it.
    let imageLinks: ImageProxyLinks?

    public init(searchURL: String, minTermLength: Int = 1, imageLinks: ImageProxyLinks? = nil) {
        self.searchURL = searchURL
        self.minTermLength = max(1, minTermLength)
        self.imageLinks = imageLinks
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        guard let rawTerm = p.string("term") else { throw .missingParameter("term") }
        // Collapse inner whitespace: "swift   ui" and "swift ui" are one search.
        let term = rawTerm.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        guard term.count <= 200 else { throw .invalidParameter("term must be between 1 and 200 characters") }
        guard term.count >= minTermLength else {
            throw .invalidParameter("term must be at least \(minTermLength) characters (shorter searches are keystrokes, not questions)")
        }
        guard !term.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalidParameter("term must not contain control characters")
        }
        let limit = try p.int("limit", in: 1...200, default: 50)
        let country = p.value("country")?.lowercased() ?? "us"
        guard country.count == 2, country.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw .invalidParameter("country must be an ISO 3166-1 alpha-2 code such as us or gb")
        }
        let explicit = try p.choice("explicit", ["yes", "no"])

        var query = ["term=\(term.formEncoded())", "media=podcast", "entity=podcast", "limit=\(limit)", "country=\(country)"]
        if let explicit { query.append("explicit=\(explicit == "yes" ? "Yes" : "No")") }
        let request = UpstreamRequest(upstream: source, url: searchURL.addingQuery(query.joined(separator: "&")))
        // iTunes search is case-insensitive: one cache entry per lowercased term.
        let key = "podcasts|term=\(term.lowercased())|limit=\(limit)|country=\(country)|explicit=\(explicit ?? "")"
        let imageLinks = self.imageLinks
        return PreparedFeed(
            source: source, cacheKey: key, upstreamRequest: request,
            render: { body throws(ClientError) in
                Representation(try FeedJSON.encode(try Self.normalise(body, images: imageLinks)))
            })
    }

    struct SearchResponse: Decodable {
        let resultCount: Int?
        let results: DroppingInvalid<Result>
    }

    struct Result: Decodable {
        let collectionId: Int?
        let trackId: Int?
        let collectionName: String?
        let trackName: String?
        let artistName: String?
        let feedUrl: String?
        let artworkUrl600: String?
        let artworkUrl100: String?
        let artworkUrl60: String?
        let artworkUrl30: String?
        let genres: [String]?
        let primaryGenreName: String?
        let trackCount: Int?
        let releaseDate: String?
        let country: String?
        let collectionExplicitness: String?
        let collectionViewUrl: String?
    }

    /// Decodes by body, not by content type (iTunes says `text/javascript` and
    /// prefixes newlines, which JSONDecoder skips as whitespace).
    public static func normalise(_ body: [UInt8], images: ImageProxyLinks? = nil) throws(ClientError) -> FeedEnvelope<Podcast> {
        FeedEnvelope(source: SourceName.itunes, title: nil, updated: nil, items: try podcasts(body, images: images), page: nil)
    }

    /// The podcasts of a search or lookup answer (both have this shape); `images`: the image
    /// proxy, when artwork goes through it.
    static func podcasts(_ body: [UInt8], images links: ImageProxyLinks? = nil) throws(ClientError) -> [Podcast] {
        let response = try FeedJSON.decode(SearchResponse.self, from: JSONRepair.stripJSONP(body), source: SourceName.itunes)
        // Every URL an app may follow: absolute http(s) or nothing, as for feeds.
        func web(_ url: String?) -> String? { url.flatMap { URLReference.absolute($0) } }
        return response.results.elements.compactMap { r -> Podcast? in
            guard let id = r.collectionId ?? r.trackId, id > 0 else { return nil }
            let (a30, a60, a100, a600) = (web(r.artworkUrl30), web(r.artworkUrl60), web(r.artworkUrl100), web(r.artworkUrl600))
            let artwork = a600 ?? a100 ?? a60 ?? a30
            return Podcast(
                id: id,
                title: r.collectionName ?? r.trackName,
                author: r.artistName,
                feedUrl: web(r.feedUrl),
                artworkUrl: artwork,
                images: links.map { $0.podcastImages(for: artwork) } ?? PodcastImages.from([30: a30, 60: a60, 100: a100, 600: a600]),
                genres: r.genres ?? [],
                primaryGenre: r.primaryGenreName,
                episodeCount: FeedNumber.count(r.trackCount),
                releaseDate: Timestamp.iso8601UTC(r.releaseDate),
                country: r.country,
                explicit: r.collectionExplicitness.map { $0 == "explicit" },
                storeUrl: web(r.collectionViewUrl))
        }
    }
}

extension ITunesAdapter {
    /// `make fuzz`: a body end to end, as a search and as the lookup that finds a podcast's feed.
    package static func fuzz(_ body: [UInt8]) -> FuzzRun {
        var run = FuzzRun()
        run.read(try? normalise(body).encodedCount())
        // As a lookup: each podcast's answer, and the feed it names.
        for podcast in (try? podcasts(body))?.prefix(200) ?? [] {
            if let answer = try? FeedJSON.encode(ItemEnvelope(source: SourceName.itunes, item: podcast)) {
                _ = EpisodesAdapter.listed(fromPodcastAnswer: answer)
            }
        }
        return run
    }
}
