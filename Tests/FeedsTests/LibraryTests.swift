import EpisodeSync
import FeedFormats
import Foundation
import Primitives
import TestSupport
import Testing
@testable import Feeds

/// Issue 59: podcasts named by feed URL (feed ids), OPML in and out, moves told.
@Suite(.offPool) struct LibraryTests {
    // MARK: feed ids

    @Test(arguments: [
        ("https://Feeds.Example.COM/show.xml", "https://feeds.example.com/show.xml"),
        ("HTTPS://feeds.example.com:443/show.xml#latest", "https://feeds.example.com/show.xml"),
        ("http://feeds.example.com:80", "http://feeds.example.com/"),
        ("http://feeds.example.com:8080/a?b=C", "http://feeds.example.com:8080/a?b=C"),
        ("feed://feeds.example.com/show.xml", "http://feeds.example.com/show.xml"),
        ("feed:https://feeds.example.com/show.xml", "https://feeds.example.com/show.xml"),
        ("itpc://feeds.example.com/show.xml", "http://feeds.example.com/show.xml"),
        ("pcast://feeds.example.com/show.xml", "http://feeds.example.com/show.xml"),
        ("  https://feeds.example.com/show.xml\n", "https://feeds.example.com/show.xml"),
    ])
    func feedURLsAreNormalised(_ given: String, _ expected: String) {
        #expect(FeedID.normalised(given) == expected)
        #expect(FeedID.normalised(expected) == expected, "normalising is idempotent")
    }

    @Test(arguments: [
        "", "/feeds/relative.xml", "feeds.example.com/show.xml", "javascript:alert(1)", "ftp://feeds.example.com/a", "data:text/xml,<rss/>",
        "https://user:secret@feeds.example.com/a", "https:///no-host", "https://:80/a", "https://feeds.example.com/" + String(repeating: "a", count: 3000),
    ])
    func otherTextIsNoFeedURL(_ given: String) {
        #expect(FeedID.normalised(given) == nil)
    }

    /// One id per feed, whoever spells it, on every replica and after every restart (a pure
    /// function of the URL): 16 digits, above iTunes' ids, within JavaScript's safe integers.
    @Test func aFeedsIDIsStableDistinctAndSafe() throws {
        let id = try #require(FeedID.id(ofFeedURL: "https://feeds.example.com/show.xml"))
        #expect(FeedID.id(ofFeedURL: "HTTPS://FEEDS.example.com:443/show.xml#x") == id)
        #expect(id == 6_064_591_148_475_887, "the derivation is part of every app's library: it never changes")
        #expect(FeedID.isFeedID(id) && !FeedID.isFeedID(1_200_361_736) && !FeedID.isFeedID(999_999_999_999_999))
        #expect(FeedID.range.upperBound < 9_007_199_254_740_992)
        var seen = Set<Int>()
        for n in 0..<20_000 {
            let other = FeedID.id(ofNormalised: "https://host\(n % 97).example/feed/\(n).xml")
            #expect(FeedID.range.contains(other))
            seen.insert(other)
        }
        #expect(seen.count == 20_000)
    }

    // MARK: OPML

    static let overcast = Array(String(decoding: fixture("library/overcast.opml"), as: UTF8.self).replacing("FIXTURES", with: "127.0.0.1:9").utf8)

