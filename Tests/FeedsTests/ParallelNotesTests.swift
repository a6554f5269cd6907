import FeedFormats
import TestSupport
import Testing

@testable import Feeds

/// Issue 66: a big feed's show notes are made into summaries and sanitized HTML on every core
/// once the feed is read, and come out as they would one by one: each item its own notes, in
/// the feed's order, relative links against its own base.
@Suite(.offPool) struct ParallelNotesTests {
    @Test func aBigFeedsNotesAreEachItemsOwnAsOneByOne() throws {
        let items = (0..<120).map { i in
            let notes = String(repeating: "<p>Episode \(i) with <a href=\"links/\(i)\">a link</a> &amp; <em>notes</em>.</p>", count: 40)
            let base = i % 2 == 0 ? " xml:base=\"https://cdn\(i).example/\"" : ""
            return "<item\(base)><guid>g\(i)</guid><title>t\(i)</title><description><![CDATA[\(notes)]]></description></item>"
        }
        let xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title>"# + items.joined() + "</channel></rss>"
        let feed = Array(xml.utf8)
        let parsed = try RSSParser.parse(feed, limit: 500, base: "https://feeds.example/show.xml")
        let texts = parsed.episodes.reduce(0) { $0 + ($1.notesHtml?.utf8.count ?? 0) }
        #expect(texts >= RSSParser.parallelTextBytes, "the parallel path: \(texts) bytes of notes")
        #expect(parsed.episodes.map(\.id) == (0..<120).map { "g\($0)" })
        for (i, episode) in parsed.episodes.enumerated() {
            let notes = String(repeating: "<p>Episode \(i) with <a href=\"links/\(i)\">a link</a> &amp; <em>notes</em>.</p>", count: 40)
            let base = i % 2 == 0 ? "https://cdn\(i).example/" : "https://feeds.example/show.xml"
            #expect(episode.notesHtml == HTMLSanitizer.sanitize(notes, base: base, imageSource: nil), "item \(i)")
            #expect(episode.summary == HTMLText.plain(notes), "item \(i)")
            #expect(episode.notesHtml?.contains(base.hasPrefix("https://cdn") ? "cdn\(i).example/links/\(i)" : "feeds.example/links/\(i)") == true)
        }
    }
}
