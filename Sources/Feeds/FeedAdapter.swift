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
    public let load: @Sendable (UpstreamClient) async throws -> [UInt8]

    public init(source: String, cacheKey: String, upstreamRequest: UpstreamRequest, load: @escaping @Sendable (UpstreamClient) async throws -> [UInt8]) {
        self.source = source
        self.cacheKey = cacheKey
        self.upstreamRequest = upstreamRequest
        self.load = load
    }

    /// The common case: one request, then render its body.
    public init(source: String, cacheKey: String, upstreamRequest: UpstreamRequest, render: @escaping @Sendable ([UInt8]) throws(ClientError) -> [UInt8]) {
        self.init(source: source, cacheKey: cacheKey, upstreamRequest: upstreamRequest) { client in
            try render(try await client.send(upstreamRequest).body)
        }
    }
}

/// One upstream: validate params → build the request → repair, decode, normalise.
public protocol FeedAdapter: Sendable {
    var source: String { get }
    func prepare(_ parameters: QueryParameters) throws(ClientError) -> PreparedFeed
}