    /// An Overcast export as it is: folders and playlists read through, episodes (no xmlUrl)
    /// skipped, attribute names in any case, a feed named twice one podcast, broken outlines
    /// errors of their own.
    @Test func anAppsExportIsReadOutlineByOutline() throws {
        let library = try LibraryImport(opml: Self.overcast)
        #expect(library.title == "Overcast Podcast Subscriptions")
        #expect(library.entries.count == 11)
        #expect(
            library.feeds.map(\.url) == [
                "http://127.0.0.1:9/rss/1200361736.xml", "http://127.0.0.1:9/rss/indie.xml", "http://127.0.0.1:9/rss/1526489823.xml",
                "http://127.0.0.1:9/moved/1580000001.xml", "http://127.0.0.1:9/rss/announces-move.xml", "http://127.0.0.1:9/rss/no-such-feed.xml",
                "http://127.0.0.1:9/rss/1580000002.xml",
            ])
        #expect(library.feeds.map(\.id) == library.feeds.map { FeedID.id(ofNormalised: $0.url) })
        // The duplicate (a fragment added) is the first one's podcast.
        #expect(try library.entries[3].feed.get() == 0)
        let refused = library.entries.compactMap { entry -> String? in
            if case .failure(let error) = entry.feed { return "\(entry.text ?? ""): \(error.code)" }
            return nil
        }
        #expect(refused == ["A relative link: invalid_feed_url", "Not a feed at all: invalid_feed_url", "Credentials: invalid_feed_url"])
        // A stranger's link leaves only as an absolute http(s) URL: never javascript:, relative or feed:.
        #expect(library.entries.map { $0.xmlUrl == nil } == [false, false, false, false, false, false, false, true, true, true, true])
    }

    @Test func aLibraryPastItsSizeIsImportedUpToIt() throws {
        var opml = "<opml version=\"2.0\"><body>"
        for n in 0..<(LibraryImport.maxFeeds + 3) { opml += "<outline type=\"rss\" text=\"\(n)\" xmlUrl=\"https://host.example/\(n).xml\"/>" }
        let library = try LibraryImport(opml: Array((opml + "</body></opml>").utf8))
        #expect(library.feeds.count == LibraryImport.maxFeeds)
        #expect(library.entries.suffix(3).allSatisfy { if case .failure(let e) = $0.feed { e.code == "library_too_large" } else { false } })
    }

    /// A stranger's file costs bounded work: no entity is expanded (billion laughs, XXE), no
    /// nesting past 64, no more than 5,000 outlines read, no attribute kept past 4 KiB.
    @Test func hostileOPMLIsRefusedOrBounded() throws {
        let laughs = """
            <?xml version="1.0"?><!DOCTYPE opml [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\
            <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><opml><body><outline xmlUrl="https://x.example/&c;"/></body></opml>
            """
        let external = """
            <?xml version="1.0"?><!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/passwd">]><opml><body><outline text="&x;" xmlUrl="https://x.example/a"/></body></opml>
            """
        for document in [laughs, external, "", "not xml", "<rss><channel/></rss>", "<opml><body>"] {
            #expect(throws: ClientError.self, "\(document.prefix(40))") { try LibraryImport(opml: Array(document.utf8)) }
        }
        let deep = String(repeating: "<outline>", count: 100) + String(repeating: "</outline>", count: 100)
        #expect(throws: ClientError.self) { try LibraryImport(opml: Array("<opml><body>\(deep)</body></opml>".utf8)) }
        var many = "<opml><body>"
        for n in 0..<6_000 { many += "<outline xmlUrl=\"https://host.example/\(n % 10).xml\"/>" }
        let bounded = try LibraryImport(opml: Array((many + "</body></opml>").utf8))
        #expect(bounded.entries.count == LibraryImport.maxOutlines && bounded.leftOut == 1_000 && bounded.feeds.count == 10)
        let long = try OPMLReader.read(
            Array("<opml><body><outline text=\"\(String(repeating: "t", count: 100_000))\" xmlUrl=\"https://h.example/a\"/></body></opml>".utf8),
            maxOutlines: 10)
        #expect(long.outlines.first?.text?.utf8.count == OPMLReader.maxAttributeBytes)
    }

    /// What FeedProxy writes, any app (and FeedProxy) reads back as written: titles with markup
    /// characters, quotes, line breaks and controls; the comment cannot close early.
    @Test func anExportedLibraryReadsBackAsWritten() throws {
        let feeds = [
            OPMLWriter.Feed(title: "Tom & \"Jerry\" <live>\nagain\u{1}", xmlUrl: "https://feeds.example.com/a.xml?x=1&y=2"),
            OPMLWriter.Feed(title: nil, xmlUrl: "https://feeds.example.com/b.xml"),
        ]
        let document = OPMLWriter.document(title: "Mine", created: "Fri, 04 Dec 2026 10:00:00 GMT", feeds: feeds, comment: "left out: 1 (x) -->")
        let read = try OPMLReader.read(document, maxOutlines: 10)
        #expect(read.title == "Mine")
        #expect(read.outlines.map(\.xmlUrl) == feeds.map(\.xmlUrl))
        #expect(read.outlines.map(\.text) == ["Tom & \"Jerry\" <live>\nagain", "https://feeds.example.com/b.xml"])
        #expect(read.outlines.allSatisfy { $0.type == "rss" })
    }

    /// The fuzzer's OPML property holds on real and mangled exports (every cut of the file).
    @Test func theFuzzersLibraryPropertyHoldsOnCutExports() {
        let file = Self.overcast
        for end in stride(from: 0, through: file.count, by: 7) {
            #expect(FeedFuzzing.libraryProblem(Array(file.prefix(end))) == nil)
        }
        #expect(FeedFuzzing.run(file, bodies: []) == nil)
    }

    // MARK: moves

    /// A feed that moved (a permanent redirect, or itunes:new-feed-url) names its new address
    /// and the id to keep: a feed id's podcast the new address's feed id, an iTunes one its own.
    @Test func aMoveNamesTheNewAddressAndID() throws {
        let feedID = try #require(FeedID.id(ofFeedURL: "https://old.example/rss"))
        let moved = EpisodesAdapter.movedTo(feedID, listed: "https://old.example/rss", finalURL: "https://new.example/rss", newFeedURL: nil)
        #expect(moved == MovedFeed(url: "https://new.example/rss", id: FeedID.id(ofFeedURL: "https://new.example/rss") ?? 0))
        #expect(
            EpisodesAdapter.movedTo(1_200_361_736, listed: "https://old.example/rss", finalURL: "https://old.example/rss", newFeedURL: "https://NEW.example/x")
                == MovedFeed(url: "https://new.example/x", id: 1_200_361_736))
        #expect(EpisodesAdapter.movedTo(feedID, listed: "https://old.example/rss", finalURL: "https://OLD.example:443/rss", newFeedURL: nil) == nil)
        #expect(EpisodesAdapter.movedTo(feedID, listed: "https://old.example/rss", finalURL: "https://old.example/rss", newFeedURL: "javascript:x") == nil)
        // Kept in the data, and in every answer cut from it.
        let built = try EpisodeFeedData.built(
            feed: fixture("rss/1526489823.xml"), contentType: nil, lookupTitle: nil, base: "https://old.example/rss", maxBytes: 1 << 20
        ) { _ in moved }
        let data = try #require(EpisodeFeedData(built.blob))
        #expect(data.movedTo == moved && built.channel.movedTo == moved)
        let page = try #require(data.page(podcastID: feedID, limit: 1, since: nil, cursor: nil))
        #expect(String(decoding: page.body, as: UTF8.self).contains(#""movedTo":{"url":"https://new.example/rss","id":"#))
    }

    /// A library of 500 feed ids, each at its longest position, fits the sync token's text.
    @Test func aSyncTokenHoldsALibraryOfFeedIDs() throws {
        var token = SyncToken()
        for n in 0..<EpisodeBatch.maxPodcasts {
            token[FeedID.range.upperBound - n] = SyncToken.Position(seq: .max, versionID: .max, ordinal: .max)
        }
        let text = token.encoded
        #expect(text.utf8.count <= SyncToken.maxTextBytes)
        #expect(try SyncToken.decode(text).positions.count == EpisodeBatch.maxPodcasts)
    }
}
