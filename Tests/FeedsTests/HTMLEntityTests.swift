import FeedFormats
import TestSupport
import Testing
@testable import Feeds

@Suite(.offPool) struct HTMLEntityTests {
    @Test func everyHTML5NameIsKnown() {
        #expect(HTMLEntities.count == 2231)
        #expect(HTMLEntities.value(named: "CounterClockwiseContourIntegral;") == "\u{2233}")
        #expect(HTMLEntities.value(named: "NotNestedLessLess;") == "\u{2AA1}\u{338}")
        #expect(HTMLEntities.value(named: "amp") == "&")  // legacy: also without `;`
        #expect(HTMLEntities.value(named: "hellip") == nil)  // not legacy: needs its `;`
    }

    @Test(arguments: [
        ("Juli&aacute;n Mart&iacute;nez", "Julián Martínez"),
        ("wait&hellip; &mdash; what&rsquo;s &ldquo;this&rdquo;?", "wait… — what’s “this”?"),
        ("a&nbsp;&nbsp;b", "a b"),
        ("&NotNestedLessLess; &Aring;ngstr&ouml;m &euro;5 &frac12; &times; &Scaron;", "\u{2AA1}\u{338} Ångström €5 ½ × Š"),
        ("fish &amp chips &copy 2025 &eacutex", "fish & chips © 2025 éx"),
        ("&notit; &notin;", "¬it; ∉"),
        ("&AMP; &Amp; &bogus; &", "& &Amp; &bogus; &"),
        ("&#233;&#xE9;&#XE9;&#233 x", "éééé x"),
        ("&#0; &#xD800; &#x110000; &#99999999999;", "\u{FFFD} \u{FFFD} \u{FFFD} \u{FFFD}"),
        ("&#150; &#x80; &#x9D;", "– € \u{9D}"),
        ("&#; &#x; &#abc", "&#; &#x; &#abc"),
    ])
    func references(_ html: String, _ text: String) {
        #expect(HTMLText.plain(html) == text)
    }

    @Test(arguments: [
        ("<p>One</p><p>Two</p>", "One Two"),
        ("Juli<b>á</b>n", "Julián"),
        ("a<br>b<br/>c", "a b c"),
        ("x<script>var s = \"</p>\"; if (a < b) {}</script>y", "xy"),
        ("x<SCRIPT type=\"text/javascript\">alert(1)</SCRIPT >y<style>p { color: red }</style>z", "xyz"),
        ("<a href=\"/q?a>b\" title='x>y'>link</a>", "link"),
        ("before<!-- a <p>comment</p> -->after", "beforeafter"),
        ("<!DOCTYPE html><?xml version=\"1.0\"?>text", "text"),
        ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2"),
        ("unterminated <script>never closed", "unterminated"),
        ("  lots \n\n of \t space\u{A0} ", "lots of space"),
    ])
    func tagsAndWhitespace(_ html: String, _ text: String) {
        #expect(HTMLText.plain(html) == text)
    }

    @Test func namedEntitiesInAFeed() throws {
        let feed = try RSSParser.parse(fixture("rss/1580000004.xml"), limit: 10)
        #expect(feed.episodes[0].title == "Julián Martínez & the Lost Maps")
        #expect(feed.episodes[0].summary == "Julián Martínez on cartography… — and why “north” wasn’t always up.")
        #expect(feed.episodes[1].title == "Café Society")
        #expect(
            feed.episodes[1].summary
                == "Paris 1923: Renée, François & the «cafés» – €5 × 3 ½ \u{2AA1}\u{338} ’—– © 2025 &bogus; Sponsored by Acme™.")
    }
}
