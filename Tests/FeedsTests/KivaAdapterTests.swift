import Foundation
import Primitives
import TestSupport
import Testing
@testable import Feeds

@Suite(.offPool) struct KivaAdapterTests {
    @Test func graphQLFieldByField() throws {
        let env = try KivaGraphQL.normalise(fixture("kiva/graphql.json"), page: 2, limit: 20)
        #expect(env.source == "kiva")
        #expect(env.page == PageInfo(number: 2, size: 20, total: 4823))
        #expect(env.page?.pages == 242)
        #expect(env.count == 20)
        #expect(env.items[0].images?.w80h80.url == "https://www.kiva.org/img/w80h80/5123400.jpg")
        #expect(
            env.items.map {
                var l = $0; l.images = nil; return l
            }[0]
                == Loan(
                    id: 2812300, name: "Maria", use: "to buy supplies for business 0", amount: 875, fundedAmount: 150, status: "fundraising",
                    country: "Peru", countryCode: "PE", town: "Lima", sector: "Retail", activity: "General Store",
                    imageUrl: "https://www.kiva.org/img/w800/5123400.jpg", postedAt: "2025-11-03T14:00:05Z", expiresAt: "2025-12-03T19:20:05Z",
                    borrowerCount: 1, lenderCount: 0, partnerName: "Alternativa Peru", tags: ["#Woman-Owned Business", "#Parent"]))
        #expect(env.items[1].town == nil)
        #expect(env.items[1].borrowerCount == 7)
        #expect(env.items[2].partnerName == nil)
        #expect(env.items[3].amount == 950)
    }

    @Test func restFieldByField() throws {
        let env = try KivaREST.normalise(fixture("kiva/newest.json"))
        #expect(env.page == PageInfo(number: 1, size: 20, total: 5623))
        #expect(env.items[0].images != nil)
        #expect(
            env.items.map {
                var l = $0; l.images = nil; return l
            }[0]
                == Loan(
                    id: 2812300, name: "Maria", use: "to buy supplies for business 0", amount: 875, fundedAmount: 150, status: "fundraising",
                    country: "Peru", countryCode: "PE", town: nil, sector: "Retail", activity: "General Store",
                    imageUrl: "https://www.kiva.org/img/w800/5123400.jpg", postedAt: "2025-11-03T14:00:05Z", expiresAt: "2025-12-03T14:20:05Z",
                    borrowerCount: 1, lenderCount: 0, partnerName: nil, tags: ["#Woman-Owned Business"]))
        #expect(env.items[1].town == "Lima")
        #expect(env.items[1].tags == [])
    }

    @Test func graphQLRequestCarriesPagingVariables() throws {
        let adapter = KivaAdapter(api: .graphQL(url: "http://127.0.0.1:9/graphql"))
        let p = try adapter.prepare(QueryParameters([("page", "3"), ("limit", "10")]))
        #expect(p.upstreamRequest.method == .post)
        let body = json(p.upstreamRequest.body ?? [])
        let variables = body["variables"] as? [String: Any]
        #expect(variables?["limit"] as? Int == 10)
        #expect(variables?["offset"] as? Int == 20)
        #expect((body["query"] as? String)?.contains("filters: {status: fundraising}, sortBy: newest") == true)
        #expect(p.cacheKey == "loans|page=3&limit=10")
    }

    @Test func restRequestURL() throws {
        let adapter = KivaAdapter(api: .rest(url: "http://127.0.0.1:9/v1/loans/newest.json"))
        let p = try adapter.prepare(QueryParameters([("page", "2")]))
        #expect(p.upstreamRequest.url == "http://127.0.0.1:9/v1/loans/newest.json?page=2&per_page=20")
    }

    /// `/loans/{id}`: a positive 32-bit id, asked for by name (GraphQL's variables, the REST
    /// API's path beside its list), one cache entry per loan whichever API answers.
    @Test func oneLoanIsAskedForByItsID() throws {
        let graphQL = try KivaLoanAdapter(api: .graphQL(url: "http://x/graphql")).prepare(QueryParameters([("id", "2812300")]))
        #expect(graphQL.cacheKey == "loan|id=2812300")
        #expect(String(decoding: graphQL.upstreamRequest.body ?? [], as: UTF8.self).contains("2812300"))
        let rest = try KivaLoanAdapter(api: .rest(url: "http://127.0.0.1:9/v1/loans/newest.json?x=1")).prepare(QueryParameters([("id", "42")]))
        #expect(rest.upstreamRequest.url == "http://127.0.0.1:9/v1/loans/42.json" && rest.cacheKey == "loan|id=42")
        for bad in ["0", "-1", "abc", "2147483648", "", "１"] {
            #expect(throws: ClientError.invalidParameter("id must be a positive Kiva loan id")) {
                try KivaLoanAdapter(api: .graphQL(url: "http://x/graphql")).prepare(QueryParameters([("id", bad)]))
            }
        }
    }

    @Test func validation() {
        let adapter = KivaAdapter(api: .graphQL(url: "http://x/graphql"))
        #expect(throws: ClientError.invalidParameter("page must be an integer between 1 and 10000")) { try adapter.prepare(QueryParameters([("page", "0")])) }
        #expect(throws: ClientError.invalidParameter("limit must be an integer between 1 and 100")) { try adapter.prepare(QueryParameters([("limit", "101")])) }
    }

    @Test(arguments: ["errors/graphql_error.json", "errors/truncated.json", "kiva/newest.json"])
    func badGraphQLBodiesAre502(_ path: String) {
        #expect(throws: ClientError.badUpstreamResponse("kiva")) { try KivaGraphQL.normalise(fixture(path), page: 1, limit: 20) }
    }
}
