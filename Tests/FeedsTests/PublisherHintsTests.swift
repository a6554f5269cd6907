import Primitives
import TestSupport
import Testing

@testable import Feeds

/// Issue 58: what a publisher says about reading its feed again — its WebSub hub and topic,
/// and how long it may be kept — read from the HTTP answer and the feed, kept with its data,
/// and respected by the refresh cadence.
@Suite(.offPool) struct PublisherHintsTests {
    static func data(_ channel: String, headers: [(String, String)] = [], gap: Int = 3600, now: Int = 1_800_000_000) throws -> EpisodeFeedData {
        var xml = #"<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" "#
        xml += #"xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>Show</title>"# + channel
        for i in 0..<6 {
            xml += "<item><guid>e\(i)</guid><title>e\(i)</title><pubDate>\(Timestamp.format(now - 600 - i * gap))</pubDate></item>"
        }
        xml += "</channel></rss>"
        let blob = try EpisodeFeedData.build(
            feed: Array(xml.utf8), contentType: nil, lookupTitle: nil, base: "https://feeds.example/show.xml", maxBytes: 1 << 20,
            hints: PublisherHints(headers: headers, now: now))
        return try #require(EpisodeFeedData(blob))
    }

    @Test func theFeedNamesItsHubTopicAndInterval() throws {
        let d = try Self.data(
            #"<atom:link rel="hub" href="https://pubsubhubbub.example/"/><atom:link rel="self" href="/show.xml"/><ttl>90</ttl>"#
                + "<sy:updatePeriod>daily</sy:updatePeriod><sy:updateFrequency>4</sy:updateFrequency>")
        #expect(d.hints.hub == "https://pubsubhubbub.example/")
        #expect(d.hints.topic == "https://feeds.example/show.xml", "resolved against the feed's URL")
        #expect(d.hints.interval == 6 * 3600, "four times a day outlasts a 90-minute ttl")
        #expect(try Self.data("<ttl>90</ttl>").hints.interval == 5400)
        #expect(try Self.data("").hints == PublisherHints())
    }

    @Test func theHTTPAnswerComesFirst() throws {
        let d = try Self.data(
            #"<atom:link rel="hub" href="https://doc-hub.example/"/><atom:link rel="self" href="https://feeds.example/doc.xml"/>"#,
            headers: [
                ("Link", #"<https://header-hub.example/>; rel="hub", <https://feeds.example/show.xml>; rel="self""#),
                ("Cache-Control", "public, max-age=600"),
            ])
        #expect(d.hints.hub == "https://header-hub.example/" && d.hints.topic == "https://feeds.example/show.xml")
        #expect(d.hints.interval == 600)
        // Discovery stops where a hub is named: the headers' topic alone does not pair with the feed's hub.
        let docHub = try Self.data(
            #"<atom:link rel="hub" href="https://doc-hub.example/"/><atom:link rel="self" href="https://feeds.example/doc.xml"/>"#,
            headers: [("Link", #"<https://feeds.example/show.xml>; rel="self""#)])
        #expect(docHub.hints.hub == "https://doc-hub.example/" && docHub.hints.topic == "https://feeds.example/doc.xml")
        let commas = PublisherHints.links(#"<https://hub.example/a,b>; rel="hub", <https://feeds.example/x.xml?q=1,2>; rel="self alternate""#)
        #expect(commas.map(\.url) == ["https://hub.example/a,b", "https://feeds.example/x.xml?q=1,2"], "\(commas)")
        let expires = PublisherHints(headers: [("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Expires", "Sun, 06 Nov 1994 09:49:37 GMT")])
        #expect(expires.interval == 3600)
        #expect(PublisherHints(headers: [("Expires", "0")]).interval == nil, "an invalid or past Expires says nothing")
        #expect(PublisherHints(headers: [("Cache-Control", "max-age=99999999")]).interval == PublisherHints.maxInterval, "at most a day")
    }

    @Test func hostileHintsAreIgnored() throws {
        let d = try Self.data(
            #"<atom:link rel="hub" href="javascript:alert(1)"/><atom:link rel="self" href="ftp://x/"/><ttl>-5</ttl><ttl>99999999</ttl>"#
                + "<sy:updatePeriod>fortnightly</sy:updatePeriod><sy:updateFrequency>0</sy:updateFrequency>")
        #expect(d.hints == PublisherHints())
        let links = PublisherHints.links(#"<javascript:x>; rel=hub, <https://ok.example/>; rel="self hub", garbage, <>; rel=self"#)
        #expect(links.map(\.url) == ["https://ok.example/"] && links.first?.rels == ["self", "hub"])
        #expect(PublisherHints.links(String(repeating: "<https://a.example/>; rel=hub,", count: 1000)).isEmpty, "an oversized header is not read")
    }

    /// The publisher's interval is a floor on the cadence (an hourly show read every 3 minutes
    /// otherwise), above the longest bound too, up to a day.
    @Test func theCadenceNeverReadsMoreOftenThanThePublisherAsks() throws {
        let now = 1_800_000_000, bounds = 120.0...1800.0
        #expect(EpisodeCadence.refreshInterval(try Self.data("", now: now), now: Double(now), within: bounds) == 180)
        #expect(EpisodeCadence.refreshInterval(try Self.data("<ttl>30</ttl>", now: now), now: Double(now), within: bounds) == 1800)
        #expect(EpisodeCadence.refreshInterval(try Self.data("<ttl>120</ttl>", now: now), now: Double(now), within: bounds) == 7200)
        #expect(EpisodeCadence.refreshInterval(try Self.data("<ttl>1</ttl>", now: now), now: Double(now), within: bounds) == 180)
    }
}
