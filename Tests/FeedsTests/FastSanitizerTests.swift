import FeedFormats
import Foundation
import TestSupport
import Testing

@testable import Feeds

/// Issue 57: show notes with only harmless markup take `HTMLFastSanitizer`, which must give
/// byte for byte what the full path (libgumbo's HTML5 tree through the allow-list) gives, or
/// decline. Every input here goes through both; `make fuzz` does the same on arbitrary bytes.
@Suite(.offPool) struct FastSanitizerTests {
    static let base = "https://feeds.example/shows/rss.xml"
    static let proxy: @Sendable (String) -> String = { "/images?url=" + $0 }

    /// The fast path's outcome, after checking that whatever it gives is the full path's answer.
    @discardableResult
    static func compare(
        _ html: String, base: String? = base, imageSource: (@Sendable (String) -> String)? = nil, sourceLocation: SourceLocation = #_sourceLocation
    )
        -> HTMLFastSanitizer.Outcome
    {
        let fast = HTMLFastSanitizer.sanitize(html, base: base, imageSource: imageSource)
        let full = HTMLSanitizer.sanitize(html, base: base, imageSource: imageSource, fastPath: false)
        if case .sanitized(let out) = fast {
            #expect(out == full, "\(html.debugDescription.prefix(300))", sourceLocation: sourceLocation)
        }
        // The entry point gives the full path's answer either way.
        #expect(HTMLSanitizer.sanitize(html, base: base, imageSource: imageSource) == full, sourceLocation: sourceLocation)
        return fast
    }

