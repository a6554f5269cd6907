import FeedFormats
import Foundation
import TestSupport
import Testing
@testable import Feeds

@Suite(.offPool) struct JSONParserTests {
    struct Sample: Decodable, Equatable {
        let s: String
        let i: Int
        let d: Double
        let b: Bool
        let n: String?
        let absent: Int?
        let list: [Int]
        let nested: [String: String]
    }

    @Test func decodesEveryShape() throws {
        let text = #" { "s": "a\"b\\c\/d\n\u00e9\ud83d\ude00 é", "i": -42, "d": 1.5e2, "b": true, "n": null, "list": [1, 2.0, 3e0], "nested": {"k": "v"} } "#
        let value = try JSONValueDecoder.decode(Sample.self, from: Array(text.utf8))
        #expect(value == Sample(s: "a\"b\\c/d\né😀 é", i: -42, d: 150, b: true, n: nil, absent: nil, list: [1, 2, 3], nested: ["k": "v"]))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{a:1}", "{\"a\":1,}", "tru", "nul", "01", "1.", ".5", "-", "1e", "+1",
        "\"abc", "\"a\\x\"", "\"\\u12\"", "\"\\uZZZZ\"", "\"tab\there\"", "[1] x", "NaN", "Infinity", "'single'", "\u{0}",
    ])
    func malformedInputThrows(_ text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(deep.utf8)) }
        let fine = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        #expect(throws: Never.self) { try JSONParser.parse(Array(fine.utf8)) }
    }

    @Test func typeMismatchesThrow() {
        #expect(throws: DecodingError.self) { try JSONValueDecoder.decode([Int].self, from: Array("[1.5]".utf8)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder.decode([Int].self, from: Array("[\"1\"]".utf8)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder.decode([Int8].self, from: Array("[300]".utf8)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder.decode([String: Int].self, from: Array("[]".utf8)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder.decode(Sample.self, from: Array("{}".utf8)) }
    }

    struct EveryPrimitive: Decodable, Equatable {
        let i8: Int8, i16: Int16, i32: Int32, i64: Int64, u: UInt, u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64, f: Float, d: Double, b: Bool, s: String
    }

    @Test func everyPrimitiveDecodes() throws {
        let text = #"{"i8":-8,"i16":16,"i32":32,"i64":-64,"u":1,"u8":8,"u16":16,"u32":32,"u64":64,"f":0.5,"d":2.25,"b":false,"s":"x"}"#
        let v = try JSONValueDecoder.decode(EveryPrimitive.self, from: Array(text.utf8))
        #expect(v == EveryPrimitive(i8: -8, i16: 16, i32: 32, i64: -64, u: 1, u8: 8, u16: 16, u32: 32, u64: 64, f: 0.5, d: 2.25, b: false, s: "x"))
        #expect(try JSONValueDecoder.decode([UInt8].self, from: Array("[1,255]".utf8)) == [1, 255])
        #expect(try JSONValueDecoder.decode([Float].self, from: Array("[1.5]".utf8)) == [1.5])
    }

    @Test(arguments: ["flickr/photos_public_jsonp.js", "itunes/search.json", "kiva/graphql.json", "kiva/newest.json"])
    func sameTreeAsFoundation(_ path: String) throws {
        let bytes = JSONRepair.fixInvalidEscapes(JSONRepair.stripJSONP(fixture(path)))
        let ours = try JSONParser.parse(bytes)
        let theirs = try JSONSerialization.jsonObject(with: Data(bytes))
        #expect(Self.equal(ours, theirs))
    }

    /// Random and mutated inputs: every outcome is a value or a thrown error, never a trap.
    @Test func randomAndMutatedInputsNeverTrap() {
        var rng = SystemRandomNumberGenerator()
        let seed = fixture("kiva/graphql.json")
        for round in 0..<3000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0..<64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                bytes = seed
                for _ in 0..<Int.random(in: 1...8, using: &rng) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
            }
            _ = try? JSONParser.parse(bytes)
            _ = try? KivaGraphQL.normalise(bytes, page: 1, limit: 20)
        }
    }

    static func equal(_ a: JSONValue, _ b: Any) -> Bool {
        switch a {
        case .null: return b is NSNull
        case .bool(let v): return (b as? Bool) == v
        case .number(let t): return (b as? NSNumber)?.doubleValue == Double(t)
        case .string(let s): return (b as? String) == s
        case .array(let xs):
            guard let ys = b as? [Any], ys.count == xs.count else { return false }
            return zip(xs, ys).allSatisfy { equal($0, $1) }
        case .object(let members):
            guard let dict = b as? [String: Any], dict.count == members.count else { return false }
            return members.allSatisfy { m in dict[m.key].map { equal(m.value, $0) } ?? false }
        }
    }

    /// A large object is looked up through a table (a `[String: T]` decodes every key it
    /// lists: over a linear scan that was O(n²)); the first of duplicate names still wins.
    @Test func largeObjectsDecodeByTableWithTheFirstDuplicateWinning() throws {
        var members = (0..<20_000).map { "\"k\($0)\":\"v\($0)\"" }
        members.append("\"k5\":\"late\"")
        let decoded = try JSONValueDecoder.decode([String: String].self, from: Array("{\(members.joined(separator: ","))}".utf8))
        #expect(decoded.count == 20_000)
        #expect(decoded["k19999"] == "v19999")
        #expect(decoded["k5"] == "v5")
        struct Pick: Decodable { let k3: String; let k19998: String }
        let pick = try JSONValueDecoder.decode(Pick.self, from: Array("{\(members.joined(separator: ","))}".utf8))
        #expect(pick.k3 == "v3" && pick.k19998 == "v19998")
    }
}
