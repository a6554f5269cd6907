import Primitives
import TestSupport
import Testing

/// The number renderers every access-log line and response head uses, against Swift's own formatting.
@Suite(.offPool) struct ByteLiteralsTests {
    static func render(_ body: (inout [UInt8]) -> Void) -> String {
        var out: [UInt8] = Array("x".utf8)  // appends after what is there
        body(&out)
        return String(decoding: out.dropFirst(), as: UTF8.self)
    }

    /// The same renderers into a `ByteBuffer` (the hot paths' sink).
    static func renderBuffer(_ body: (inout ByteBuffer) -> Void) -> String {
        var out = ByteBuffer()
        out.append(UInt8(ascii: "x"))
        body(&out)
        return String(decoding: out.array.dropFirst(), as: UTF8.self)
    }

    @Test(arguments: [
        0, 1, 9, 10, 99, 100, 999, 1000, 26_022, 1_234_567, 9_999_999, 10_000_000, 99_999_999, 100_000_000, 100_000_001,
        1_000_000_000_000, Int.max, -1, -10, Int.min,
    ])
    func decimalIsWhatSwiftPrints(_ n: Int) {
        #expect(Self.render { $0.append(decimal: n) } == String(n))
        #expect(Self.renderBuffer { $0.append(decimal: n) } == String(n))
    }

    @Test(arguments: [0, 0x9, 0xa, 0xf, 0x10, 0x0af7_6519_16cd_43dd, 0x8448_eb21_1c80_319c, UInt64.max, 0x1234_5678_9abc_def0] as [UInt64])
    func hexIsZeroPaddedLowercase(_ v: UInt64) {
        let full = String(v, radix: 16)
        let padded = String(repeating: "0", count: 16 - full.count) + full
        #expect(Self.render { $0.append(hex: v) } == padded)
        #expect(Self.render { $0.append(hex: v, digits: 2) } == String(padded.suffix(2)))
        #expect(Self.render { $0.append(hex: v, digits: 9) } == String(padded.suffix(9)))
        #expect(Self.renderBuffer { $0.append(hex: v) } == padded)
    }

    @Test func digitCountsOutsideTheRangeAreClamped() {
        #expect(Self.render { $0.append(hex: 0xabc, digits: 0) } == "c")
        #expect(Self.render { $0.append(hex: 0xabc, digits: 99) } == "0000000000000abc")
    }

    @Test func literalsAreAppendedWhole() {
        #expect(Self.render { $0.append(literal: "HTTP/1.1 200 OK\r\n") } == "HTTP/1.1 200 OK\r\n")
        #expect(Self.render { $0.append(literal: "") } == "")
    }
}
