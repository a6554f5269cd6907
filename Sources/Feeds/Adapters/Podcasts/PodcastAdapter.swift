import Primitives
import Upstream

/// `GET /podcasts/{id}`: the iTunes lookup of one podcast, as the same typed `Podcast`
/// that searches return.
public struct PodcastAdapter: FeedAdapter {
    public let source = SourceName.itunes
    /// This replica's lookups, shared with every other podcast looked up meanwhile.
    let lookups: PodcastLookups

    public init(lookups: PodcastLookups) {
        self.lookups = lookups
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        let id = try Self.collectionID(p)
        let request = UpstreamRequest(upstream: source, url: lookups.lookupURL.addingQuery("id=\(id)&entity=podcast"))
        let lookups = self.lookups
        return PreparedFeed(source: source, cacheKey: Self.cacheKey(id), upstreamRequest: request) { client in
            switch await lookups.answer(for: id, with: client) {
            case .success(let body): return Representation(body)
            case .failure(let failure): throw failure.thrown()
            }
        }
    }

    /// The `{id}` path segment: a positive iTunes collection id of at most 18 digits.
    static func collectionID(_ p: QueryParameters) throws(ClientError) -> Int {
        guard let id = p.value("id"), id.count <= 18, !id.isEmpty, id.allSatisfy(\.isASCIIDigit), let number = Int(id), number > 0 else {
            throw .invalidParameter("id must be a positive iTunes collection id")
        }
        return number
    }

    /// The key `/podcasts/{id}`'s answer is cached under.
    public static func cacheKey(_ id: Int) -> String { "podcast|id=\(id)" }

    /// `/podcasts/{id}`'s answer from a lookup response that holds podcast `id`, else nil.
    static func answer(fromLookup body: [UInt8], id: Int) -> [UInt8]? {
        try? FeedJSON.encode(try normalise(body, id: id))
    }

    static func normalise(_ body: [UInt8], id: Int) throws(ClientError) -> ItemEnvelope<Podcast> {
        // A lookup may also carry episodes (wrapperType "track" of kind podcast-episode): the podcast is the one with this id.
        guard let podcast = try ITunesAdapter.podcasts(body).first(where: { $0.id == id }) else {
            throw ClientError(status: 404, code: "podcast_not_found", message: "no podcast has this id")
        }
        return ItemEnvelope(source: SourceName.itunes, item: podcast)
    }
}
