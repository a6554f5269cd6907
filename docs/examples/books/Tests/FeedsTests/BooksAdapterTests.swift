import Primitives
import Testing
@testable import Feeds

@Suite struct BooksAdapterTests {
    @Test func editionsKeepOnlySafeURLsAndPagesInRange() throws {
        let envelope = try BooksAdapter.normalise(fixture("books/editions.json"), ids: ["OL7353617M", "OL1M", "OL9M"])
        #expect(envelope.source == "books")
        #expect(envelope.count == 2, "an edition the answer does not name is left out")
        #expect(
            envelope.items[0]
                == Book(
                    id: "OL7353617M", title: "Fantastic Mr. Fox", authors: ["Roald Dahl"], published: "October 1, 1988", pages: 96,
                    coverUrl: "https://covers.openlibrary.org/b/id/6498519-L.jpg", url: "https://openlibrary.org/books/OL7353617M/Fantastic_Mr._Fox"))
        // A stranger's edition: a script URL, a scheme-relative cover and a negative page count are dropped.
        #expect(envelope.items[1].url == nil)
        #expect(envelope.items[1].coverUrl == nil)
        #expect(envelope.items[1].pages == nil)
        #expect(envelope.items[1].authors == ["Someone"])
    }

    @Test func oneCacheEntryPerSetOfEditions() throws {
        let adapter = BooksAdapter(url: "http://127.0.0.1:9/books/api/books", asking: .several)
        let one = try BooksAdapter(url: "http://127.0.0.1:9/books/api/books", asking: .one).prepare(QueryParameters([("id", "OL7353617M")]))
        #expect(one.cacheKey == (try adapter.prepare(QueryParameters([("ids", "OL7353617M,OL7353617M")]))).cacheKey)
        #expect(
            try adapter.prepare(QueryParameters([("ids", "OL1M,OL7353617M")])).cacheKey
                == adapter.prepare(QueryParameters([("ids", "OL7353617M"), ("ids", "OL1M")])).cacheKey)
        #expect(one.upstreamRequest.url.hasSuffix("bibkeys=OLID:OL7353617M&format=json&jscmd=data"))
        for bad in ["OL0M", "OL12W", "ol1m", "OL1M;", ""] {
            #expect(throws: ClientError.self, "\(bad)") { try adapter.prepare(QueryParameters([("ids", bad)])) }
        }
        #expect(throws: ClientError.self, "one route's parameter is not the other's") { try adapter.prepare(QueryParameters([("id", "OL1M")])) }
        #expect(throws: ClientError.self) { try adapter.prepare(QueryParameters([("ids", (1...21).map { "OL\($0)M" }.joined(separator: ","))])) }
    }
}
