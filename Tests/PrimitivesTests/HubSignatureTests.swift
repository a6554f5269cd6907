import Primitives
import TestSupport
import Testing

/// WebSub's `X-Hub-Signature`: each algorithm hubs sign with, checked against RFC 2202's and
/// RFC 4231's known answers; anything malformed or altered is not valid.
@Suite(.offPool) struct HubSignatureTests {
    let body = Array("what do ya want for nothing?".utf8)
    let key = Array("Jefe".utf8)

    @Test func knownAnswersOfEachAlgorithm() {
        #expect(HubSignature.valid("sha1=effcdf6ae5eb2fa2d27416d5f184df9c259a7c79", body: body, secret: key))
        #expect(HubSignature.valid("sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", body: body, secret: key))
        #expect(HubSignature.valid("SHA256=5BDCC146BF60754E6A042426089575C75A003F089D2739839DEC58B964EC3843", body: body, secret: key))
        #expect(
            HubSignature.valid(
                "sha384=af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649", body: body, secret: key))
        #expect(
            HubSignature.valid(
                "sha512=164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
                body: body, secret: key))
    }

    @Test func anythingElseIsNotValid() {
        let good = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        #expect(!HubSignature.valid("sha256=" + good, body: body + [0x20], secret: key), "another body")
        #expect(!HubSignature.valid("sha256=" + good, body: body, secret: Array("jefe".utf8)), "another secret")
        #expect(!HubSignature.valid("sha256=" + good.dropLast() + "4", body: body, secret: key), "one digit off")
        #expect(!HubSignature.valid("md5=" + good, body: body, secret: key), "an algorithm hubs do not use")
        #expect(!HubSignature.valid("sha1=" + good, body: body, secret: key), "the wrong length for the algorithm")
        for malformed in ["", "sha256", "sha256=", "sha256=" + good.dropLast(), "sha256=zz" + good.dropFirst(2), "=" + good, "sha256=" + good + good + good] {
            #expect(!HubSignature.valid(malformed, body: body, secret: key), "\(malformed)")
        }
    }

    @Test func hexIsLowerCaseAndWhole() {
        #expect(HubSignature.hex([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
        #expect(HubSignature.hex([]) == "")
    }
}
