import TestSupport
import Testing
@testable import HTTPServer

/// Header fields as the parser leaves them: looked up by name in any case, in order,
/// repeated ones kept, values trimmed, as many as the limit allows.
@Suite(.offPool) struct RequestHeadersTests {
    static func headers(_ raw: String, limits: ParseLimits = ParseLimits()) -> RequestHeaders? {
        var parser = RequestHeadParser(limits: limits)
        let bytes = Array(raw.utf8)
        guard case .head(let head, _) = bytes.withUnsafeBufferPointer({ parser.parse($0) }) else { return nil }
        return head.request.headers
    }

    @Test func lookupsIgnoreCaseAndKeepOrder() throws {
        let h = try #require(Self.headers("GET / HTTP/1.1\r\nHost: a\r\nX-Tag:  one \t\r\nACCEPT: */*\r\nx-tag: two\r\nX-Empty:\r\n\r\n"))
        #expect(h.count == 5)
        #expect(h["host"] == "a")
        #expect(h["X-TAG"] == "one")  // the first, OWS trimmed
        #expect(h.values("x-tag") == ["one", "two"])
        #expect(h.single("x-tag") == nil)  // repeated
        #expect(h.single("accept") == "*/*")
        #expect(h["x-empty"] == "")
        #expect(h["x-missing"] == nil && !h.contains("x-missing") && h.contains("X-Empty"))
        #expect(h.map(\.name) == ["Host", "X-Tag", "ACCEPT", "x-tag", "X-Empty"])
        #expect(h.map(\.value) == ["a", "one", "*/*", "two", ""])
    }

    /// Names of the same length share a presence bit: the bytes still decide.
    @Test func namesOfEqualLengthAreToldApart() throws {
        let h = try #require(Self.headers("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\r\n"))
        #expect(h["x-a"] == "1")
        #expect(h["x-b"] == nil)
        #expect(h["hosT"] == "a" && h["hose"] == nil)
    }

    /// Past the 64 fields that fit the parser's stack table, the heap table takes over.
    @Test func aRaisedLimitKeepsEveryField() throws {
        var limits = ParseLimits()
        limits.maxHeaderCount = 200
        let fields = (0..<150).map { "X-F\($0): v\($0)\r\n" }.joined()
        let h = try #require(Self.headers("GET / HTTP/1.1\r\nHost: a\r\n\(fields)\r\n", limits: limits))
        #expect(h.count == 151)
        #expect(h["x-f0"] == "v0" && h["x-f63"] == "v63" && h["x-f149"] == "v149")
        limits.maxHeaderCount = 151
        #expect(Self.headers("GET / HTTP/1.1\r\nHost: a\r\n\(fields)\r\n", limits: limits)?.count == 151)
        limits.maxHeaderCount = 150
        #expect(Self.headers("GET / HTTP/1.1\r\nHost: a\r\n\(fields)\r\n", limits: limits) == nil)
    }

    @Test func builtFromPairsReadsTheSame() {
        let h = RequestHeaders([("X-Forwarded-For", "198.51.100.1"), ("x-forwarded-for", "10.0.0.1"), ("Accept-Encoding", "gzip")])
        #expect(h.values("X-Forwarded-For") == ["198.51.100.1", "10.0.0.1"])
        #expect(h.withFirstValue("accept-encoding", AcceptEncoding.acceptsGzip) == true)
        #expect(RequestHeaders().count == 0 && RequestHeaders()["host"] == nil)
    }
}
