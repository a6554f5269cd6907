import FeedFormats
import Foundation
import Primitives
import Testing
import TestSupport
@testable import Feeds

/// Numbers and dates from feeds anyone can publish (issue 19): out of range is null (or the
/// item dropped where it has no identity), never a trap and never a failed answer.
@Suite(.offPool) struct HostileInputTests {
    @Test func aFeedOfOutOfRangeValuesRendersWithNulls() throws {
        let json = try EpisodesAdapter.render(feed: fixture("rss/1580000007.xml"), contentType: nil, lookupTitle: nil, limit: 50).body
        let parsed = try RSSParser.parse(fixture("rss/1580000007.xml"), limit: 50)
        let e = parsed.episodes
        #expect(e.count == 4)
        #expect(e[0].published == nil)  // year 999999999999
        #expect(e[0].audioBytes == nil)  // 23 digits
        #expect(e[0].episode == nil)  // Int.max + 1
        #expect(e[0].season == nil)  // negative
        #expect(e[0].duration == nil)  // parts past 59, longer than 31 days
        #expect(e[1].published == nil)  // +99:99
        #expect(e[2].published == nil)  // 31 February
        #expect(e[2].episode == nil)  // 1e400
        #expect(e[3].published == "2025-11-04T08:20:05Z")  // -1800 is the widest offset allowed
        #expect(e[3].audioBytes == 1234)
        #expect(e[3].episode == 4)
        #expect((try JSONSerialization.jsonObject(with: Data(json))) is [String: Any])
    }

    @Test(
        arguments: [
            ("Mon, 03 Nov 999999999999 14:20:05 +0000", nil),
            ("Mon, 03 Nov 2025 14:20:05 +99:99", nil),
            ("Mon, 03 Nov 2025 14:20:05 +1900", nil),
            ("Mon, 03 Nov 2025 14:20:05 +1801", nil),
            ("Mon, 03 Nov 2025 14:20:05 +0060", nil),
            ("Mon, 03 Nov 2025 14:20:05 +-100", nil),
            ("Mon, 03 Nov 2025 14:20:05 -18:00", "2025-11-04T08:20:05Z"),
            ("Mon, 03 Nov 2025 14:20:05 +1800", "2025-11-02T20:20:05Z"),
            ("Sat, 29 Feb 2025 00:00:00 GMT", nil),
            ("Thu, 29 Feb 2024 00:00:00 GMT", "2024-02-29T00:00:00Z"),
            ("Mon, 01 Jan 0001 00:00:00 +0000", "0001-01-01T00:00:00Z"),
            ("Mon, 01 Jan 0001 00:00:00 +0100", nil),  // before year 1 in UTC
            ("Fri, 31 Dec 9999 23:59:59 -0100", nil),  // after 9999 in UTC
            ("Fri, 31 Dec 9999 23:59:59 +0000", "9999-12-31T23:59:59Z"),
            ("Mon, 03 Nov 5 14:20:05 +0000", nil),
            ("Mon, 03 Nov 125 14:20:05 +0000", "2025-11-03T14:20:05Z"),  // RFC 5322 obsolete 3-digit year
            ("Mon, 03 Nov 2025 99999999999999999999:00 +0000", nil),
            ("Mon, 03 Nov 2025 14:20:05:07 +0000", nil),
            ("Mon, 9223372036854775807 Nov 2025 14:20:05 +0000", nil),
        ] as [(String, String?)])
    func rssDatesInRangeOrNil(_ input: String, _ expected: String?) {
        #expect(RFC822Date.parse(input).map(Timestamp.format) == expected)
    }

    @Test(
        arguments: [
            ("2025-11-03T14:20:05+99:99", nil), ("2025-11-03T14:20:05+18:00", "2025-11-02T20:20:05Z"), ("2025-11-03T14:20:05-18:01", nil),
            ("2025-02-29T00:00:00Z", nil), ("0000-01-01T00:00:00Z", nil), ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
            ("2025-04-31T00:00:00Z", nil),
        ] as [(String, String?)])
    func isoDatesInRangeOrNil(_ input: String, _ expected: String?) {
        #expect(Timestamp.iso8601UTC(input) == expected)
    }

