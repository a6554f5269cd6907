import FeedFormats
import Foundation
import Primitives
import TestSupport
import Testing
@testable import Feeds

@Suite(.offPool) struct RSSParserTests {
    @Test func rssVariantsFieldByField() throws {
        let feed = try RSSParser.parse(fixture("rss/1200361736.xml"), limit: 100, base: "http://127.0.0.1:8081/rss/1200361736.xml")
        #expect(feed.title == "Swift by Sundell")
        #expect(feed.imageUrl == "http://127.0.0.1:8081/artwork/cover-3000.jpg")
        #expect(feed.episodes.count == 5)
        var first = Episode()
        first.id = "sundell-145"
        first.title = "145: Swift Concurrency & <Actors> in practice"
        first.published = "2025-11-03T14:20:05Z"
        first.audioUrl = "https://cdn.example.com/sundell/145.mp3"
        first.audioType = "audio/mpeg"
        first.audioBytes = 48_213_004
        first.duration = 3723
        first.episode = 145
        first.season = 3
        first.explicit = false
        first.imageUrl = "http://127.0.0.1:8081/artwork/logo-1400.png"
        first.summary = "John and Antoine talk about Swift concurrency & actors. Sponsored by Acme."
        first.notesHtml =
            #"<p>John and <b>Antoine</b> talk about <a href="https://swift.org" rel="nofollow noopener noreferrer">Swift</a> concurrency &amp; actors.</p><p>Sponsored by\#u{00A0}Acme.</p>"#
        first.link = "https://www.swiftbysundell.com/podcast/145"
        #expect(feed.episodes[0] == first)

        let second = feed.episodes[1]
        #expect(second.id == "https://cdn.example.com/sundell/144.mp3")  // no guid: enclosure URL
        #expect(second.published == "2025-11-04T08:00:00Z")
        #expect(second.audioBytes == nil)  // length 0 means unknown
        #expect(second.duration == 2730)
        #expect(second.explicit == true)
        #expect(second.imageUrl == "http://127.0.0.1:8081/artwork/cover-3000.jpg")  // channel image
        #expect(second.summary == "Plain <summary> text only in itunes:summary.")

        let third = feed.episodes[2]
        #expect(third.published == "2025-10-30T07:30:00Z")
        #expect(third.duration == 3725)
        #expect(third.summary == "Only content:encoded here")

        #expect(feed.episodes[3].published == "2025-10-15T14:00:00Z")
        #expect(feed.episodes[3].duration == 65)
        #expect(feed.episodes[3].audioUrl == nil)
        #expect(feed.episodes[4].published == nil)
        #expect(feed.episodes[4].duration == nil)
        #expect(feed.episodes[4].episode == nil)
    }

    @Test func atomFeed() throws {
        let feed = try RSSParser.parse(fixture("rss/1526489823.xml"), limit: 100, base: "https://feeds.example.com/rss/1526489823.xml")
        #expect(feed.title == "Swift over Coffee")
        #expect(feed.imageUrl == "https://feeds.example.com/artwork/square-600.webp")
        let e = feed.episodes[0]
        #expect(e.id == "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a")
        #expect(e.published == "2025-11-03T08:00:00Z")
        #expect(e.audioUrl == "https://cdn.example.com/coffee/12.mp3")
        #expect(e.audioBytes == 2048)
        #expect(e.link == "https://coffee.example.com/12")
        #expect(e.summary == "All about macros")
        #expect(e.duration == 1800)
        #expect(feed.episodes[1].published == "2025-10-27T09:00:00Z")
    }

    @Test(arguments: ["rss/1437212345.xml", "rss/1000123456.xml", "rss/fuzz-invalid-utf8-name.xml", "errors/truncated.json", "errors/html_500.html"])
    func brokenOrNotAFeedIs502(_ path: String) {
        #expect(throws: ClientError.badUpstreamResponse("the podcast feed")) { try RSSParser.parse(fixture(path), limit: 100) }
    }

    @Test func threeThousandItemsAndTheLimit() throws {
        var xml = "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel><title>Big</title>"
        for i in 0..<3000 {
            xml +=
                "<item><title>Episode \(i)</title><guid>g\(i)</guid><pubDate>Mon, 03 Nov 2025 14:20:05 +0000</pubDate><enclosure url=\"https://cdn.example.com/\(i).mp3\" length=\"\(i + 1)\" type=\"audio/mpeg\"/><itunes:duration>\(i)</itunes:duration><description>&lt;p&gt;text \(i)&lt;/p&gt;</description></item>"
        }
        xml += "</channel></rss>"
        let all = try RSSParser.parse(Array(xml.utf8), limit: 5000)
        #expect(all.episodes.count == 3000)
        #expect(all.episodes[2999].id == "g2999")
        #expect(all.episodes[2999].summary == "text 2999")
        let limited = try RSSParser.parse(Array(xml.utf8), limit: 100)
        #expect(limited.episodes.count == 100)
        #expect(limited.episodes.last?.title == "Episode 99")
    }

