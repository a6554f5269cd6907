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
    /// Fetches, repairs, decodes, normalises and encodes; throws `UpstreamError` or
    /// `ClientError`. Given the answer it refreshes, it asks conditionally on its validators
    /// and may answer `.notModified` (nothing downloaded or parsed again).
    public let refresh: @Sendable (UpstreamClient, PreviousAnswer?) async throws -> FeedLoad
    /// Set when `refresh` loads data that many answers are cut from (a whole feed) rather
    /// than the answer itself: the data is cached under `view.dataKey`, the answer under
    /// `cacheKey`.
    public let view: FeedView?

    public init(
        source: String, cacheKey: String, upstreamRequest: UpstreamRequest, view: FeedView? = nil,
        refresh: @escaping @Sendable (UpstreamClient, PreviousAnswer?) async throws -> FeedLoad
    ) {
        self.source = source
        self.cacheKey = cacheKey
        self.upstreamRequest = upstreamRequest
        self.view = view
        self.refresh = refresh
    }

    /// The key the upstream load is cached and single-flighted under.
    public var loadKey: String { view?.dataKey ?? cacheKey }

    /// A load that is never conditional (a POST, or an answer built from several requests).
    public init(source: String, cacheKey: String, upstreamRequest: UpstreamRequest, load: @escaping @Sendable (UpstreamClient) async throws -> Representation) {
        self.init(source: source, cacheKey: cacheKey, upstreamRequest: upstreamRequest) { client, _ in .rendered(try await load(client)) }
    }

    /// The parse span's attributes (built only when it is recorded).
    static func parseAttributes(_ source: String, _ response: UpstreamResponse) -> [(String, Span.Value)] {
        [("feedproxy.source", .string(source)), ("http.response.body.size", .int(Int64(response.body.count)))]
    }

    /// The common case: one request, then render its body; a GET refresh is conditional on
    /// the validators the upstream sent last time. With a `view`, the rendered body is the data
    /// answers are cut from.
    public init(
        source: String, cacheKey: String, upstreamRequest: UpstreamRequest, view: FeedView? = nil,
        render: @escaping @Sendable ([UInt8]) throws(ClientError) -> Representation
    ) {
        self.init(source: source, cacheKey: cacheKey, upstreamRequest: upstreamRequest, view: view) { (response: UpstreamResponse) throws(ClientError) in
            try render(response.body)
        }
    }

    /// The same, rendering from the whole response (its body was cut at the cap, say).
    public init(
        source: String, cacheKey: String, upstreamRequest: UpstreamRequest, view: FeedView? = nil,
        render: @escaping @Sendable (UpstreamResponse) throws(ClientError) -> Representation
    ) {
        self.init(source: source, cacheKey: cacheKey, upstreamRequest: upstreamRequest, view: view) { client, replaced in
            let previous = replaced?.validators
            var request = upstreamRequest
            if request.method == .get, let previous, previous.listedURL == request.url, previous.etag != nil || previous.lastModified != nil {
                request.revalidation = previous
            }
            let response = try await client.send(request)
            let validators = Revalidation(
                listedURL: upstreamRequest.url, url: upstreamRequest.url, etag: response.header("ETag"), lastModified: response.header("Last-Modified"))
            if response.isNotModified, let previous { return .notModified(validators.keepingValidators(of: previous)) }
            let parsing = LeafSpan.start()
            let output: Representation
            do {
                output = try render(response)
            } catch {
                parsing?.end("parse", Self.parseAttributes(source, response), error: String(describing: error))
                throw error
            }
            parsing?.end("parse", Self.parseAttributes(source, response))
            return .rendered(output, revalidation: request.method == .get && validators.isUseful ? validators : nil)
        }
    }
}

/// An answer cut from cached data: one load (a feed's download and parse) serves every
/// answer cut from it, whatever page, `since` or cursor they ask for.
public struct FeedView: Sendable {
    public let dataKey: String
    /// The data's bytes → the answer; nil when they are not data this view can read (damaged).
    public let cut: @Sendable ([UInt8]) -> Representation?
    /// Another route's cached answer the load can start from (the podcast `/podcasts/{id}`
    /// looked up holds its feed's address): its key, and the load made from its body, or nil
    /// when that body does not serve.
    public let startingFrom: (key: String, load: @Sendable ([UInt8]) -> (@Sendable (UpstreamClient, PreviousAnswer?) async throws -> FeedLoad)?)?
    /// The data is itself an answer (the whole feed, asked under `dataKey`), so it is kept
    /// compressed too; otherwise it is only ever cut from.
    public let isAnAnswer: Bool

    public init(
        dataKey: String,
        startingFrom: (key: String, load: @Sendable ([UInt8]) -> (@Sendable (UpstreamClient, PreviousAnswer?) async throws -> FeedLoad)?)? = nil,
        isAnAnswer: Bool = false,
        cut: @escaping @Sendable ([UInt8]) -> Representation?
    ) {
        self.dataKey = dataKey
        self.startingFrom = startingFrom
        self.isAnAnswer = isAnAnswer
        self.cut = cut
    }
}

/// What a refresh replaces: the upstream's validators for it (a conditional request), and its
/// bytes (a feed's episode data carries over when each episode was first seen).
public struct PreviousAnswer: Sendable {
    public let validators: Revalidation?
    public let body: [UInt8]

    public init(validators: Revalidation?, body: [UInt8]) {
        self.validators = validators
        self.body = body
    }
}

/// What a (possibly conditional) load produced.
public enum FeedLoad: Sendable {
    /// A new answer, and the upstream's validators (and a feed's permanent new address) for
    /// the next refresh.
    case rendered(Representation, revalidation: Revalidation? = nil)
    /// The upstream answered `304 Not Modified`: the answer being refreshed stands, with
    /// these validators from now on.
    case notModified(Revalidation)
}

/// One upstream: validate params → build the request → repair, decode, normalise.
public protocol FeedAdapter: Sendable {
    var source: String { get }
    func prepare(_ parameters: QueryParameters) throws(ClientError) -> PreparedFeed
}
