import FeedFormats
import Foundation
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

/// A feed of a megabyte or more has its items finished as expat reads it (`OverlappedWork`):
/// what comes out is what one by one would give, also when a later, newer item pushes out one
/// already finished (the cap keeps the newest), and for items past the first `limit`.
@Suite(.offPool) struct OverlappedNotesTests {
    @Test func aFeedFinishedAsItIsReadKeepsTheNewestWithTheirOwnNotes() throws {
        // 300 items of ~4 KB notes: listed oldest first, so each past the limit of 200 pushes out the oldest kept.
        let notes = { (i: Int) in String(repeating: "<p>Episode \(i) with <a href=\"links/\(i)\">a link</a> &amp; <em>notes</em>.</p>", count: 60) }
        let items = (0..<300).map { i in
            let date = "Wed, 01 Jan 2020 00:" + String(format: "%02d:%02d", i / 60, i % 60) + " GMT"
            return "<item><guid>g\(i)</guid><title>t\(i)</title><pubDate>\(date)</pubDate><description><![CDATA[\(notes(i))]]></description></item>"
        }
        let xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title>"# + items.joined() + "</channel></rss>"
        let feed = Array(xml.utf8)
        #expect(feed.count >= RSSParser.overlapFeedBytes, "the overlapped path: \(feed.count) bytes")
        let parsed = try RSSParser.parse(feed, limit: 200, base: "https://feeds.example/show.xml")
        #expect(parsed.reachedLimit)
        #expect(parsed.episodes.map(\.id) == (100..<300).map { "g\($0)" })
        for episode in parsed.episodes {
            let i = Int(episode.id?.dropFirst() ?? "") ?? -1
            #expect(episode.notesHtml == HTMLSanitizer.sanitize(notes(i), base: "https://feeds.example/show.xml", imageSource: nil), "item \(i)")
            #expect(episode.summary == HTMLText.plain(notes(i)), "item \(i)")
        }
    }
}
