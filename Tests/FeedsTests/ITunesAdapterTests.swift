import Primitives
import TestSupport
import Testing
@testable import Feeds

@Suite(.offPool) struct ITunesAdapterTests {
    let adapter = ITunesAdapter(searchURL: "http://127.0.0.1:9/search")

    @Test func normalisesFieldsWithLeadingNewlines() throws {
        let env = try ITunesAdapter.normalise(fixture("itunes/search.json"))
        #expect(env.source == "itunes")
        #expect(env.title == nil)
        #expect(env.count == 8)
        var first = env.items[0]
        #expect(first.images?.px100.url == "https://is1-ssl.mzstatic.com/image/thumb/Podcasts/1200361736/100x100bb.jpg")
        first.images = nil  // checked on their own (ImageSizeTests)
        #expect(
            first
                == Podcast(
                    id: 1200361736, title: "Swift by Sundell", author: "John Sundell", feedUrl: "https://feeds.example.com/1200361736.rss",
                    artworkUrl: "https://is1-ssl.mzstatic.com/image/thumb/Podcasts/1200361736/600x600bb.jpg",
                    genres: ["Technology", "Podcasts"], primaryGenre: "Technology", episodeCount: 100,
                    releaseDate: "2025-11-03T10:45:00Z", country: "USA", explicit: false,
                    storeUrl: "https://podcasts.apple.com/us/podcast/id1200361736?uo=4"))
    }

    /// With the image proxy on, artwork goes through it at iTunes' four sizes, from the
    /// largest URL iTunes gave; the artwork URL itself is kept as given.
    @Test func artworkGoesThroughTheImageProxyWhenItIsOn() throws {
        let links = try #require(ImageProxyLinks(key: "test-key"))
        let items = try ITunesAdapter.normalise(fixture("itunes/search.json"), images: links).items
        let images = try #require(items[0].images)
        let source = "https://is1-ssl.mzstatic.com/image/thumb/Podcasts/1200361736/600x600bb.jpg"
        #expect(images.px30.url == links.link(source, width: 30) && images.px30.width == 30 && images.px30.maxEdge == 30)
        #expect(images.px100.url == links.link(source, width: 100))
        #expect(images.px600.url == links.link(source, width: 600))
        #expect(items[0].artworkUrl == source)
        #expect(items[2].images == nil, "no artwork, no images")
        #expect(try ITunesAdapter.normalise(fixture("itunes/search.json")).items[0].images?.px30.url.hasPrefix("https://is1-ssl") == true)
    }

    @Test func quirks() throws {
        let items = try ITunesAdapter.normalise(fixture("itunes/search.json")).items
        #expect(items[1].artworkUrl == "https://is1-ssl.mzstatic.com/image/thumb/Podcasts/1526489823/100x100bb.jpg")  // no 600
        #expect(items[2].feedUrl == nil)
        #expect(items[2].artworkUrl == nil)
        #expect(items[2].explicit == true)
        #expect(items[2].releaseDate == "2025-10-30T15:00:00Z")
        #expect(items[3].explicit == false)  // "cleaned"
        #expect(items[3].artworkUrl?.hasSuffix("60x60bb.jpg") == true)
    }

    @Test func encodesNullsExplicitly() throws {
        let env = try ITunesAdapter.normalise(fixture("itunes/search.json"))
        let text = String(decoding: try FeedJSON.encode(env), as: UTF8.self)
        #expect(text.contains("\"feedUrl\":null"))
        #expect(text.contains("\"title\":null"))
        #expect(text.contains("\"page\":null"))
        #expect(
            text.hasPrefix("{\"source\":\"itunes\",\"title\":null,\"updated\":null,\"count\":8,\"items\":[{\"id\":1200361736,\"title\":\"Swift by Sundell\""))
    }

    @Test func buildsRequestWithPlusForSpaces() throws {
        let p = try adapter.prepare(QueryParameters([("term", "  Swift   UI & more "), ("country", "GB"), ("explicit", "no"), ("limit", "10")]))
        #expect(p.upstreamRequest.url == "http://127.0.0.1:9/search?term=Swift+UI+%26+more&media=podcast&entity=podcast&limit=10&country=gb&explicit=No")
        let q = try adapter.prepare(QueryParameters([("limit", "10"), ("explicit", "NO"), ("country", "gb"), ("term", "swift ui & MORE")]))
        #expect(p.cacheKey == q.cacheKey)
        let d = try adapter.prepare(QueryParameters([("term", "swift")]))
        #expect(d.upstreamRequest.url.contains("limit=50&country=us"))
    }

    @Test func validation() {
        #expect(throws: ClientError.missingParameter("term")) { try adapter.prepare(QueryParameters([])) }
        #expect(throws: ClientError.missingParameter("term")) { try adapter.prepare(QueryParameters([("term", "   ")])) }
        #expect(throws: ClientError.invalidParameter("term must be between 1 and 200 characters")) {
            try adapter.prepare(QueryParameters([("term", String(repeating: "a", count: 201))]))
        }
        #expect(throws: ClientError.invalidParameter("limit must be an integer between 1 and 200")) {
            try adapter.prepare(QueryParameters([("term", "a"), ("limit", "201")]))
        }
        #expect(throws: ClientError.invalidParameter("country must be an ISO 3166-1 alpha-2 code such as us or gb")) {
            try adapter.prepare(QueryParameters([("term", "a"), ("country", "usa")]))
        }
        #expect(throws: ClientError.invalidParameter("explicit must be one of: yes, no")) {
            try adapter.prepare(QueryParameters([("term", "a"), ("explicit", "maybe")]))
        }
    }

    @Test(arguments: ["errors/truncated.json", "errors/html_500.html", "flickr/photos_public.json"])
    func badBodiesAre502(_ path: String) {
        #expect(throws: ClientError.badUpstreamResponse("itunes")) { try ITunesAdapter.normalise(fixture(path)) }
    }
}
