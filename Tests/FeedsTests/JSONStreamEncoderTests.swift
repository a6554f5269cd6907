import Foundation
import TestSupport
import Testing
@testable import Feeds

@Suite(.offPool) struct JSONStreamEncoderTests {
    struct Sample: Encodable {
        let text: String
        let missing: String?
        let numbers: [Double]
        let nested: [String: Int]
        let flag: Bool
        let empty: [String]
    }

    @Test func writesKeysInOrderWithNullsEscapesAndNumbers() throws {
        let value = Sample(
            text: "quote \" backslash \\ slash / newline \n tab \t bell \u{7} café 東京 😀", missing: nil,
            numbers: [875, 0.1, -2.5, 1e20], nested: ["a": 1], flag: true, empty: [])
        let text = String(decoding: try FeedJSON.encode(value), as: UTF8.self)
        #expect(
            text
                == #"{"text":"quote \" backslash \\ slash / newline \n tab \t bell \u0007 café 東京 😀","missing":null,"numbers":[875,0.1,-2.5,1e+20],"nested":{"a":1},"flag":true,"empty":[]}"#
        )
        #expect((try JSONSerialization.jsonObject(with: Data(text.utf8))) is [String: Any])
    }

    /// JSON has no NaN or infinity: the last guard writes null instead of failing the answer (issue 19).
    @Test func nonFiniteNumbersAreNull() throws {
        #expect(String(decoding: try FeedJSON.encode([Double.nan, .infinity, -.infinity, 1.5]), as: UTF8.self) == "[null,null,null,1.5]")
    }

    /// The same document as Foundation's encoder, except that absent values are explicit nulls.
    @Test(arguments: ["flickr", "itunes", "kiva"])
    func sameDocumentAsFoundationsEncoder(_ source: String) throws {
        let ours: [UInt8]
        let foundation: Data
        switch source {
        case "flickr":
            let env = try FlickrAdapter.normalise(fixture("flickr/photos_public.json"), limit: 20)
            ours = try FeedJSON.encode(env)
            foundation = try JSONEncoder().encode(env)
        case "itunes":
            let env = try ITunesAdapter.normalise(fixture("itunes/search.json"))
            ours = try FeedJSON.encode(env)
            foundation = try JSONEncoder().encode(env)
        default:
            let env = try KivaGraphQL.normalise(fixture("kiva/graphql.json"), page: 1, limit: 20)
            ours = try FeedJSON.encode(env)
            foundation = try JSONEncoder().encode(env)
        }
        let a = Self.droppingNulls(try JSONSerialization.jsonObject(with: Data(ours))) as? NSDictionary
        let b = try JSONSerialization.jsonObject(with: foundation) as? NSDictionary
        #expect(a != nil && a == b)
        #expect(String(decoding: ours, as: UTF8.self).contains(":null"))
    }

    static func droppingNulls(_ value: Any) -> Any {
        if let dict = value as? [String: Any] { return dict.filter { !($0.value is NSNull) }.mapValues(droppingNulls) }
        if let array = value as? [Any] { return array.map(droppingNulls) }
        return value
    }

    struct Widths: Encodable {
        let a: Int8, b: Int16, c: Int32, d: Int64, e: UInt, f: UInt8, g: UInt16, h: UInt32, i: UInt64
        let list: [Int8]
        let maybe: UInt16?
    }

    /// Each integer width has its own overload: one left to the generic path came back to it
    /// through its own `encode(to:)` and recursed until the stack ran out.
    @Test func everyIntegerWidthIsWrittenAsANumber() throws {
        let v = Widths(a: -8, b: -16, c: -32, d: -64, e: 1, f: 8, g: 16, h: 32, i: 64, list: [-1, 2], maybe: 7)
        #expect(
            String(decoding: try FeedJSON.encode(v), as: UTF8.self)
                == #"{"a":-8,"b":-16,"c":-32,"d":-64,"e":1,"f":8,"g":16,"h":32,"i":64,"list":[-1,2],"maybe":7}"#)
        #expect(String(decoding: try FeedJSON.encode([UInt32.max]), as: UTF8.self) == "[4294967295]")
    }
}
