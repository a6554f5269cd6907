import Primitives
import Testing
@testable import Feeds

@Suite struct NewsAdapterTests {
    @Test func headlinesKeepOnlySafeURLsAndDatesInRange() throws {
        let envelope = try NewsAdapter.normalise(fixture("news/top.json"))
        #expect(envelope.source == "news")
        #expect(envelope.count == 3)
        #expect(
            envelope.items[0]
                == Article(
                    title: "Swift 6.3 ships", url: "https://news.example/swift-6-3", imageUrl: "https://news.example/swift.jpg",
                    published: "2026-11-30T09:15:00Z", outlet: "Example Times"))
        // A stranger's headline: a script URL, a scheme-relative image and a five-digit year are dropped.
        #expect(envelope.items[1].url == nil)
        #expect(envelope.items[1].imageUrl == nil)
        #expect(envelope.items[1].published == nil)
        #expect(envelope.items[2].published == "2026-12-01T16:00:00Z")
    }

    @Test func oneCacheEntryPerCategory() throws {
        let adapter = NewsAdapter(url: "http://127.0.0.1:9/news/v2/top")
        #expect(try adapter.prepare(QueryParameters([])).cacheKey == adapter.prepare(QueryParameters([("category", "general")])).cacheKey)
        #expect(throws: ClientError.self) { try adapter.prepare(QueryParameters([("category", "gossip")])) }
    }
}
