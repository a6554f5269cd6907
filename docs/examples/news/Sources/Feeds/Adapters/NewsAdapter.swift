import FeedFormats
import Primitives
import Upstream

extension SourceName {
    /// A news API's top headlines (NewsAPI.org's shape): `/news`.
    public static let news = "news"
}

/// A news API's top headlines → `/news`.
public struct NewsAdapter: FeedAdapter {
    public let source = SourceName.news
    let url: String

    package static let categories = ["business", "general", "health", "science", "sports", "technology"]

    public init(url: String) {
        self.url = url
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        let category = try p.choice("category", Self.categories) ?? "general"
        let request = UpstreamRequest(upstream: source, url: url.addingQuery("category=\(category)&pageSize=50"), headers: [("Accept", "application/json")])
        return PreparedFeed(
            source: source, cacheKey: "news|category=\(category)", upstreamRequest: request,
            render: { body throws(ClientError) in Representation(try FeedJSON.encode(try Self.normalise(body))) })
    }

    struct Answer: Decodable {
        struct Article: Decodable {
            struct Outlet: Decodable { let name: String? }
            let title: String?
            let url: String?
            let urlToImage: String?
            let publishedAt: String?
            let source: Outlet?
        }
        let articles: [Article]
    }

    /// Headline → `Article`: every URL absolute http(s) or nothing, every date in range or nothing.
    public static func normalise(_ body: [UInt8]) throws(ClientError) -> FeedEnvelope<Article> {
        let answer = try FeedJSON.decode(Answer.self, from: body, source: SourceName.news)
        let articles = answer.articles.prefix(50).map { a in
            Article(
                title: a.title, url: a.url.flatMap { URLReference.absolute($0) }, imageUrl: a.urlToImage.flatMap { URLReference.absolute($0) },
                published: Timestamp.iso8601UTC(a.publishedAt), outlet: a.source?.name)
        }
        return FeedEnvelope(source: SourceName.news, title: nil, updated: nil, items: articles, page: nil)
    }
}

extension NewsAdapter {
    /// `make fuzz`: a body end to end, as the route renders it (never a trap).
    package static func fuzz(_ body: [UInt8]) -> FuzzRun {
        var run = FuzzRun()
        run.read(try? normalise(body).encodedCount())
        return run
    }
}

/// One headline.
public struct Article: Codable, Sendable, Equatable {
    public var title: String?
    public var url: String?
    public var imageUrl: String?
    public var published: String?
    public var outlet: String?
}
