import Foundation
import Glibc
import HTTPServer
import Testing
import TestSupport

/// Socket-level behaviour of a real listening server.
@Suite(.serialized, .offPool) struct ServerSocketTests {
    static func router() -> Router<BasicRequestContext> {
        var r = Router<BasicRequestContext>()
        r.get("/hello") { _ in .response(.json(Array("{\"hello\":\"world\"}".utf8))) }
        r.get("/echo/:name") { req in
            .response(.json(Array("{\"name\":\"\(req.pathParameters["name"] ?? "")\",\"q\":\"\(req.request.query("q") ?? "")\"}".utf8)))
        }
        r.get("/big") { _ in .response(.json(Array(repeating: UInt8(ascii: "a"), count: 20_000))) }
        r.get("/slow") { _ in
            .deferred { _ in
                try? await Task.sleep(for: .milliseconds(300))
                return .json(Array("{\"slow\":true}".utf8))
            }
        }
        r.add("POST", "/upload") { req in .response(.json(Array("{\"bytes\":\(req.request.body.count)}".utf8))) }
        return r
    }

    @Test func keepAliveServesHundredRequestsOnOneConnection() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            for _ in 0..<100 {
                try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                let r = try c.readResponse()
                #expect(r.status == 200)
                #expect(r.text == "{\"hello\":\"world\"}")
                #expect(r.header("Connection") == nil)
            }
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            // A slow (deferred) request first: the fast ones behind it must wait their turn.
            try c.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /echo/one HTTP/1.1\r\nHost: x\r\n\r\nGET /echo/two?q=a+b HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try c.readResponse().text == "{\"slow\":true}")
            #expect(try c.readResponse().text == "{\"name\":\"one\",\"q\":\"\"}")
            #expect(try c.readResponse().text == "{\"name\":\"two\",\"q\":\"a b\"}")
        }
    }

    @Test func pipelinedBurstLargerThanOneReadIsAnsweredInFull() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            // ~99 KB in one send: more than the loop's 64 KiB read buffer, all of it queued before
            // the server reads. Edge-triggered, a full read must read on: nothing else will wake it.
            try c.send(String(repeating: "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", count: 3000))
            var answered = 0
            // A generous wait per answer: only a loop that stopped reading takes that long.
            while answered < 3000, c.isReadable(within: 30), let r = try? c.readResponse(), r.status == 200 { answered += 1 }
            #expect(answered == 3000)
        }
    }

    @Test func halfCloseAfterPipelinedRequestsHeldByBackPressureAnswersThemAll() async throws {
        try await offPool {
            // A 64 KiB output limit holds most of these 20 KB answers back while the client's FIN
            // is already queued: every request must still be answered before the close.
            let server = try startTestServer(Self.router()) { $0.maxPendingOutputBytes = 64 * 1024 }
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            try c.send(String(repeating: "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", count: 20))
            c.shutdownWrite()
            var answered = 0
            while answered < 20, let r = try? c.readResponse(), r.body.count == 20_000 { answered += 1 }
            #expect(answered == 20)
            #expect(c.isClosedByPeer())
        }
    }

    @Test func halfCloseKeepsAnswersAlreadyMadeWhenADeferredOneIsAbandoned() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            // The FIN comes with both requests: /hello is answered at once, /slow is still working
            // when the hang-up is seen and is abandoned, but /hello's answer must not be lost.
            try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            c.shutdownWrite()
            #expect(try c.readResponse().text == "{\"hello\":\"world\"}")
            #expect(c.isClosedByPeer())
        }
    }

    @Test func headHasGetHeadersAndNoBody() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            try c.send("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try c.readResponse(head: true)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "17")
            #expect(head.body.isEmpty)
            // The connection is still in sync: the next response parses.
            try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try c.readResponse().body.count == 17)
        }
    }

    @Test func http10ClosesUnlessKeepAlive() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            try c.send("GET /hello HTTP/1.0\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 200)
            #expect(r.header("Connection") == "close")
            #expect(c.isClosedByPeer())

            let k = try RawClient(port: server.port)
            try k.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try k.readResponse().header("Connection") == "keep-alive")
            try k.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try k.readResponse().status == 200)
        }
    }

    @Test func connectionCloseIsHonoured() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            try c.send("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(try c.readResponse().header("Connection") == "close")
            #expect(c.isClosedByPeer())
        }
    }

    @Test func standardHeadersArePresent() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let r = try RawClient.get(port: server.port, "/hello", headers: ["X-Request-ID: abc-123"])
            #expect(r.header("Server") == "FeedProxy")
            #expect(r.header("Date")?.hasSuffix(" GMT") == true)
            #expect(r.header("Access-Control-Allow-Origin") == nil)  // CORS is the application's middleware
            #expect(r.header("X-Request-ID") == "abc-123")
            #expect(r.header("Content-Type") == "application/json; charset=utf-8")
            let generated = try RawClient.get(port: server.port, "/hello", headers: ["X-Request-ID: bad id with spaces"])
            #expect(generated.header("X-Request-ID") != nil)
            #expect(generated.header("X-Request-ID") != "bad id with spaces")
            // Generated ids: short lowercase hex (a String stored inline), one per request.
            let ids = try (0..<3).map { _ in try RawClient.get(port: server.port, "/hello").header("X-Request-ID") ?? "" }
            #expect(Set(ids).count == 3)
            #expect(ids.allSatisfy { (1...15).contains($0.utf8.count) && $0.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } })
        }
    }

    @Test func malformedRequestGetsJSONErrorAndClose() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            try c.send("GET / HTTP/1.1\r\nHost : x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 400)
            #expect(r.text.hasPrefix("{\"error\":{\"status\":400,\"code\":\"bad_request\""))
            #expect(r.header("Connection") == "close")
            // The smuggled second request is never answered.
            #expect(c.isClosedByPeer())
        }
    }

    @Test func unknownPathAndWrongMethod() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let missing = try RawClient.get(port: server.port, "/nope")
            #expect(missing.status == 404)
            #expect(missing.text == "{\"error\":{\"status\":404,\"code\":\"not_found\",\"message\":\"no route for this path\"}}")
            let c = try RawClient(port: server.port)
            try c.send("DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            let wrong = try c.readResponse()
            #expect(wrong.status == 405)
            #expect(wrong.header("Allow") == "GET, HEAD, OPTIONS")
            try c.send("OPTIONS /hello HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: GET\r\n\r\n")
            let preflight = try c.readResponse()
            #expect(preflight.status == 204)
            #expect(preflight.header("Allow") == "GET, HEAD, OPTIONS")
            #expect(preflight.header("Access-Control-Allow-Methods") == nil)
        }
    }

    @Test func invalidPercentEscapeIs400() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            #expect(try RawClient.get(port: server.port, "/echo/%zz").status == 400)
            #expect(try RawClient.get(port: server.port, "/echo/a%2Fb").text.contains("\"name\":\"a/b\""))
        }
    }

    @Test func gzipWhenAcceptedWithVary() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let r = try RawClient.get(port: server.port, "/big", headers: ["Accept-Encoding: gzip"])
            #expect(r.header("Content-Encoding") == "gzip")
            #expect(r.header("Vary") == "Accept-Encoding")
            #expect(Gzip.decompress(r.body) == Array(repeating: UInt8(ascii: "a"), count: 20_000))
            let plain = try RawClient.get(port: server.port, "/big")
            #expect(plain.header("Content-Encoding") == nil)
            #expect(plain.body.count == 20_000)
        }
    }

    @Test func precompressedBodyIsUsedAsIs() async throws {
        try await offPool {
            var r = Router<BasicRequestContext>()
            let marker: [UInt8] = Gzip.compress(Array("precompressed".utf8)) ?? []
            r.get("/pre") { _ in .response(.json(Array("plain".utf8), gzipped: marker)) }
            let server = try startTestServer(r)
            defer { server.shutdown() }
            let z = try RawClient.get(port: server.port, "/pre", headers: ["Accept-Encoding: gzip"])
            #expect(z.body == marker)
            #expect(try RawClient.get(port: server.port, "/pre").text == "plain")
        }
    }

    @Test func requestBodiesAreReadAndFramingStaysInSync() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            try c.send(
                "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloPOST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            #expect(try c.readResponse().text == "{\"bytes\":5}")
            #expect(try c.readResponse().text == "{\"bytes\":3}")
            #expect(try c.readResponse().status == 200)
            // A body to a GET-only route is still consumed, so the next request parses.
            try c.send("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcdGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try c.readResponse().status == 405)
            #expect(try c.readResponse().status == 200)
        }
    }

    @Test func oversizedBodyIs413() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            try c.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n")
            #expect(try c.readResponse().status == 413)
            let chunked = try RawClient(port: server.port)
            try chunked.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in 0..<20 { try? chunked.send("10000\r\n" + String(repeating: "z", count: 65536) + "\r\n") }
            #expect(try chunked.readResponse().status == 413)
        }
    }

    @Test func slowlorisIsDroppedWhileOthersAreServed() async throws {
        try await offPool {
            let server = try startTestServer(Self.router()) { $0.headerTimeout = 1 }
            defer { server.shutdown() }
            let slow = try RawClient(port: server.port, timeout: 4)
            try slow.send("GET /hello HTTP/1.1\r\nHost: x\r\n")
            let start = Date()
            for _ in 0..<5 {
                try? slow.send("X-Drip: 1\r\n")
                #expect(try RawClient.get(port: server.port, "/hello").status == 200)
                usleep(200_000)
            }
            #expect(slow.isClosedByPeer())
            #expect(Date().timeIntervalSince(start) < 4)
        }
    }

    @Test func idleKeepAliveIsClosedAfterTimeout() async throws {
        try await offPool {
            let server = try startTestServer(Self.router()) { $0.idleTimeout = 1 }
            defer { server.shutdown() }
            let c = try RawClient(port: server.port, timeout: 4)
            try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try c.readResponse()
            #expect(c.isClosedByPeer())
        }
    }

    @Test func fiveThousandIdleConnectionsThenStillServes() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            var idle: [RawClient] = []
            for i in 0..<5000 {
                let c = try RawClient(port: server.port)
                if i % 10 == 0 {
                    try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                    _ = try c.readResponse()
                }
                idle.append(c)
            }
            #expect(try RawClient.get(port: server.port, "/hello").status == 200)
            #expect(server.openConnections >= 5000)
            idle.removeAll()
        }
    }

    @Test func connectionLimitRefusesCleanly() async throws {
        try await offPool {
            let server = try startTestServer(Self.router()) { $0.maxConnections = 3 }
            defer { server.shutdown() }
            let held = try (0..<3).map { _ in try RawClient(port: server.port) }
            for c in held {
                try c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try c.readResponse().status == 200)
            }
            let extra = try RawClient(port: server.port)
            #expect(try extra.readResponse().status == 503)
            #expect(extra.isClosedByPeer())
        }
    }

    @Test func resetsAndHalfClosesDoNotHurtTheServer() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            for _ in 0..<50 {
                let c = try RawClient(port: server.port)
                try c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
                c.abort()
            }
            for _ in 0..<20 {
                let c = try RawClient(port: server.port)
                try c.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                c.abort()
            }
            // Half-close after the request: the answer still arrives.
            let h = try RawClient(port: server.port)
            try h.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            h.shutdownWrite()
            #expect(try h.readResponse().status == 200)
            // Nothing more can come on it, so the server closes it once answered (not at the idle timeout).
            #expect(h.isClosedByPeer())
            #expect(try RawClient.get(port: server.port, "/hello").status == 200)
            usleep(500_000)
            #expect(server.openConnections <= 1)
        }
    }

    @Test func slowReaderDoesNotGrowMemoryWithoutBound() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            defer { server.shutdown() }
            let c = try RawClient(port: server.port)
            // 2,000 pipelined requests for 20 KB each, never read: the server must stop
            // parsing once its output backlog is full instead of buffering 40 MB.
            let burst = String(repeating: "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", count: 2000)
            DispatchQueue.global().async { try? c.send(burst) }
            usleep(500_000)
            #expect(try RawClient.get(port: server.port, "/hello").status == 200)
            var received = 0
            while received < 2000, let r = try? c.readResponse() {
                #expect(r.body.count == 20_000)
                received += 1
            }
            #expect(received == 2000)
        }
    }

    @Test func gracefulShutdownFinishesInFlightRequest() async throws {
        try await offPool {
            let server = try startTestServer(Self.router())
            let c = try RawClient(port: server.port)
            try c.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            usleep(50_000)
            let idle = try RawClient(port: server.port)
            usleep(50_000)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                server.shutdown()
                done.signal()
            }
            let r = try c.readResponse()
            #expect(r.status == 200)
            #expect(r.header("Connection") == "close")
            #expect(idle.isClosedByPeer())
            #expect(done.wait(timeout: .now() + 5) == .success)
            #expect(throws: (any Error).self) { try RawClient(port: server.port) }
        }
    }
}
