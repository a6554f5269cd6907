import FeedFormats
import Foundation
import TestSupport
import Testing
@testable import Feeds

/// A feed is written by a stranger: every URL it carries comes out absolute http(s) or not
/// at all, and show notes come out as HTML rebuilt from a real HTML5 parse through an allow-list.
@Suite(.offPool) struct ShowNotesTests {
    static let base = "https://feeds.example/shows/rss.xml"

    static func feed(_ item: String, channel: String = "") -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:content="http://purl.org/rss/1.0/modules/content/">
            <channel><title>Show</title>\(channel)<item><title>One</title>\(item)</item></channel></rss>
            """.utf8)
    }

    static func episode(_ item: String, channel: String = "") throws -> Episode {
        try #require(RSSParser.parse(feed(item, channel: channel), limit: 10, base: base).episodes.first)
    }

    @Test(arguments: [
        "javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "java\tscript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=",
        "vbscript:msgbox(1)", "file:///etc/passwd", "https://user:pw@evil.example/x", "http://", "https://exa mple.com/\"onload=x",
    ])
    func hostileURLsNeverComeOutInAnyField(_ url: String) throws {
        let escaped = url.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
        let e = try Self.episode(
            """
            <link>\(escaped)</link><enclosure url="\(escaped)" type="audio/mpeg" length="1"/><itunes:image href="\(escaped)"/>
            """, channel: "<link>\(escaped)</link><image><url>\(escaped)</url></image>")
        #expect(e.link == nil && e.audioUrl == nil && e.imageUrl == nil, "\(url): \(e)")
        let r = try RSSParser.parse(Self.feed("", channel: "<link>\(escaped)</link><image><url>\(escaped)</url></image>"), limit: 1, base: Self.base)
        #expect(r.link == nil && r.imageUrl == nil)
    }

    @Test func relativeReferencesResolveAgainstTheFeedsFinalURL() throws {
        let e = try Self.episode(#"<link>/ep/1</link><enclosure url="../audio/1.mp3" type="audio/mpeg" length="5"/><itunes:image href="img/cover.jpg"/>"#)
        #expect(e.link == "https://feeds.example/ep/1")
        #expect(e.audioUrl == "https://feeds.example/audio/1.mp3")
        #expect(e.imageUrl == "https://feeds.example/shows/img/cover.jpg")
        // Without a base a relative reference has no meaning: dropped.
        let none = try #require(RSSParser.parse(Self.feed("<link>/ep/1</link>"), limit: 1).episodes.first)
        #expect(none.link == nil)
    }

    @Test func atomXMLBaseIsHonoured() throws {
        let atom = Array(
            """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://cdn.example/podcast/">
              <title>A</title><logo>art/logo.png</logo>
              <entry xml:base="episodes/"><title>E</title><id>1</id>
                <link rel="alternate" href="1.html"/><link rel="enclosure" href="1.mp3" type="audio/mpeg" length="3"/></entry>
            </feed>
            """.utf8)
        let r = try RSSParser.parse(atom, limit: 5, base: "https://other.example/feed.atom")
        #expect(r.imageUrl == "https://cdn.example/podcast/art/logo.png")
        #expect(r.episodes.first?.link == "https://cdn.example/podcast/episodes/1.html")
        #expect(r.episodes.first?.audioUrl == "https://cdn.example/podcast/episodes/1.mp3")
    }

    @Test func resolutionFollowsRFC3986Examples() {
        // RFC 3986 §5.4.1 and §5.4.2, on an http base.
        let base = "http://a/b/c/d;p?q"
        let cases: [(String, String?)] = [
            ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"), ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"),
            (";x", "http://a/b/c/;x"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
            ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"), ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"),
            ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g:h", nil), ("HTTPS://Example.COM/x", "https://Example.COM/x"),
        ]
        for (ref, expected) in cases { #expect(URLReference.absolute(ref, base: base) == expected, "\(ref)") }
    }

    @Test func showNotesKeepTheMarkupAppsNeedAndNothingElse() throws {
        let notes = """
            <p>Hello <b>world</b> &amp; <a href="/links" onclick="steal()" style="color:red">links</a></p>
            <script>alert(1)</script><style>p{}</style><iframe src="https://evil.example"></iframe>
            <ul><li>one<li>two</ul><img src="cover.png" alt="Cover" onerror="x()" width="300"><img src="javascript:alert(1)">
            <a href="javascript:alert(1)">bad link</a><svg><script>alert(2)</script></svg><div class="x">kept text</div>
            <p>unclosed <em>emphasis
            """
        let e = try Self.episode("<content:encoded><![CDATA[\(notes)]]></content:encoded><description>plain</description>")
        let html = try #require(e.notesHtml)
        for banned in ["<script", "alert", "onclick", "onerror", "style", "<iframe", "javascript:", "<svg", "class="] {
            #expect(!html.contains(banned), "\(banned) in \(html)")
        }
        #expect(html.contains(#"<a href="https://feeds.example/links" rel="nofollow noopener noreferrer">links</a>"#), "\(html)")
        #expect(html.contains("<ul><li>one</li><li>two</li></ul>"))
        #expect(html.contains(#"<img src="https://feeds.example/shows/cover.png" alt="Cover" width="300">"#))
        #expect(html.contains("bad link") && html.contains("kept text") && html.contains("&amp;"))
        #expect(html.hasSuffix("<p>unclosed <em>emphasis</em></p>"), "\(html)")
        #expect(html.contains("kept text<br>"))
        #expect(HTMLSanitizer.violation(in: html) == nil)
        #expect(e.summary == "plain")
    }

    @Test func mutationTricksDoNotSurviveTheParse() {
        // Classic sanitizer bypasses: markup that a tag scanner and a browser read differently.
        let tricky = [
            "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">", "<svg><p><style><img src=x onerror=alert(1)></style></p></svg>",
            "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>", "<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
            "<a href=\"&#106;avascript:alert(1)\">x</a>", "<img src=\"https://ok.example/a.png\"/onerror=alert(1)>",
            "<<script>script>alert(1)<</script>/script>",
            "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>", "<!--><img src=x onerror=alert(1)>-->",
        ]
        for input in tricky {
            guard let out = HTMLSanitizer.sanitize(input, base: "https://feeds.example/") else { continue }
            #expect(HTMLSanitizer.violation(in: out) == nil, "\(input) → \(out)")
            #expect(!out.lowercased().contains("onerror") || out.contains("&lt;"), "\(input) → \(out)")
            #expect(!out.lowercased().contains("javascript:"), "\(input) → \(out)")
        }
    }

    @Test func deepAndHugeNotesAreBounded() {
        let deep = String(repeating: "<div>", count: 50_000) + "text"
        _ = HTMLSanitizer.sanitize(deep, base: nil)
        let wide = String(repeating: "<p>" + String(repeating: "x", count: 100) + "</p>", count: 5_000)
        let out = HTMLSanitizer.sanitize(wide, base: nil) ?? ""
        #expect(out.utf8.count <= HTMLSanitizer.maxOutputBytes + 16)
    }
}

/// The podcastindex.org namespace and Apple's episode tags, typed and validated
/// (Fixtures/rss/1580000008.xml, served by `--fixtures` as podcast 1580000008).
@Suite(.offPool) struct PodcastNamespaceTests {
    static let base = "https://feeds.example.com/shows/1580000008.rss"

    @Test func theSamplerFeedGivesExactlyTheNamespaceFields() throws {
        let out = try EpisodesAdapter.render(feed: fixture("rss/1580000008.xml"), contentType: nil, lookupTitle: nil, limit: 10, base: Self.base)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.body)) as? [String: Any])
        #expect(json["podcastGuid"] as? String == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
        #expect(json["locked"] as? Bool == true)
        #expect(json["newFeedUrl"] as? String == "https://feeds.example.net/sampler.xml")
        #expect(json["link"] as? String == "https://feeds.example.com/sampler")
        #expect(json["imageUrl"] as? String == "https://feeds.example.com/shows/art/cover.jpg")
        let funding = try #require(json["funding"] as? [[String: Any]])
        #expect(funding.count == 1 && funding[0]["url"] as? String == "https://example.com/donate" && funding[0]["text"] as? String == "Support the show!")
        let hosts = try #require(json["persons"] as? [[String: Any]])
        #expect(
            hosts.count == 1 && hosts[0]["name"] as? String == "Ada Host" && hosts[0]["role"] as? String == "host" && hosts[0]["group"] as? String == "cast")
        let items = try #require(json["items"] as? [[String: Any]])
        let e = items[0]
        #expect(e["episodeType"] as? String == "full")
        #expect(e["seasonName"] as? String == "Season of Tags")
        #expect(e["link"] as? String == "https://feeds.example.com/shows/episodes/3")
        #expect(e["audioUrl"] as? String == "https://feeds.example.com/media/3.mp3")
        let transcripts = try #require(e["transcripts"] as? [[String: Any]])
        #expect(transcripts.map { $0["url"] as? String } == ["https://example.com/ep3/transcript.vtt", "https://feeds.example.com/shows/ep3/transcript.json"])
        #expect(
            transcripts[0]["type"] as? String == "text/vtt" && transcripts[0]["language"] as? String == "en" && transcripts[0]["rel"] as? String == "captions")
        #expect(transcripts[1]["language"] is NSNull)
        let chapters = try #require(e["chapters"] as? [String: Any])
        #expect(chapters["url"] as? String == "https://example.com/ep3/chapters.json" && chapters["type"] as? String == "application/json+chapters")
        let persons = try #require(e["persons"] as? [[String: Any]])
        #expect(persons.map { $0["name"] as? String } == ["Grace Guest", "Ada Host"])
        #expect(
            persons[0]["role"] as? String == "guest" && persons[0]["group"] as? String == "cast" && persons[0]["href"] as? String == "https://example.com/grace"
        )
        #expect(persons[1]["role"] as? String == "host" && persons[1]["href"] is NSNull)
        let soundbites = try #require(e["soundbites"] as? [[String: Any]])
        #expect(soundbites.count == 1)
        #expect(soundbites[0]["start"] as? Double == 73 && soundbites[0]["duration"] as? Double == 60 && soundbites[0]["title"] as? String == "The best minute")
        let notes = try #require(e["notesHtml"] as? String)
        #expect(notes.contains(#"<a href="https://feeds.example.com/relative" rel="nofollow noopener noreferrer">a relative one</a>"#))
        #expect(notes.contains(#"<img src="https://feeds.example.com/shows/img/chart.png" alt="A chart">"#))
        #expect(!notes.contains("javascript") && !notes.contains("onclick") && !notes.contains("<script"))
        // The trailer's hostile link, enclosure and image come out as nothing.
        let trailer = items[1]
        #expect(trailer["episodeType"] as? String == "trailer")
        #expect(trailer["link"] is NSNull && trailer["audioUrl"] is NSNull)
        #expect(trailer["imageUrl"] as? String == "https://feeds.example.com/shows/art/cover.jpg")  // the channel's, not vbscript:
        #expect((trailer["transcripts"] as? [Any])?.isEmpty == true && trailer["chapters"] is NSNull)
    }
}

/// The same rule on the APIs' fields: iTunes, Flickr and Kiva URLs are absolute http(s) or null.
@Suite(.offPool) struct APIURLFieldTests {
    static let hostile = "javascript:alert(1)"

    @Test func iTunesURLFieldsFollowTheRule() throws {
        let body = Array(
            """
            {"resultCount":1,"results":[{"collectionId":7,"collectionName":"X","feedUrl":"\(Self.hostile)","artworkUrl600":"data:image/png;base64,AA",
            "artworkUrl100":"https://is1.example/100.jpg","collectionViewUrl":"vbscript:x"}]}
            """.utf8)
        let p = try #require(try ITunesAdapter.normalise(body).items.first)
        #expect(p.feedUrl == nil && p.storeUrl == nil)
        #expect(p.artworkUrl == "https://is1.example/100.jpg")
    }

    @Test func flickrURLFieldsFollowTheRule() throws {
        let body = Array(
            """
            {"title":"t","items":[{"title":"a","link":"\(Self.hostile)","media":{"m":"javascript:alert(2)//_m.jpg"},"tags":""}]}
            """.utf8)
        let photo = try #require(try FlickrAdapter.normalise(body, limit: 5).items.first)
        #expect(photo.link == nil && photo.imageUrl == nil && photo.largeImageUrl == nil && photo.images == nil)
    }

    @Test func kivaImageURLsFollowTheRule() throws {
        let body = Array(
            """
            {"data":{"lend":{"loans":{"totalCount":1,"values":[{"id":5,"name":"N","image":{"url":"\(Self.hostile)"}}]}}}}
            """.utf8)
        let loan = try #require(try KivaGraphQL.normalise(body, page: 1, limit: 5).items.first)
        #expect(loan.imageUrl == nil && loan.images == nil)
    }
}