    @Test func externalEntitiesAreNotResolved() throws {
        let xml =
            "<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><rss version=\"2.0\"><channel><title>&xxe;</title><item><title>a</title></item></channel></rss>"
        let feed = try? RSSParser.parse(Array(xml.utf8), limit: 10)
        #expect(feed?.title?.contains("root:") != true)
    }

    @Test(arguments: [
        ("Mon, 03 Nov 2025 14:20:05 +0000", "2025-11-03T14:20:05Z"),
        ("Mon, 3 Nov 2025 14:20:05 GMT", "2025-11-03T14:20:05Z"),
        ("03 Nov 2025 14:20 EST", "2025-11-03T19:20:00Z"),
        ("Wed, 29 Oct 2025 23:30:00 -0800", "2025-10-30T07:30:00Z"),
        ("Sat, 01 Feb 2025 00:00:00 PDT", "2025-02-01T07:00:00Z"),
        ("Tue, 04 Nov 25 08:00:00 +05:30", "2025-11-04T02:30:00Z"),
        ("Tue, 04 November 2025 08:00:00 UT", "2025-11-04T08:00:00Z"),
        ("Tue, 04 Nov 2025 08:00:00", "2025-11-04T08:00:00Z"),
        ("2025-11-04T08:00:00+01:00", "2025-11-04T07:00:00Z"),
    ])
    func rssDates(_ input: String, _ expected: String) {
        #expect(RFC822Date.parse(input).map(Timestamp.format) == expected)
    }

    @Test(arguments: [("01:02:03", 3723), ("45:30", 2730), ("3725", 3725), ("3725.8", 3725), ("0:05", 5)])
    func durations(_ input: String, _ expected: Int) {
        #expect(EpisodeDuration.seconds(input) == expected)
    }

    @Test(arguments: ["", "n/a", "1:2:3:4", "-5", "::"])
    func badDurations(_ input: String) {
        #expect(EpisodeDuration.seconds(input) == nil)
    }

    @Test func idValidation() {
        let adapter = EpisodesAdapter(lookups: PodcastLookups(lookupURL: "http://127.0.0.1:9/lookup"), maxFeedBytes: 1 << 20, allowPrivateHosts: false)
        for bad in ["abc", "0", "-1", "1234567890123456789"] {
            #expect(throws: ClientError.invalidParameter("id must be a positive iTunes collection id")) { try adapter.prepare(QueryParameters([("id", bad)])) }
        }
        #expect(throws: ClientError.invalidParameter("limit must be an integer between 1 and 500")) {
            try adapter.prepare(QueryParameters([("id", "1"), ("limit", "501")]))
        }
    }
}

@Suite(.offPool) struct HTMLTextTests {
    @Test(arguments: [
        ("<p>Hello <b>world</b></p>", "Hello world"),
        ("a &amp; b &lt;c&gt; &#39;d&#39; &#x41; &nbsp;e", "a & b <c> 'd' A e"),
        ("  spaced\\n\\t out  ", "spaced out"),
        ("a \u{00A0} b", "a b"),
        ("unknown &bogus; and & alone", "unknown &bogus; and & alone"),
        ("5 < 6 but <br/>tag", "5 < 6 but tag"),  // a < that starts no tag is text, as in HTML5
        ("caf\u{e9} \u{6771}\u{4eac}", "caf\u{e9} \u{6771}\u{4eac}"),
    ])
    func plainText(_ html: String, _ expected: String) {
        #expect(HTMLText.plain(html.replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\t", with: "\t")) == expected)
    }
}

@Suite(.offPool) struct RSSParserRobustnessTests {
    @Test func mismatchedEndTagsNeverTrap() {
        let xml = "<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><summary>x</summry></entry></feed></feed></x>"
        #expect(throws: ClientError.self) { try RSSParser.parse(Array(xml.utf8), limit: 10) }
    }

    @Test func latin1BytesInAUTF8FeedAre502() {
        var bytes = Array("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Caf".utf8)
        bytes.append(0xE9)  // Latin-1 é: not UTF-8
        bytes += Array("</title></channel></rss>".utf8)
        let expected = ClientError(
            status: 502, code: "bad_upstream_response", message: "the podcast feed is not valid UTF-8: undecodable bytes at line 1, column 60")
        #expect(throws: expected) { try RSSParser.parse(bytes, limit: 10) }
    }
}
