import Foundation
import Upstream

/// Everything the service needs to answer one validated feed request:
/// the cache key, the upstream request, and how to turn its body into response JSON.
public struct PreparedFeed: Sendable {
    public let source: String
    /// Canonical: equivalent requests share it.
    public let cacheKey: String
    public let upstreamRequest: UpstreamRequest
    /// Repairs, decodes and normalises an upstream body into the encoded envelope.
    public let render: @Sendable ([UInt8]) throws(FeedError) -> [UInt8]
}

/// One upstream: validate params → build the request → repair, decode, normalise.
public protocol FeedAdapter: Sendable {
    var source: String { get }
    func prepare(_ parameters: QueryParameters) throws(FeedError) -> PreparedFeed
}

/// The single JSON encoder configuration for responses: stable key order, no escaped slashes.
public enum FeedJSON {
    public static func encode<T: Encodable>(_ value: T) throws(FeedError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw FeedError(status: 500, code: "encoding_failed", message: "response could not be encoded")
        }
    }

    /// Decodes upstream bytes; any failure is the upstream's fault (502), never a crash.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>, source: String) throws(FeedError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw .badUpstreamResponse(source)
        }
    }
}
