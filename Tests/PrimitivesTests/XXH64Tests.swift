import Primitives
import TestSupport
import Testing

@Suite(.offPool) struct XXH64Tests {
    /// The published algorithm's values (checked against the reference implementation, Python's
    /// `xxhash` package, when XXH64 was hand-written; libxxhash now gives the same): every
    /// replica, on any CPU, gives the same bytes the same ETag.
    @Test(arguments: [
        ("", 0xEF46_DB37_51D8_E999 as UInt64),
        ("a", 0xD24E_C4F1_A98C_6E5B),
        ("abc", 0x44BC_2CF5_AD77_0999),
        ("FeedProxy", 0x770C_20D9_F54E_093A),
        ("0123456789abcdef0123456789abcdef", 0x642A_9495_8E71_E6C5),
    ])
    func knownValues(_ text: String, _ expected: UInt64) {
        #expect(XXH64.hash(Array(text.utf8)) == expected)
    }

    /// Every tail length after the 32-byte stripes (8-byte words, a 4-byte word, single bytes).
    @Test func stripesWordsAndTailTogether() {
        let bytes = (0..<3).flatMap { _ in (0...255).map { UInt8($0) } } + Array("xyz1234".utf8)
        #expect(XXH64.hash(bytes) == 0x559E_A82A_FE8F_46C9)
        #expect(XXH64.hash((0..<45).map { UInt8($0) }) == 0x10FD_D84D_6409_ABDF)  // a stripe, an 8-byte word, a 4-byte word, a byte
        #expect(XXH64.hash((0..<63).map { UInt8($0) }) == 0xE26A_A9E2_A95F_8E4F)  // a stripe, three words, 7 bytes
    }

    /// Parts added one after another hash as their concatenation, whatever their types.
    @Test func theHasherHashesItsPartsConcatenated() {
        var h = XXH64.Hasher()
        #expect(h.value == 0xEF46_DB37_51D8_E999)
        h.add("Feed".utf8)
        h.add([UInt8]())
        h.add(Array("Pr".utf8)[...])
        withUnsafeBytes(of: UInt8(ascii: "o")) { h.add($0) }
        h.add(CollectionOfOne(UInt8(ascii: "x")))
        h.add("y".utf8)
        #expect(h.value == 0x770C_20D9_F54E_093A)
        #expect(h.hex == "770c20d9f54e093a")
        #expect(XXH64.hex(0xAB) == "00000000000000ab")
    }

    @Test func theETagIsTheHashAndTheLength() {
        #expect(ETag.strong(for: Array("abc".utf8)) == "\"44bc2cf5ad770999-3\"")
        #expect(ETag.strong(for: []) == "\"ef46db3751d8e999-0\"")
    }
}
