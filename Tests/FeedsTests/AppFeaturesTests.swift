import Foundation
import Primitives
import TestSupport
import Testing
@testable import Feeds

/// Issue 21 in the feed layer: image sizes as data, Kiva filters, paging links, podcast and
/// loan details, the episodes' channel fields.
@Suite(.offPool) struct ImageSizeTests {
    @Test func flickrSuffixesFromTheMediumURL() throws {
        let images = try #require(PhotoImages.from(mediumURL: "https://live.staticflickr.com/65535/53301234567_a1b2c3d4e5_m.jpg"))
        #expect(images.s == ImageSize(url: "https://live.staticflickr.com/65535/53301234567_a1b2c3d4e5_s.jpg", width: 75, height: 75, maxEdge: 75))
        #expect(images.q.width == 150 && images.q.url.hasSuffix("_q.jpg"))
        #expect(images.b == ImageSize(url: "https://live.staticflickr.com/65535/53301234567_a1b2c3d4e5_b.jpg", width: nil, height: nil, maxEdge: 1024))
        #expect([images.t, images.m, images.n, images.z].map(\.maxEdge) == [100, 240, 320, 640])
        #expect(PhotoImages.from(mediumURL: "https://example.com/nothing.jpg") == nil)
    }

    @Test func itunesArtworkGivenOrDerived() throws {
        let big = "https://is1-ssl.mzstatic.com/image/thumb/Podcasts/1/600x600bb.jpg"
        let derived = try #require(PodcastImages.from([30: nil, 60: nil, 100: "https://x/100.jpg", 600: big]))
        #expect(derived.px30.url == "https://is1-ssl.mzstatic.com/image/thumb/Podcasts/1/30x30bb.jpg")
        #expect(derived.px100.url == "https://x/100.jpg")  // what iTunes sent wins
        #expect(derived.px600 == ImageSize(url: big, width: 600, height: 600, maxEdge: 600))
        #expect(PodcastImages.from([600: "https://x/cover.png"]) == nil)  // no size segment to vary
        let json = String(decoding: try FeedJSON.encode(derived), as: UTF8.self)
        #expect(json.hasPrefix(#"{"30":{"url":"#))
    }

    @Test func kivaPresetsFromAnyImageURL() throws {
        let images = try #require(LoanImages.from(url: "https://www.kiva.org/img/w800/5123400.jpg"))
        #expect(images.w80h80 == ImageSize(url: "https://www.kiva.org/img/w80h80/5123400.jpg", width: 80, height: 80, maxEdge: 80))
        #expect(images.w480h300.url == "https://www.kiva.org/img/w480h300/5123400.jpg")
        #expect(images.w800.url == "https://www.kiva.org/img/w800/5123400.jpg")
        #expect(LoanImages.from(url: "https://example.com/a.jpg") == nil)
    }
}

@Suite(.offPool) struct KivaQueryTests {
    static func query(_ items: [(String, String)]) throws -> KivaQuery { try KivaQuery(QueryParameters(items)) }

    @Test func equivalentRequestsShareOneCanonicalForm() throws {
        let a = try Self.query([("sector", "Retail,food"), ("country", "pe"), ("country", "KE,pe"), ("sort", "EXPIRING")])
        let b = try Self.query([("country", "ke"), ("sector", "12"), ("sector", "retail"), ("country", "PE"), ("sort", "expiring")])
        #expect(a == b)
        #expect(a.cacheKey == "loans|page=1&limit=20&sector=retail,food&country=KE,PE&sort=expiring")
        #expect(try Self.query([]).cacheKey == "loans|page=1&limit=20")
    }

    @Test(arguments: [
        ("sector", "bogus", "sector must be one or more of: agriculture"), ("country", "PER", "country must be ISO 3166-1 alpha-2"),
        ("gender", "other", "gender must be one of: female, male, nonbinary"),
        ("sort", "cheapest", "sort must be one of: newest, expiring, amountLeft, popularity"),
    ])
    func unknownValuesNameTheAllowedOnes(_ name: String, _ value: String, _ message: String) {
        do {
            _ = try Self.query([(name, value)])
            Issue.record("accepted \(name)=\(value)")
        } catch let error as ClientError {
            #expect(error.status == 400 && error.message.hasPrefix(message), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func theGraphQLQueryCarriesTheFiltersAndOrder() throws {
        let q = try Self.query([
            ("sector", "retail,agriculture"), ("country", "ke"), ("gender", "female"), ("sort", "amountLeft"), ("page", "3"), ("limit", "10"),
        ])
        let text = KivaGraphQL.query(q)
        #expect(text.contains(#"filters: {status: fundraising, sector: [1, 7], country: ["KE"], gender: female}, sortBy: amountLeft"#))
        let body = try #require(try JSONSerialization.jsonObject(with: Data(KivaGraphQL.requestBody(q))) as? [String: Any])
        #expect((body["variables"] as? [String: Int]) == ["limit": 10, "offset": 20])
    }

    @Test func theRESTSearchUsesKivasOwnNames() throws {
        let q = try Self.query([("country", "ke,pe"), ("sort", "expiring"), ("sector", "retail")])
        #expect(
            try KivaREST.listURL("https://api.kivaws.org/v1/loans/newest.json", q)
                == "https://api.kivaws.org/v1/loans/search.json?page=1&per_page=20&status=fundraising&sort_by=expiration&sector=7&country_code=KE,PE")
        #expect(
            try KivaREST.listURL("https://api.kivaws.org/v1/loans/newest.json", Self.query([]))
                == "https://api.kivaws.org/v1/loans/newest.json?page=1&per_page=20")
        #expect(throws: ClientError.self) { try KivaREST.listURL("https://x/v1/loans/newest.json", try Self.query([("gender", "nonbinary")])) }
    }
}

