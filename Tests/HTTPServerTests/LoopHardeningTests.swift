import Foundation
import Glibc
import HTTPServer
import Primitives
import Testing
import TestSupport

/// Clients that try to hold or spin an event loop: slow bodies, endless chunk extensions,
/// the connection limit. Each answer is the uniform JSON error, then a close.
@Suite(.serialized, .offPool) struct LoopHardeningTests {
    @Test func aBodyTrickledPastTheBodyTimeoutIsAnswered408AndClosed() async throws {
        try await offPool {
            let server = try startTestServer(ServerSocketTests.router()) {
                $0.headerTimeout = 1
                $0.bodyTimeout = 1
            }
            defer { server.shutdown() }
            for framing in ["Content-Length: 100", "Transfer-Encoding: chunked"] {
                let slow = try RawClient(port: server.port, timeout: 6)
                try slow.send("POST /upload HTTP/1.1\r\nHost: x\r\nX-Request-ID: slow-body-1\r\n\(framing)\r\n\r\n")
                // A byte every 200 ms, for 5 s at least: before, every read pushed the deadline back,
                // and no answer came while bytes did.
                var answered: RawClient.Response?
                for _ in 0..<25 {
                    try? slow.send(framing.hasPrefix("Content") ? "a" : "1\r\na\r\n")
                    if slow.isReadable(within: 0.2) {
                        answered = try slow.readResponse()
                        break
                    }
                }
                #expect(answered?.status == 408, "\(framing)")
                #expect(answered?.text.contains("\"code\":\"request_timeout\"") == true)
                #expect(answered?.header("X-Request-ID") == "slow-body-1")
                #expect(answered?.header("Cache-Control") == "no-store")
                #expect(slow.isClosedByPeer())
                #expect(try RawClient.get(port: server.port, "/hello").status == 200)
            }
        }
    }

    @Test func aSlowButSteadyBodyWithinTheTimeoutIsServed() async throws {
        try await offPool {
            let server = try startTestServer(ServerSocketTests.router()) { $0.bodyTimeout = 3 }
            defer { server.shutdown() }
            let c = try RawClient(port: server.port, timeout: 5)
            try c.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
            for byte in "hello" {
                usleep(100_000)
                try c.send(String(byte))
            }
            #expect(try c.readResponse().text == "{\"bytes\":5}")
            // Kept alive afterwards, on the idle timeout again.
            try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try c.readResponse().status == 200)
        }
    }

    @Test func anOversizedChunkExtensionIsRefusedAtOnce() async throws {
        try await offPool {
            let server = try startTestServer(ServerSocketTests.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port, timeout: 3)
            try c.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;")
            for _ in 0..<16 { try? c.send(String(repeating: "x", count: 4096)) }
            // Answered within the client's 3 s, well before any timeout: refused for its size.
            let answer = try c.readResponse()
            #expect(answer.status == 400)
            #expect(answer.text.contains("chunk extension too long"))
            #expect(c.isClosedByPeer())
        }
    }

    @Test func manySmallExtensionsAreBoundedToo() async throws {
        try await offPool {
            let server = try startTestServer(ServerSocketTests.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port, timeout: 3)
            try c.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            let ext = ";" + String(repeating: "e", count: 1000)
            for _ in 0..<20 { try? c.send("1\(ext)\r\na\r\n") }
            #expect(try c.readResponse().status == 400)
            // A short extension is still read and skipped.
            let ok = try RawClient(port: server.port)
            try ok.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;name=value\r\nabc\r\n0\r\n\r\n")
            #expect(try ok.readResponse().text == "{\"bytes\":3}")
        }
    }

    @Test func theConnectionLimitAnswerIsTheUniformErrorWithRetryAfter() async throws {
        try await offPool {
            let server = try startTestServer(ServerSocketTests.router()) { $0.maxConnections = 2 }
            defer { server.shutdown() }
            let held = try (0..<2).map { _ in try RawClient(port: server.port) }
            for c in held {
                try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try c.readResponse().status == 200)
            }
            let extra = try RawClient(port: server.port)
            let answer = try extra.readResponse()
            #expect(answer.status == 503)
            #expect(answer.header("Retry-After") == "1")
            #expect(answer.header("Cache-Control") == "no-store")
            #expect(answer.header("X-Request-ID")?.isEmpty == false)
            #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
            #expect(answer.text == #"{"error":{"status":503,"code":"too_many_connections","message":"server is at its connection limit"}}"#)
            #expect(extra.isClosedByPeer())
        }
    }

    @Test func everyRefusalCarriesRetryAfter() async throws {
        try await offPool {
            for status in [429, 503] {
                let plain = Response.error(ClientError(status: status, code: "x", message: "y"))
                #expect(plain.headers["Retry-After"] == "1")
                let timed = Response.error(ClientError(status: status, code: "x", message: "y", retryAfter: 7.2))
                #expect(timed.headers["Retry-After"] == "8")
            }
            #expect(Response.error(ClientError(status: 502, code: "x", message: "y")).headers["Retry-After"] == nil)
        }
    }
}