    /// The property both parsers promise, over many random and near-valid inputs: a time in
    /// `Timestamp.range` or nil (a trap would end the test process).
    @Test func dateParsersKeepTheirRange() {
        var rng = SplitMix(seed: 19)
        let pieces = [
            "Mon, ", "03 ", "31 ", "Nov ", "Feb ", "2025 ", "999999999999 ", "0001 ", "9999 ", "25 ", "14:20:05 ", "23:59:60 ", "99:99:99 ",
            "+0000", "-1800", "+99:99", "+18:00", "GMT", "EST", "-", ":", "9223372036854775807", "T", "Z", "2025-11-03T14:20:05", ".123", " ",
        ]
        var parsed = 0
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<Int(rng.next() % 8) { text += pieces[Int(rng.next() % UInt64(pieces.count))] }
            for candidate in [RFC822Date.parse(text), Timestamp.parseISO8601(text)] {
                guard let t = candidate else { continue }
                parsed += 1
                #expect(Timestamp.range.contains(t), "\(text)")
            }
        }
        #expect(parsed > 100)  // the generator does reach valid dates
    }

    @Test func kivaNumbersOutOfRangeAreNull() throws {
        let body = Array(
            """
            {"data":{"lend":{"loans":{"totalCount":9223372036854775807,"values":[
              {"id":1,"loanAmount":"1e400","loanFundraisingInfo":{"fundedAmount":"-5"},"borrowerCount":99999999999999999999,
               "lenders":{"totalCount":-1},"fundraisingDate":"2025-11-03T14:00:05+99:99"},
              {"id":9223372036854775808,"name":"no identity"},
              {"id":3,"loanAmount":"NaN","loanFundraisingInfo":{"fundedAmount":1e400}},
              {"id":4,"loanAmount":"-0","loanFundraisingInfo":{"fundedAmount":"150.00"}}
            ]}}}}
            """.utf8)
        let env = try KivaGraphQL.normalise(body, page: 1, limit: 20)
        #expect(env.page == nil)  // a total past Int32.max is no page count
        #expect(env.items.map(\.id) == [1, 3, 4])  // the id past Int.max has no identity: dropped
        #expect(env.items[0].amount == nil)
        #expect(env.items[0].fundedAmount == nil)
        #expect(env.items[0].borrowerCount == nil)
        #expect(env.items[0].lenderCount == nil)
        #expect(env.items[0].postedAt == nil)
        #expect(env.items[1].amount == nil)
        #expect(env.items[1].fundedAmount == nil)
        #expect(env.items[2].amount == 0)
        #expect(env.items[2].fundedAmount == 150)
        let json = String(decoding: try FeedJSON.encode(env), as: UTF8.self)
        #expect(json.contains(#""amount":null"#))
        #expect(!json.contains("-0"))
    }

    @Test func kivaRESTPagingOutOfRangeIsNull() throws {
        let body = Array(
            #"{"paging":{"page":1,"total":9223372036854775807,"page_size":20,"pages":99999999999999999999},"loans":[{"id":5,"loan_amount":1e400}]}"#.utf8)
        let env = try KivaREST.normalise(body)
        #expect(env.page == nil)
        #expect(env.items.first?.amount == nil)
    }

    /// What real upstreams send where the schema says otherwise: optional fields take it or
    /// read as absent, and the rest of the answer stands.
    @Test func optionalFieldsOfTheWrongShapeAreNullNotAFailedAnswer() throws {
        let kiva = Array(
            #"{"data":{"lend":{"loans":{"totalCount":"2","values":[{"id":7,"borrowerCount":"3","lenders":[],"name":42,"loanAmount":{"x":1},"tags":"none","geocode":"Lima"}]}}}}"#
                .utf8)
        let env = try KivaGraphQL.normalise(kiva, page: 1, limit: 20)
        let loan = try #require(env.items.first)
        #expect(loan.id == 7 && loan.borrowerCount == 3 && loan.lenderCount == nil && loan.name == "42" && loan.amount == nil)
        #expect(loan.tags.isEmpty && loan.country == nil)
        #expect(env.page?.total == 2)
        let itunes = Array(#"{"resultCount":1,"results":[{"collectionId":9,"trackCount":"12","collectionName":true,"genres":"Tech"}]}"#.utf8)
        let podcast = try #require(try ITunesAdapter.normalise(itunes).items.first)
        #expect(podcast.id == 9 && podcast.episodeCount == 12 && podcast.title == nil && podcast.genres.isEmpty)
    }

    @Test func pageCountNeverOverflows() {
        #expect(PageInfo(number: 1, size: 100, total: Int.max).pages == Int.max / 100 + 1)
        #expect(PageInfo(number: 1, size: 20, total: 0).pages == 0)
        #expect(PageInfo(number: 1, size: 20, total: 41).pages == 3)
    }

    @Test func itunesOutOfRangeNumbers() throws {
        let body = Array(
            #"{"resultCount":3,"results":[{"collectionId":99999999999999999999,"collectionName":"dropped"},{"collectionId":7,"trackCount":9223372036854775807},{"collectionId":-4}]}"#
                .utf8)
        let env = try ITunesAdapter.normalise(body)
        #expect(env.items.map(\.id) == [7])
        #expect(env.items[0].episodeCount == nil)
    }

    @Test(
        arguments: [("90:00", 5400), ("1:75:00", nil), ("744:00:00", 2_678_400), ("744:00:01", nil), ("999999999:999999999:999999999", nil)] as [(String, Int?)]
    )
    func durationsInRange(_ input: String, _ expected: Int?) {
        #expect(EpisodeDuration.seconds(input) == expected)
    }
}