@Suite(.offPool) struct PagingLinkTests {
    @Test func linksForAMiddleFirstAndLastPage() {
        var middle = PageInfo(number: 2, size: 20, total: 95)
        let header = middle.link { "/loans?page=\($0)&limit=20" }
        #expect(middle.pages == 5)
        #expect(
            header
                == #"</loans?page=1&limit=20>; rel="first", </loans?page=1&limit=20>; rel="prev", </loans?page=3&limit=20>; rel="next", </loans?page=5&limit=20>; rel="last""#
        )
        var first = PageInfo(number: 1, size: 20, total: 95)
        _ = first.link { "/p\($0)" }
        #expect(first.prev == nil && first.next == "/p2")
        var last = PageInfo(number: 5, size: 20, total: 95)
        _ = last.link { "/p\($0)" }
        #expect(last.next == nil && last.prev == "/p4")
        var empty = PageInfo(number: 1, size: 20, total: 0)
        _ = empty.link { "/p\($0)" }
        #expect(empty.next == nil && empty.last == "/p1")
    }
}

@Suite(.offPool) struct DetailTests {
    @Test func aLoanWithItsDescriptionAsPlainText() throws {
        let body = Array(
            #"{"data":{"lend":{"loan":{"id":42,"name":"Ana","loanAmount":"500.00","description":"Ana sells fruit.<br /><br />She &amp; her son."}}}}"#.utf8)
        let loan = try KivaGraphQL.normaliseLoan(body).item
        #expect(loan.id == 42 && loan.amount == 500)
        #expect(loan.description == "Ana sells fruit. She & her son.")
        #expect(throws: ClientError(status: 404, code: "loan_not_found", message: "no loan has this id")) {
            try KivaGraphQL.normaliseLoan(Array(#"{"data":{"lend":{"loan":null}}}"#.utf8))
        }
    }

    @Test func aPodcastByIdIsTheSameTypeAsASearchResult() throws {
        let body = fixture("itunes/lookup.json")
        let one = try PodcastAdapter.normalise(body, id: 1580000006).item
        #expect(one.id == 1580000006 && one.title == "Notícias do Dia")
        #expect(throws: ClientError(status: 404, code: "podcast_not_found", message: "no podcast has this id")) {
            try PodcastAdapter.normalise(body, id: 1)
        }
    }

    /// `/podcasts/{id}`: a positive collection id of at most 18 digits, one cache entry per
    /// podcast (the key a library load looks up), asked of iTunes' lookup.
    @Test func aPodcastIsAskedForByItsCollectionID() throws {
        let adapter = PodcastAdapter(lookups: PodcastLookups(lookupURL: "http://127.0.0.1:9/lookup"))
        let prepared = try adapter.prepare(QueryParameters([("id", "1200361736")]))
        #expect(prepared.cacheKey == PodcastAdapter.cacheKey(1_200_361_736) && prepared.cacheKey == "podcast|id=1200361736")
        #expect(prepared.upstreamRequest.url == "http://127.0.0.1:9/lookup?id=1200361736&entity=podcast")
        for bad in ["0", "-3", "x", "", "1234567890123456789", "１"] {
            #expect(throws: ClientError.invalidParameter("id must be a positive iTunes collection id")) {
                try adapter.prepare(QueryParameters([("id", bad)]))
            }
        }
    }

    @Test func theEpisodesEnvelopeCarriesTheChannel() throws {
        let out = try EpisodesAdapter.render(
            feed: fixture("rss/1200361736.xml"), contentType: nil, lookupTitle: nil, limit: 1, base: "https://feeds.example.com/rss/1200361736.xml")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.body)) as? [String: Any])
        #expect(json["description"] as? String == "In-depth conversations about Swift & app development, with John Sundell and guests.")
        #expect(json["author"] as? String == "John Sundell")
        #expect(json["language"] as? String == "en-us")
        #expect(json["link"] as? String == "https://www.swiftbysundell.com/podcast")
        #expect(json["imageUrl"] as? String == "https://feeds.example.com/artwork/cover-3000.jpg")
        // With images, podcastGuid, locked, funding, persons, newFeedUrl, movedTo, truncated, syncToken, resync, removed, changed.
        #expect(Array(json.keys).count == 23)
        #expect(json["movedTo"] is NSNull)
    }
}
