import Upstream

/// Everything the service needs to answer one validated feed request:
/// the cache key and how to load the response JSON through the upstream client.
public struct PreparedFeed: Sendable {
    public let source: String
    /// Canonical: equivalent requests share it.
    public let cacheKey: String
    /// The first upstream request (inspectable in tests).
    public let upstreamRequest: UpstreamRequest
    /// Fetches, repairs, decodes, normalises and encodes; throws `UpstreamError` or `FeedError`.
    public let load: @Sendable (UpstreamClient) async throws -> [UInt8]

    public init(source: String, cacheKey: String, upstreamRequest: UpstreamRequest, load: @escaping @Sendable (UpstreamClient) async throws -> [UInt8]) {
        self.source = source
        self.cacheKey = cacheKey
        self.upstreamRequest = upstreamRequest
        self.load = load
    }

    /// The common case: one request, then render its body.
    public init(source: String, cacheKey: String, upstreamRequest: UpstreamRequest, render: @escaping @Sendable ([UInt8]) throws(FeedError) -> [UInt8]) {
        self.init(source: source, cacheKey: cacheKey, upstreamRequest: upstreamRequest) { client in
            try render(try await client.send(upstreamRequest).body)
        }
    }
}

/// One upstream: validate params → build the request → repair, decode, normalise.
public protocol FeedAdapter: Sendable {
    var source: String { get }
    func prepare(_ parameters: QueryParameters) throws(FeedError) -> PreparedFeed
}

/// JSON for responses (streamed, keys in declaration order) and from upstreams.
public enum FeedJSON {
    public static func encode<T: Encodable>(_ value: T) throws(FeedError) -> [UInt8] {
        let encoder = JSONStreamEncoder()
        do {
            try encoder.write(value)
            return encoder.finish()
        } catch {
            throw FeedError(status: 500, code: "encoding_failed", message: "response could not be encoded")
        }
    }

    /// Decodes upstream bytes; any failure is the upstream's fault (502), never a crash.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>, source: String) throws(FeedError) -> T {
        do {
            return try JSONValueDecoder.decode(T.self, from: bytes)
        } catch {
            throw .badUpstreamResponse(source)
        }
    }
}
