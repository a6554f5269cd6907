import Glibc
import Primitives
import TestSupport
import Testing
@testable import HTTPServer

/// A described representation is sent as it is: the variant the request accepts, with that
/// variant's own validator and lines, after the keeper's lines.
@Suite(.offPool) struct ResponseWriterTests {
    static let body = Array(String(repeating: #"{"title":"an episode"},"#, count: 80).utf8)
    static let representation = Representation(body, link: "</x?page=2>; rel=\"next\"", gzippedBody: Gzip.compress(body))

    static func written(_ response: Response, gzip: Bool) throws -> String {
        let writer = ResponseWriter(serverName: "t")
        var queue = OutputQueue()
        _ = writer.append(
            response, to: CoreRequestContext.unparsed(requestID: 0), gzip: gzip, headOnly: false, keepAlive: true, version: .http11, date: Array("now".utf8),
            into: &queue)
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let expected = queue.pendingBytes
        _ = queue.send(to: fds[0])
        var buffer = [UInt8](repeating: 0, count: expected)
        let n = buffer.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, Int32(MSG_WAITALL)) }
        try #require(n == expected)
        return String(decoding: buffer, as: UTF8.self)
    }

    static func head(_ text: String) -> String { String(text.prefix { $0 != "{" && $0 != "\u{1f}" }) }

    /// Issue 69: every status the service sends has its reason phrase (a 202 read `202 Status`);
    /// one nobody named is written with an empty phrase, as RFC 9112 allows.
    @Test func everyStatusHasItsReasonPhrase() throws {
        let expected = [
            202: "Accepted", 403: "Forbidden", 410: "Gone", 415: "Unsupported Media Type", 422: "Unprocessable Content", 308: "Permanent Redirect",
            200: "OK", 304: "Not Modified", 429: "Too Many Requests", 503: "Service Unavailable",
        ]
        for (status, phrase) in expected {
            let text = try Self.written(Response(status: status, body: []), gzip: false)
            #expect(text.hasPrefix("HTTP/1.1 \(status) \(phrase)\r\n"), "\(text.prefix(40))")
        }
        #expect(try Self.written(Response(status: 599, body: []), gzip: false).hasPrefix("HTTP/1.1 599 \r\n"))
    }

    @Test func eachVariantIsSentWithItsOwnValidatorAndLines() throws {
        let response = Response(sending: Self.representation, status: 200, renderedHeaders: Array("Cache-Control: public, max-age=60\r\n".utf8))
        let plain = Self.head(try Self.written(response, gzip: false))
        #expect(plain.contains("Content-Length: \(Self.body.count)\r\n"))
        #expect(plain.contains("Cache-Control: public, max-age=60\r\nETag: \(Self.representation.etag)\r\nLink: </x?page=2>; rel=\"next\"\r\n"))
        #expect(plain.hasSuffix("Content-Type: \(MediaType.json)\r\n\r\n"))
        #expect(!plain.contains("Content-Encoding"))
        let gzip = Self.head(try Self.written(response, gzip: true))
        #expect(gzip.contains("Content-Encoding: gzip\r\n") && gzip.contains("Vary: Accept-Encoding\r\n"))
        #expect(gzip.contains("Content-Length: \(Self.representation.gzippedBody?.count ?? -1)\r\n"))
        #expect(gzip.contains("ETag: \(Self.representation.gzipETag)\r\n") && !gzip.contains(Self.representation.etag))
    }

    /// Bytes the response's own headers describe carry no lines of their own, and are
    /// compressed on the fly only when they say they may be.
    @Test func plainBytesAreDescribedByTheirHeaders() throws {
        let json = try Self.written(.json(Self.body), gzip: true)
        #expect(json.contains("Content-Encoding: gzip\r\n") && json.contains("Content-Type: \(MediaType.json)\r\n") && !json.contains("ETag"))
        let error = try Self.written(.error(status: 404, code: "not_found", message: String(repeating: "x", count: 2000)), gzip: true)
        #expect(!error.contains("Content-Encoding") && error.contains("Cache-Control: no-store\r\n"))
    }
}
