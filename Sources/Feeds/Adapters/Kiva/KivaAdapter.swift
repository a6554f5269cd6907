import Primitives
import Upstream

/// Kiva's fundraising loans → `/loans` (filtered, ordered, paged with links) and
/// `/loans/{id}`, over GraphQL (default) or the legacy REST API.
public struct KivaAdapter: FeedAdapter {
    public enum API: Sendable {
        case graphQL(url: String)
        case rest(url: String)
    }

    public let source = SourceName.kiva
    let api: API

    public init(api: API) {
        self.api = api
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        let q = try KivaQuery(p)
        let request: UpstreamRequest
        let normalise: @Sendable ([UInt8]) throws(ClientError) -> FeedEnvelope<Loan>
        switch api {
        case .graphQL(let url):
            request = UpstreamRequest(
                upstream: source, method: .post, url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                body: KivaGraphQL.requestBody(q))
            normalise = { body throws(ClientError) in try KivaGraphQL.normalise(body, page: q.page, limit: q.limit) }
        case .rest(let url):
            request = UpstreamRequest(upstream: source, url: try KivaREST.listURL(url, q), headers: [("Accept", "application/json")])
            normalise = { body throws(ClientError) in try KivaREST.normalise(body) }
        }
        return PreparedFeed(
            source: source, cacheKey: q.cacheKey, upstreamRequest: request,
            render: { body throws(ClientError) in
                var envelope = try normalise(body)
                // Paging links, in the body and as a Link header, for the same filters and order.
                let link = envelope.page?.link { "/loans?" + q.query(page: $0) }
                return Representation(try FeedJSON.encode(envelope), link: link)
            })
    }
}

/// `GET /loans/{id}`: one loan, with its description.
public struct KivaLoanAdapter: FeedAdapter {
    public let source = SourceName.kiva
    let api: KivaAdapter.API

    public init(api: KivaAdapter.API) {
        self.api = api
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        guard let text = p.value("id"), !text.isEmpty, text.count <= 10, text.allSatisfy(\.isASCIIDigit), let id = Int(text), id > 0, id <= Int(Int32.max)
        else { throw .invalidParameter("id must be a positive Kiva loan id") }
        switch api {
        case .graphQL(let url):
            let request = UpstreamRequest(
                upstream: source, method: .post, url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                body: KivaGraphQL.loanRequestBody(id: id))
            return PreparedFeed(
                source: source, cacheKey: "loan|id=\(id)", upstreamRequest: request,
                render: { body throws(ClientError) in Representation(try FeedJSON.encode(try KivaGraphQL.normaliseLoan(body))) })
        case .rest(let url):
            let request = UpstreamRequest(upstream: source, url: KivaREST.sibling(of: url, "\(id).json"), headers: [("Accept", "application/json")])
            return PreparedFeed(source: source, cacheKey: "loan|id=\(id)", upstreamRequest: request) { client in
                let body: [UInt8]
                do {
                    body = try await client.send(request).body
                } catch UpstreamError.httpStatus(404) {
                    // The REST API answers an unknown loan with a 404 of its own.
                    throw ClientError(status: 404, code: "loan_not_found", message: "no loan has this id")
                }
                return Representation(try FeedJSON.encode(try KivaREST.normaliseLoan(body, id: id)))
            }
        }
    }
}

extension KivaAdapter {
    /// The GraphQL normaliser, for benchmarks.
    public static func normaliseGraphQL(_ body: [UInt8], page: Int, limit: Int) throws(ClientError) -> FeedEnvelope<Loan> {
        try KivaGraphQL.normalise(body, page: page, limit: limit)
    }
}

extension KivaAdapter {
    /// `make fuzz`: a body end to end, as GraphQL's answer and as the REST API's.
    package static func fuzz(_ body: [UInt8]) -> FuzzRun {
        var run = FuzzRun()
        run.read(try? KivaGraphQL.normalise(body, page: 1, limit: 20).encodedCount())
        run.read(try? KivaREST.normalise(body).encodedCount())
        return run
    }
}
