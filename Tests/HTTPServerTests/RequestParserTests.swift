import TestSupport
import Testing
@testable import HTTPServer

/// Valid requests: each must parse to the given method, target and body.
@Suite(.offPool) struct ValidRequestTests {
    static let cases: [(String, String, String, String)] = [
        ("GET / HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/", ""),
        ("GET /photos?tags=cat HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/photos?tags=cat", ""),
        ("HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n", "HEAD", "/x", ""),
        ("GET / HTTP/1.0\r\n\r\n", "GET", "/", ""),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-Empty:\r\n\r\n", "GET", "/", ""),
        ("GET / HTTP/1.1\r\nHost:a\r\n\r\n", "GET", "/", ""),
        ("GET / HTTP/1.1\r\nHost: a \t\r\n\r\n", "GET", "/", ""),
        ("\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/", ""),
        ("GET http://example.com/photos?x=1 HTTP/1.1\r\nHost: example.com\r\n\r\n", "GET", "/photos?x=1", ""),
        ("GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n", "GET", "/", ""),
        ("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "OPTIONS", "*", ""),
        ("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", "POST", "/p", "hello"),
        ("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", "POST", "/p", ""),
        ("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", "POST", "/p", "abc"),
        ("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc", "POST", "/p", "abc"),
        ("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "POST", "/p", "hello"),
        ("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", "POST", "/p", "abcde"),
        ("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", "POST", "/p", "0123456789"),
        ("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\n\r\n", "POST", "/p", "hello"),
        ("POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n", "POST", "/p", "hello"),
        ("GET /a%20b HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/a%20b", ""),
        ("GET / HTTP/1.1\r\nHost: a\r\nUser-Agent: caf\u{e9}\r\n\r\n", "GET", "/", ""),
        ("DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n", "DELETE", "/x", ""),
        ("GET /?q=a+b&x=%2F HTTP/1.1\r\nHost: a\r\n\r\n", "GET", "/?q=a+b&x=%2F", ""),
        ("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", "GET", "/", ""),
        ("GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n", "GET", "/", ""),
        ("GET / HTTP/1.1\r\nHost: my-host.example%2D\r\n\r\n", "GET", "/", ""),
        ("GET / HTTP/1.1\r\nHost:\r\n\r\n", "GET", "/", ""),  // empty: no authority
    ]

    @Test(arguments: 0..<cases.count)
    func parses(_ i: Int) {
        let (raw, method, target, body) = Self.cases[i]
        #expect(parseAll(raw) == .ok(method: method, target: target, body: body))
        #expect(parseAll(raw, feedBytewise: true) == .ok(method: method, target: target, body: body))
    }
}

/// Malformed requests: each must be refused with exactly this status.
@Suite(.offPool) struct MalformedRequestTests {
    static let longTarget = "/" + String(repeating: "a", count: 9000)
    static let manyHeaders = (0..<101).map { "X-H\($0): v\r\n" }.joined()
    static let hugeHeader = "X-Big: " + String(repeating: "b", count: 33 * 1024) + "\r\n"

    static let cases: [(String, Int)] = [
        ("GET / HTTP/1.1\r\n\r\n", 400),  // missing Host
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),  // two Hosts
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),  // space before colon
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n  folded\r\n\r\n", 400),  // obs-fold
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\tfolded\r\n\r\n", 400),  // obs-fold with tab
        ("GET / HTTP/1.1\r\nHost: a\rX: 1\r\n\r\n", 400),  // bare CR
        ("GET / HTTP/1.1\nHost: a\r\n\r\n", 400),  // bare LF
        ("GET / HTTP/1.1\r\nHost: a\u{0}b\r\n\r\n", 400),  // NUL in value
        ("GET / HTTP/1.1\r\nHost: a\u{1}\r\n\r\n", 400),  // control byte
        ("GET / HTTP/1.1\r\nHost: a\u{7f}\r\n\r\n", 400),  // DEL
        ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),  // RFC 9112 §3.2: not a uri-host
        ("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", 400),
        ("GET / HTTP/1.0\r\nHost: a\"b\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: caf\u{e9}\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHo\u{1}st: a\r\n\r\n", 400),  // control in name
        ("GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n: empty\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nX(y): 1\r\nHost: a\r\n\r\n", 400),  // separator in name
        ("GET /  HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // two spaces
        (" GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // leading space
        ("GET\r\nHost: a\r\n\r\n", 400),
        ("GET /\r\nHost: a\r\n\r\n", 400),  // HTTP/0.9 style
        ("GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", 400),
        ("G@T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // bad method char
        ("GET / http/1.1\r\nHost: a\r\n\r\n", 400),  // lowercase version
        ("GET / HTTP/1\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/1.10\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505),
        ("GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505),
        ("GET x HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // not origin-form
        ("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // * only for OPTIONS
        ("GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // invalid escape
        ("GET /a%2 HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // truncated escape
        ("GET /?q=%G1 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET /\u{e9} HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // raw non-ASCII in target
        ("GET ftp://x/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n", 413),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nZ\r\nhello\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n200000\r\n", 413),
        ("GET / HTTP/1.1\r\nHost: a\r\nExpect: something\r\n\r\n", 417),
        ("GET \(longTarget) HTTP/1.1\r\nHost: a\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: a\r\n\(manyHeaders)\r\n", 431),
        ("GET / HTTP/1.1\r\nHost: a\r\n\(hugeHeader)\r\n", 431),
    ]

    @Test(arguments: 0..<cases.count)
    func refused(_ i: Int) {
        let (raw, status) = Self.cases[i]
        #expect(parseAll(raw) == .status(status), "case \(i)")
        #expect(parseAll(raw, feedBytewise: true) == .status(status), "case \(i) bytewise")
    }

    @Test func oversizedRequestLineIsRefusedBeforeItEnds() {
        // No CRLF yet, but already past the limit: refuse without waiting for the rest.
        #expect(parseAll("GET \(Self.longTarget)") == .status(414))
    }

    @Test func oversizedHeaderSectionIsRefusedBeforeItEnds() {
        #expect(parseAll("GET / HTTP/1.1\r\nHost: a\r\n\(Self.hugeHeader)") == .status(431))
    }

    @Test func incompleteHeadWaitsForMore() {
        #expect(parseAll("GET / HTTP/1.1\r\nHost: a\r\n") == .needMore)
        #expect(parseAll("GET / HTTP/1.1\r\nHost: a\r\n\r") == .needMore)
        #expect(parseAll("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhe") == .needMore)
    }
}

@Suite(.offPool) struct RequestSemanticsTests {
    func head(_ raw: String) -> RequestHead? {
        var p = RequestHeadParser(limits: ParseLimits())
        if case .head(let h, _) = Array(raw.utf8).withUnsafeBufferPointer({ p.parse($0) }) { return h }
        return nil
    }

    @Test func keepAliveDefaults() {
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\n\r\n")?.keepAlive == true)
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")?.keepAlive == false)
        #expect(head("GET / HTTP/1.0\r\n\r\n")?.keepAlive == false)
        #expect(head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")?.keepAlive == true)
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, Close\r\n\r\n")?.keepAlive == false)
    }

    @Test func queryItemsDecodePlusAndKeepRepeats() {
        let r = Request.make(target: "/p?term=swift+ui&tag=a&tag=b%2Cc&flag")
        #expect(r.queryItems.map(\.name) == ["term", "tag", "tag", "flag"])
        #expect(r.queryItems.map(\.value) == ["swift ui", "a", "b,c", ""])
        #expect(r.query("term") == "swift ui")
        #expect(r.query("missing") == nil)
    }

    @Test func acceptEncodingHonoursQValues() {
        #expect(Request.make(target: "/", headers: [("Accept-Encoding", "gzip, deflate")]).acceptsGzip)
        #expect(Request.make(target: "/", headers: [("Accept-Encoding", "br;q=1.0, gzip;q=0.5")]).acceptsGzip)
        #expect(!Request.make(target: "/", headers: [("Accept-Encoding", "gzip;q=0")]).acceptsGzip)
        #expect(!Request.make(target: "/", headers: [("Accept-Encoding", "identity")]).acceptsGzip)
        #expect(Request.make(target: "/", headers: [("Accept-Encoding", "*")]).acceptsGzip)
        #expect(!Request.make(target: "/").acceptsGzip)
    }

    /// What browsers and apps send, and the edges of the grammar, read byte by byte.
    @Test(
        arguments: [
            ("gzip, deflate, br, zstd", true), ("GZIP", true), (" x-gzip ", true), ("br, gzip ; Q=0.001", true), ("gzip;q=0.000", false),
            ("gzip; q=0 , *", false), ("*;q=0, gzip", true), ("*;q=0", false), ("identity;q=1, *;q=0.5", true), ("gzipx, gzi", false),
            ("gzip;level=1;q=0", false), ("gzip;q=high", true), (",,, ;", false), ("", false),
        ] as [(String, Bool)])
    func acceptEncodingIsReadByTheGrammar(_ value: String, _ accepted: Bool) {
        #expect(Request.make(target: "/", headers: [("Accept-Encoding", value)]).acceptsGzip == accepted)
    }

    @Test func expectContinueOnlyWithABody() {
        #expect(head("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")?.expectContinue == true)
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n")?.expectContinue == false)
    }
}
