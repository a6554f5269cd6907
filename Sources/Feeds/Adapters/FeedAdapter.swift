import Primitives
import Upstream

/// Everything the service needs to answer one validated feed request:
/// the cache key and how to load the response JSON through the upstream client.
public struct PreparedFeed: Sendable {
    public let source: String
    /// Canonical: equivalent requests share it.
    public let cacheKey: String
    /// The first upstream request (inspectable in tests).
    public let upstreamRequest: UpstreamRequest
    /// Fetches, repairs, decodes, normalises and encodes; throws `UpstreamError` or `ClientError`.
    public let load: @Sendable (UpstreamClient) async throws -> FeedOutput

    public init(source: String, cacheKey: String, upstreamRequest: UpstreamRequest, load: @escaping @Sendable (UpstreamClient) async throws -> FeedOutput) {
        self.source = source
        self.cacheKey = cacheKey
        self.upstreamRequest = upstreamRequest
        self.load = load
    }

    /// The common case: one request, then render its body.
    public init(source: String, cacheKey: String, upstreamRequest: UpstreamRequest, render: @escaping @Sendable ([UInt8]) throws(ClientError) -> FeedOutput) {
        self.init(source: source, cacheKey: cacheKey, upstreamRequest: upstreamRequest) { client in
            try render(try await client.send(upstreamRequest).body)
        }
    }
}

/// What a feed request renders: the JSON body, and a `Link` header value where the answer
/// is a page of a longer list (RFC 8288).
public struct FeedOutput: Sendable {
    public let body: [UInt8]
    public let link: String?

    public init(_ body: [UInt8], link: String? = nil) {
        self.body = body
        self.link = link
    }
}

/// One upstream: validate params → build the request → repair, decode, normalise.
public protocol FeedAdapter: Sendable {
    var source: String { get }
    func prepare(_ parameters: QueryParameters) throws(ClientError) -> PreparedFeed
}