    static func accepted(
        _ html: String, base: String? = base, imageSource: (@Sendable (String) -> String)? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            compare(html, base: base, imageSource: imageSource, sourceLocation: sourceLocation) != .declined, "declined: \(html.debugDescription.prefix(200))",
            sourceLocation: sourceLocation)
    }

    static func declined(_ html: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(compare(html, sourceLocation: sourceLocation) == .declined, "accepted: \(html.debugDescription.prefix(200))", sourceLocation: sourceLocation)
    }

    /// Show notes as the fixtures' feeds carry them (description, content:encoded, Atom
    /// summary and content), XML-decoded.
    static func fixtureNotes() -> [String] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/rss")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var notes: [String] = []
        let pattern = try! NSRegularExpression(
            pattern: "<(description|content:encoded|summary|content)(\\s[^>]*)?>(.*?)</\\1>", options: [.dotMatchesLineSeparators])
        for file in files.sorted() where file.hasSuffix(".xml") {
            let text = String(decoding: fixture("rss/" + file), as: UTF8.self)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range(at: 3), in: text) else { continue }
                notes.append(xmlDecoded(String(text[range])))
            }
        }
        return notes
    }

    static func xmlDecoded(_ xml: String) -> String {
        if xml.hasPrefix("<![CDATA["), xml.hasSuffix("]]>") { return String(xml.dropFirst(9).dropLast(3)) }
        var out = xml
        for (entity, text) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&amp;", "&")] {
            out = out.replacingOccurrences(of: entity, with: text)
        }
        return out
    }

    /// Notes as long-running shows write them (FeedBench's two feeds).
    static let publisherNotes = [
        "<p>" + String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. ", count: 70) + "</p>",
        """
        <p>In episode 12 we talk with <strong>Guest 13</strong> about the history of radio, <em>listener questions</em> and what \
        changed this week. Lorem ipsum &amp; more.</p><ul><li><a href="https://example.com/links/12/13">Link one</a></li>\
        <li><a href="https://shop.example.org/p?id=13&amp;ref=pod">Our sponsor</a></li></ul>\
        <p>Support the show at <a href="https://patreon.example/show" title="Patreon">patreon</a><br>Music by Someone.</p>
        """,
        "<p>Sponsored by&nbsp;Acme. Find us at <a href=\"/about\">our site</a> or write to <a href=\"mailto:show@example.com\">us</a>.</p>\n<p>00:00 Intro<br/>05:10 News<br />\n</p>",
        "Plain notes, no markup at all: 1 < 2 && 3 > 2, \"quoted\" and it's fine — café ☕️ 🎙",
        "<h2>Chapters</h2><ol start=\"3\"><li>One</li><li><b>Two</b></li></ol><blockquote><p>Quote</p></blockquote><hr><p><img src=\"art/1.png\" alt=\"Art\" width=\"300\" height=\"300\"></p>",
    ]

    @Test func theFixturesNotesAgreeAndMostTakeTheFastPath() {
        let notes = Self.fixtureNotes() + Self.publisherNotes
        #expect(notes.count >= 15, "\(notes.count) notes found")
        var fast = 0
        for html in notes {
            for base in [nil, Self.base] {
                for imageSource in [nil, Self.proxy] where Self.compare(html, base: base, imageSource: imageSource) != .declined {
                    fast += 1
                }
            }
        }
        // The fixtures' hostile notes (script, div, legacy references) take the full path.
        #expect(fast >= 4 * (Self.publisherNotes.count + 6), "\(fast / 4) of \(notes.count) on the fast path")
        for html in Self.publisherNotes { Self.accepted(html) }
    }

    @Test func theShowNotesTestsInputsAgree() {
        let inputs = [
            """
            <p>Hello <b>world</b> &amp; <a href="/links" onclick="steal()" style="color:red">links</a></p>
            <script>alert(1)</script><style>p{}</style><iframe src="https://evil.example"></iframe>
            <ul><li>one<li>two</ul><img src="cover.png" alt="Cover" onerror="x()" width="300"><img src="javascript:alert(1)">
            <a href="javascript:alert(1)">bad link</a><svg><script>alert(2)</script></svg><div class="x">kept text</div>
            <p>unclosed <em>emphasis
            """,
            "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">", "<svg><p><style><img src=x onerror=alert(1)></style></p></svg>",
            "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>", "<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
            "<a href=\"&#106;avascript:alert(1)\">x</a>", "<img src=\"https://ok.example/a.png\"/onerror=alert(1)>",
            "<<script>script>alert(1)<</script>/script>", "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>",
            "<!--><img src=x onerror=alert(1)>-->", String(repeating: "<div>", count: 2_000) + "text",
            String(repeating: "<p>" + String(repeating: "x", count: 100) + "</p>", count: 5_000),
        ]
        for html in inputs {
            Self.compare(html)
        }
        // Its hostile URLs, in links and images the fast path takes.
        for url in [
            "javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "java\tscript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=",
            "vbscript:msgbox(1)", "file:///etc/passwd", "https://user:pw@evil.example/x", "http://", "https://exa mple.com/&quot;onload=x",
        ] {
            let html = "<p><a href=\"\(url)\">link</a><img src=\"\(url)\"></p>"
            if url.contains("&") {
                Self.compare(html)
            } else {
                Self.accepted(html)
                Self.accepted(html, imageSource: Self.proxy)
            }
        }
    }

    /// The character `scalar` (noncharacters have no literal).
    static func u(_ scalar: UInt32) -> String { String(Character(Unicode.Scalar(scalar)!)) }

    /// Each rule of the fast path, with an input just inside it (taken, the same output) and one
    /// just outside (declined: the full path answers).
    @Test func eachDeclineRuleHasItsEdge() {
        let u = Self.u
        let maxTags = HTMLSanitizer.maxTags, maxInput = HTMLSanitizer.maxInputBytes, maxOutput = HTMLSanitizer.maxOutputBytes
        let pairs: [(inside: String, outside: String)] = [
            // Size bounds: input, `<` count, output, depth.
            (String(repeating: " ", count: maxInput - 8) + "<p>x</p>", String(repeating: " ", count: maxInput - 7) + "<p>x</p>"),
            (String(repeating: "<b>x</b>", count: maxTags / 2), String(repeating: "<b>x</b>", count: maxTags / 2) + "<3"),
            ("<p>" + String(repeating: "y", count: maxOutput - 2_000) + "</p>", "<p>" + String(repeating: "y", count: maxOutput + 10) + "</p>"),
            (String(repeating: "<b>", count: HTMLFastSanitizer.maxDepth) + "deep", String(repeating: "<b>", count: HTMLFastSanitizer.maxDepth + 1) + "deep"),
            // Characters HTML5 rewrites.
            ("a\tb\nc\u{0C}d", "a\0b"), ("a\nb", "a\rb"), ("a\u{A0}b", "a\u{85}b"), ("a~b", "a\u{7F}b"), ("a\u{FFFD}b", "a\(u(0xFFFF))b"),
            ("a\u{FDCF}b", "a\(u(0xFDD0))b"), ("a\u{FDF0}b", "a\(u(0xFDEF))b"),
            ("a\u{10FFFD}b", "a\(u(0x10FFFF))b"), ("a\u{1FFFD}b", "a\(u(0x1FFFE))b"), ("<a title=\"\u{FE0F}\">x</a>", "<a title=\"\(u(0xFFFE))\">x</a>"),
            ("a b", "a\u{0B}b"),
            // Markup other than tags.
            ("a< b", "a<!-- c -->b"), ("a<3 b", "a<?php x ?>b"), ("a<b>c</b>", "a</ b>"), ("x<p>y</p>", "x</>y"), ("a<", "<!DOCTYPE html>a"),
            // The elements known, and nesting as written.
            ("<sup>x</sup><sub>y</sub><small>z</small>", "<div>x</div>"), ("<code>x</code>", "<pre>x</pre>"), ("<b><i>x</i></b>", "<b><i>x</b></i>"),
            (
                "<a href=\"https://a.example/\">x</a><a href=\"https://b.example/\">y</a>",
                "<a href=\"https://a.example/\">x<a href=\"https://b.example/\">y</a></a>"
            ),
            ("<p>x</p><ul><li>y</li></ul>", "<p>x<ul><li>y</li></ul></p>"), ("<p>x</p><hr>", "<p>x<hr></p>"),
            ("<p><b>x</b></p><p>y</p>", "<p><b>x<p>y</p></b></p>"),
            ("<p>x</p><blockquote>q</blockquote>", "<p>x<blockquote>q</blockquote></p>"), ("<p>x</p><h3>t</h3>", "<p>x<h3>t</h3></p>"),
            ("<ol><li>x</li></ol>", "<li>x</li>"), ("<ul><li><b>x</b></li></ul>", "<ul><b><li>x</li></b></ul>"),
            ("<ul><li>a</li><li>b</li></ul>", "<ul><li>a<li>b</ul>"),
            ("<h1>a</h1><h2>b</h2>", "<h1>a<h2>b</h2></h1>"), ("<h2><b>a</b></h2>", "<h2><b>a<h4>b</h4></b></h2>"),
            ("<p>x</p>", "x</p>"), ("a<br>b", "a</br>b"), ("a<br/>b<img src=\"https://i.example/a.png\" />", "<p/>x"), ("<b>x</b >", "<b>x</b class=y>"),
            ("<span>x</span>", "<b>x</span>"), ("<p>x", "<p>x</P"),
            // Character references.
            ("&amp;&lt;&gt;&quot;&apos;&#39;&nbsp;&#x41;&#233;&#x1F600;&#0065;", "&#150;"), ("&#x7E;", "&#x80;"), ("&#xA0;", "&#x9F;"), ("&#33;", "&#32;"),
            ("&#xD7FF;", "&#xD800;"), ("&#x10FFFD;", "&#x110000;"), ("&#xFDCF;", "&#xFDD0;"), ("&#x1FFFD;", "&#x1FFFE;"), ("&#65;", "&#65"), ("&#x41;", "&#0;"),
            ("&copy;".replacingOccurrences(of: "copy", with: "amp"), "&copy;"), ("&amp;", "&amp"), ("&lt;", "&AMP;"), ("AT&T", "&copy 2025"),
            ("a&b=2", "&ampx;"),
            ("a & b", "a &#b"), ("a&", "&notit;"), ("x &bogus; y", "x &notin y"),
            // Attributes.
            ("<a href=\"https://a.example/?a=1&amp;b=2\">x</a>", "<a href=\"https://a.example/?a=1&copy=2\">x</a>"),
            ("<a href=\"https://a.example/?a=1&b=2\">x</a>", "<a href=\"https://a.example/?a=1&lt;2\">x</a>"),
            ("<a href='https://a.example/' title=\"T 'q'\">x</a>", "<a href=\"https://a.example/\"title=\"T\">x</a>"),
            ("<a href=https://a.example/x>x</a>", "<a href=https://a.example/\"x>x</a>"), ("<p class = \"c\">x</p>", "<p class=>x</p>"),
            ("<p data-x_y:z=1>x</p>", "<p data.x=1>x</p>"), ("<p hidden>x</p>", "<p \"x\">x</p>"),
            ("<img src=\"https://i.example/a.png\" alt=x/>", "<img src=\"https://i.example/a.png\"/ alt=x>"),
            ("<p>x</p>", "<p>x</p"),
        ]
        for (inside, outside) in pairs {
            Self.accepted(inside)
            Self.declined(outside)
        }
    }

    /// What the full path does that the fast one must match: whitespace, case, quoting,
    /// duplicate and dropped attributes, unwrapped and dropped elements, what counts as visible.
    @Test func itWritesWhatTheWriterWrites() {
        let cases: [(String, String?)] = [
            ("  \n\t\u{0C}<p>x</p>  ", "<p>x</p>  "), (" x ", "x "), ("   ", nil), ("", nil), ("<p> </p>", nil), ("<p>&nbsp;</p>", nil),
            ("<p>\u{2003}</p>", nil),
            ("<P CLASS='a'>x</P>", "<p>x</p>"),
            ("<A HREF=\"https://a.example/\">x</A>", "<a href=\"https://a.example/\" rel=\"nofollow noopener noreferrer\">x</a>"),
            (
                "<a href=https://first.example/ href=https://second.example/ title='t \"1\"' title=2>x</a>",
                "<a href=\"https://first.example/\" title=\"t &quot;1&quot;\" rel=\"nofollow noopener noreferrer\">x</a>"
            ),
            ("<p class=\"c\" style='x' onclick=y>t</p>", "<p>t</p>"), ("<a href=\"javascript:alert(1)\">t</a>", "t"), ("<a>t</a>", "t"),
            ("<a href=\"mailto:x@y.example\">m</a>", "<a href=\"mailto:x@y.example\" rel=\"nofollow noopener noreferrer\">m</a>"),
            ("<img src=\"javascript:x\">", nil), ("<img>", nil), ("a<span>b</span>c", "abc"),
            ("<img src=\"/a.png\" width=\" 20 \" height=0>", "<img src=\"https://feeds.example/a.png\" width=\"20\">"),
            ("<ol start=\"-3\"><li>x</li></ol>", "<ol start=\"-3\"><li>x</li></ol>"),
            ("1 < 2 > 0 \"q\" 'a' & b", "1 &lt; 2 &gt; 0 &quot;q&quot; &#39;a&#39; &amp; b"), ("&#x2014;&#39;&apos;&quot;", "—&#39;&#39;&quot;"),
            ("<b>unclosed <i>both", "<b>unclosed <i>both</i></b>"), ("<p>\u{301}</p>", "<p>\u{301}</p>"),
        ]
        for (html, expected) in cases {
            Self.accepted(html)
            #expect(HTMLSanitizer.sanitize(html, base: Self.base) == expected, "\(html.debugDescription)")
        }
        Self.accepted("<img src=\"a.png\" alt=\"A\">", imageSource: Self.proxy)
        #expect(
            HTMLSanitizer.sanitize("<img src=\"a.png\">", base: Self.base, imageSource: Self.proxy)
                == "<img src=\"/images?url=https://feeds.example/shows/a.png\">")
    }

    /// Random notes from pieces of every kind, through both paths.
    @Test func randomNotesAgree() {
        let pieces = [
            "<p>", "</p>", "<b>", "</b>", "<strong>", "</strong>", "<i>", "</i>", "<em>", "</em>", "<u>", "</u>", "<s>", "</s>", "<code>", "</code>",
            "<small>", "</small>", "<sub>", "</sub>", "<sup>", "</sup>", "<span class=x>", "</span>", "<ul>", "</ul>", "<ol start=\" 3\">", "</ol>", "<li>",
            "</li>", "<h1>", "</h1>", "<h2>", "</h2>", "<blockquote>", "</blockquote>", "<hr>", "<br>", "<br/>", "<BR />", "</br>",
            "<a href=\"https://x.example/a?b=1&amp;c=2\">", "<a href=/rel>", "<a href='javascript:alert(1)'>",
            "<a href=\"mailto:a@b.example\" title=\"T&quot;\">",
            "<a>", "</a>", "<img src=\"pic.png\" alt=\"A\" width=\"10\" height=0>", "<img src=x>", "<img>", "<div>", "</div>", "<!-- c -->",
            "<script>x</script>",
            " ", "  ", "\n", "\t", "text", "Word", "é", "\u{A0}", "\u{301}", "☕️", "&amp;", "&lt;", "&gt;", "&nbsp;", "&#39;", "&#x2014;", "&#150;", "&copy",
            "&copy;", "&AMP;", "&amp", "&", "&#", "AT&T", "a&b=2", "<", ">", "\"", "'", "<3", "< p>", "</ p>", "\r", "\0", "&bogus;", "<p/>", "<P CLASS='a'>",
            "<a href=\"x\" href=\"https://y.example/\">", "<a HREF=https://z.example/>", "<p", "<a href=\"", "=", "/", "</", "<table>", "<td>",
        ]
        var rng = SplitMix(seed: 57)
        var taken = 0
        for _ in 0..<4_000 {
            var html = ""
            for _ in 0..<(rng.next() % 14) { html += pieces[Int(rng.next() % UInt64(pieces.count))] }
            if Self.compare(html, imageSource: rng.next() % 2 == 0 ? nil : Self.proxy) != .declined { taken += 1 }
        }
        #expect(taken > 400, "\(taken) of 4000 on the fast path")
    }

    @Test func theFastPathKnowsOnlyAllowedElementsButSpan() {
        for kind in HTMLFastSanitizer.Kind.allCases where kind != .span {
            #expect(HTMLSanitizer.allowedElements.contains(kind.name), "\(kind.name)")
            var written: [UInt8] = []
            kind.appendName(to: &written)
            #expect(written == Array(kind.name.utf8))
        }
        #expect(!HTMLSanitizer.allowedElements.contains("span") && !HTMLSanitizer.droppedWithContent.contains("span"))
    }
}
