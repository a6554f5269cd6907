import Primitives
import Upstream

/// Kiva's newest fundraising loans → `/loans`, over GraphQL (default) or the legacy REST API.
public struct KivaAdapter: FeedAdapter {
    public enum API: Sendable {
        case graphQL(url: String)
        case rest(url: String)
    }

    public let source = "kiva"
    let api: API

    public init(api: API) {
        self.api = api
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        let page = try p.int("page", in: 1...10_000, default: 1)
        let limit = try p.int("limit", in: 1...100, default: 20)
        let key = "loans|page=\(page)|limit=\(limit)"
        switch api {
        case .graphQL(let url):
            let request = UpstreamRequest(
                upstream: source, method: .post, url: url,
                headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                body: KivaGraphQL.requestBody(limit: limit, offset: (page - 1) * limit))
            return PreparedFeed(
                source: source, cacheKey: key, upstreamRequest: request,
                render: { body throws(ClientError) in
                    try FeedJSON.encode(try KivaGraphQL.normalise(body, page: page, limit: limit))
                })
        case .rest(let url):
            let request = UpstreamRequest(upstream: source, url: url.addingQuery("page=\(page)&per_page=\(limit)"), headers: [("Accept", "application/json")])
            return PreparedFeed(
                source: source, cacheKey: key, upstreamRequest: request,
                render: { body throws(ClientError) in
                    try FeedJSON.encode(try KivaREST.normalise(body))
                })
        }
    }
}

extension KivaAdapter {
    /// The GraphQL normaliser, for benchmarks.
    public static func normaliseGraphQL(_ body: [UInt8], page: Int, limit: Int) throws(ClientError) -> FeedEnvelope<Loan> {
        try KivaGraphQL.normalise(body, page: page, limit: limit)
    }
}
