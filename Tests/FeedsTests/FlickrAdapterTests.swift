import FeedFormats
import Primitives
import TestSupport
import Testing
@testable import Feeds

@Suite(.offPool) struct FlickrAdapterTests {
    let adapter = FlickrAdapter(feedURL: "http://127.0.0.1:9/services/feeds/photos_public.gne")

    @Test func normalisesEveryFieldOfTheFirstItem() throws {
        let envelope = try FlickrAdapter.normalise(fixture("flickr/photos_public.json"), limit: 20)
        #expect(envelope.source == "flickr")
        #expect(envelope.title == "Uploads from everyone")
        #expect(envelope.updated == "2025-11-03T14:20:05Z")
        #expect(envelope.count == 20)
        #expect(envelope.page == nil)
        let p = envelope.items[0]
        #expect(p.id == "53301234567")
        #expect(p.title == "Sunset over the Golden Gate")
        #expect(p.link == "https://www.flickr.com/photos/12345678@N00/53301234567/")
        #expect(p.imageUrl == "https://live.staticflickr.com/65535/53301234567_a1b2c3d4e5_m.jpg")
        #expect(p.largeImageUrl == "https://live.staticflickr.com/65535/53301234567_a1b2c3d4e5_b.jpg")
        #expect(p.author == "Jane Doe")
        #expect(p.authorId == "12345678@N00")
        #expect(p.tags == ["sunset", "goldengate", "sanfrancisco"])
        #expect(p.published == "2025-11-03T14:20:05Z")
        #expect(p.taken == "2025-11-03T14:12:33Z")  // -08:00 applied
        #expect(p.description?.hasPrefix(" <p><a href=\"https://www.flickr.com/people/12345678@N00/\">Jane Doe</a>") == true)
    }

    @Test func repairsInvalidEscapesAndOldAuthorForm() throws {
        let items = try FlickrAdapter.normalise(fixture("flickr/photos_public.json"), limit: 20).items
        #expect(items[1].title == "Bob's \"best\" shot \\ o'clock")
        #expect(items[1].author == "Old Style Name")
        #expect(items[1].tags == [])
        #expect(items[1].taken == "2025-11-03T14:59:59Z")  // +09:00 applied
        #expect(items[1].description == " <p>Café “Zürich” — 東京</p> ")
        #expect(items[2].title == "")
        #expect(items[2].author == "Ünïcødé 😀")
    }

    @Test func jsonpWrapperIsStripped() throws {
        let plain = try FlickrAdapter.normalise(fixture("flickr/photos_public.json"), limit: 20)
        let wrapped = try FlickrAdapter.normalise(fixture("flickr/photos_public_jsonp.js"), limit: 20)
        #expect(plain.items == wrapped.items)
    }

    @Test func jsonpWithAnEmptyCallbackNameIsStripped() throws {
        let plain = try FlickrAdapter.normalise(fixture("flickr/photos_public.json"), limit: 20)
        let wrapped = try FlickrAdapter.normalise(fixture("flickr/photos_public_jsonp_empty.js"), limit: 20)
        #expect(wrapped.count == 20)
        #expect(plain.items == wrapped.items)
    }

    @Test(arguments: [
        ("({\"a\":1})", "{\"a\":1}"),
        (" \n( {\"a\":1} );\n", " {\"a\":1} "),
        ("jsonFlickrFeed({\"a\":1})", "{\"a\":1}"),
        ("cb ({\"a\":1})", "{\"a\":1}"),
        ("/**/ cb({\"a\":1});", "{\"a\":1}"),
        ("{\"a\":1}", "{\"a\":1}"),
        ("(", "("),
        ("()", ""),
    ])
    func jsonpWrappers(_ body: String, _ inner: String) {
        #expect(String(decoding: JSONRepair.stripJSONP(Array(body.utf8)), as: UTF8.self) == inner)
    }

    @Test func limitTruncates() throws {
        #expect(try FlickrAdapter.normalise(fixture("flickr/photos_public.json"), limit: 3).count == 3)
    }

    @Test(arguments: ["errors/truncated.json", "errors/wrong_shape.json", "errors/html_500.html", "kiva/graphql.json"])
    func badBodiesAre502(_ path: String) {
        #expect(throws: ClientError.badUpstreamResponse("flickr")) { try FlickrAdapter.normalise(fixture(path), limit: 20) }
    }

    @Test func buildsUpstreamURLAndCanonicalKey() throws {
        let a = try adapter.prepare(QueryParameters([("tags", "Cat, dog ,cat"), ("tagmode", "ANY"), ("limit", "5"), ("junk", "x")]))
        #expect(
            a.upstreamRequest.url == "http://127.0.0.1:9/services/feeds/photos_public.gne?format=json&nojsoncallback=1&lang=en-us&tags=cat%2Cdog&tagmode=any")
        let b = try adapter.prepare(QueryParameters([("limit", "5"), ("tagmode", "any"), ("tags", "dog,CAT")]))
        #expect(a.cacheKey == b.cacheKey)
        let c = try adapter.prepare(QueryParameters([("id", "12345678@N00"), ("ids", "2@N01,1@N02"), ("lang", "de-de")]))
        #expect(c.upstreamRequest.url.hasSuffix("lang=de-de&id=12345678%40N00&ids=1%40N02%2C2%40N01"))
    }

    @Test(arguments: [
        ("limit", "0", "limit must be an integer between 1 and 20"),
        ("limit", "21", "limit must be an integer between 1 and 20"),
        ("limit", "abc", "limit must be an integer between 1 and 20"),
        ("limit", "-1", "limit must be an integer between 1 and 20"),
        ("tagmode", "some", "tagmode must be one of: all, any"),
        ("id", "bob", "id must be Flickr user ids like 12345678@N00"),
        ("ids", "1@N00,x", "ids must be Flickr user ids like 12345678@N00"),
        ("lang", "xx-yy", "lang must be one of: de-de, en-us, es-us, fr-fr, it-it, ko-kr, pt-br, zh-hk"),
    ])
    func invalidParameters(_ name: String, _ value: String, _ message: String) {
        #expect(throws: ClientError.invalidParameter(message)) { try adapter.prepare(QueryParameters([(name, value)])) }
    }

    @Test func authorNameForms() {
        #expect(FlickrAdapter.displayName("nobody@flickr.com (\"Jane (JD) Doe\")") == "Jane (JD) Doe")
        #expect(FlickrAdapter.displayName("nobody@flickr.com (Plain)") == "Plain")
        #expect(FlickrAdapter.displayName("nobody@flickr.com") == nil)
        #expect(FlickrAdapter.displayName("nobody@flickr.com (\"\")") == nil)
    }

    @Test func escapeRepairLeavesValidEscapesAlone() {
        let input = Array(#"{"a":"x\'y","b":"\\'","c":"\"'"}"#.utf8)
        #expect(String(decoding: JSONRepair.fixInvalidEscapes(input), as: UTF8.self) == #"{"a":"x'y","b":"\\'","c":"\"'"}"#)
    }
}
