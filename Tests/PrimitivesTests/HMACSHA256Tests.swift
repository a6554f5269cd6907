import Primitives
import TestSupport
import Testing

@Suite(.offPool) struct HMACSHA256Tests {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }

    /// FIPS 180-4's examples (libcrypto's SHA-256 through the Swift API).
    @Test func sha256KnownAnswers() {
        #expect(hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// RFC 4231's test cases 1, 2, 6 (a key longer than a block) and 7.
    @Test func hmacKnownAnswers() {
        #expect(
            hex(HMACSHA256(key: [UInt8](repeating: 0x0b, count: 20)).mac(Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            hex(HMACSHA256(key: Array("Jefe".utf8)).mac(Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let longKey = [UInt8](repeating: 0xaa, count: 131)
        #expect(
            hex(HMACSHA256(key: longKey).mac(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(
            hex(
                HMACSHA256(key: longKey).mac(
                    Array(
                        "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                            .utf8))) == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    /// An empty key and message (no pointer to hand libcrypto), and messages given as a string's
    /// UTF-8 or a collection with no contiguous storage, sign as their bytes do.
    @Test func emptyAndNonContiguousInputs() {
        #expect(hex(HMACSHA256(key: [UInt8]()).mac([UInt8]())) == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        let jefe = HMACSHA256(key: "Jefe".utf8)
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        #expect(hex(jefe.mac("what do ya want for nothing?".utf8)) == expected)
        #expect(hex(jefe.mac("what do ya want for nothing?".utf8.lazy.map { $0 })) == expected)
    }

    @Test func comparisonIsExact() {
        #expect(HMACSHA256.equal([1, 2, 3], [1, 2, 3]))
        #expect(!HMACSHA256.equal([1, 2, 3], [1, 2, 4]))
        #expect(!HMACSHA256.equal([1, 2, 3], [1, 2]))
        #expect(HMACSHA256.equal([], []))
    }
}
