import Primitives
import TestSupport
import Testing

/// JSON string quoting against a plain byte-by-byte reference, with every byte value at
/// every position of strings around the 8-byte steps of the fast check.
@Suite(.offPool) struct JSONBytesTests {
    static func reference(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for b in bytes {
            switch b {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0..<0x20:
                out +=
                    Array(#"\u00"#.utf8) + Array("0123456789abcdef".utf8)[Int(b >> 4)...Int(b >> 4)] + Array("0123456789abcdef".utf8)[Int(b & 15)...Int(b & 15)]
            default: out.append(b)
            }
        }
        return out + [0x22]
    }

    static func quoted(_ bytes: [UInt8]) -> [UInt8] {
        var array: [UInt8] = []
        var buffer = ByteBuffer()
        bytes.withUnsafeBufferPointer {
            JSONBytes.appendQuoted($0, to: &array)
            JSONBytes.appendQuoted($0, to: &buffer)
        }
        #expect(array == buffer.array)
        return array
    }

    @Test func everyByteAtEveryPositionIsQuotedAsTheReference() {
        for length in 1...17 {
            for position in 0..<length {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = UInt8(value)
                    let got = Self.quoted(bytes)
                    if got != Self.reference(bytes) {
                        Issue.record("length \(length), byte \(value) at \(position)")
                        return
                    }
                }
            }
        }
    }

    /// Issue 57: after the first byte to escape, the rest is also skipped eight bytes at a time
    /// (show notes with markup have a quote every few dozen bytes): several escapes, near
    /// each other and far apart, in strings of every length up to a few hundred bytes.
    @Test func manyEscapesInOneStringAreQuotedAsTheReference() {
        var rng = SplitMix(seed: 57)
        let specials: [UInt8] = [0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0x80, 0x21, 0x23]
        for _ in 0..<20_000 {
            let length = Int(rng.next() % 300)
            var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            for _ in 0..<(length == 0 ? 0 : rng.next() % 12) { bytes[Int(rng.next() % UInt64(length))] = specials[Int(rng.next() % UInt64(specials.count))] }
            if Self.quoted(bytes) != Self.reference(bytes) {
                Issue.record("\(bytes)")
                return
            }
        }
    }

    @Test func stringsWithoutEscapesAndEmptyOnes() {
        #expect(Self.quoted([]) == Array(#""""#.utf8))
        #expect(Self.quoted(Array("/podcasts/1234/episodes?limit=20".utf8)) == Array(#""/podcasts/1234/episodes?limit=20""#.utf8))
        var out: [UInt8] = []
        JSONBytes.appendQuoted("é\u{7f}\"x", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "\"é\u{7f}\\\"x\"")
    }
}
