import Foundation
import Glibc
import HTTPServer
import Primitives
import Synchronization
import Testing
import TestSupport

/// Long-lived answers (Server-Sent Events): a chunked body written from another thread, the
/// application told when the client leaves, and a client that stops reading closed at the
/// buffer's bound rather than growing it.
@Suite(.serialized, .offPool) struct ResponseStreamTests {
    final class Opened: Sendable {
        let streams = Locked<[ResponseStream]>([])
        let closedCount = Atomic<Int>(0)
    }

    static func router(_ opened: Opened) -> Router<BasicRequestContext> {
        var router = Router<BasicRequestContext>()
        router.get("/events") { _ in
            var headers = HTTPHeaders()
            headers.add("Content-Type", "text/event-stream")
            return .stream(Response(status: 200, headers: headers)) { stream, _ in
                stream.onClose { opened.closedCount.add(1, ordering: .relaxed) }
                opened.streams.withLock { $0.append(stream) }
                stream.send(Array("event: hello\ndata: 1\n\n".utf8))
            }
        }
        router.get("/hello") { _ in .response(Response(status: 200, body: Array("hi".utf8))) }
        return router
    }

    @Test func eventsArriveAsChunksAndALeavingClientIsTold() async throws {
        try await offPool {
            let opened = Opened()
            let server = try startTestServer(Self.router(opened))
            defer { server.shutdown() }
            let client = try RawClient(port: server.port, timeout: 10)
            try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try client.readResponse()
            #expect(head.status == 200 && head.header("Transfer-Encoding") == "chunked" && head.header("Content-Length") == nil)
            #expect(String(decoding: try client.readChunk(), as: UTF8.self) == "event: hello\ndata: 1\n\n")
            let stream = try #require(opened.streams.withLock { $0.first })
            #expect(stream.send(Array("data: 2\n\n".utf8)))
            #expect(String(decoding: try client.readChunk(), as: UTF8.self) == "data: 2\n\n")
            client.close()
            var told = false
            for _ in 0..<200 where !told {
                told = opened.closedCount.load(ordering: .relaxed) == 1
                if !told { usleep(10_000) }
            }
            #expect(told && stream.isClosed && !stream.send(Array("data: 3\n\n".utf8)))
            // A finished stream ends with the last chunk.
            let second = try RawClient(port: server.port, timeout: 10)
            try second.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try second.readResponse()
            _ = try second.readChunk()
            opened.streams.withLock { $0.last }?.finish()
            #expect(try second.readChunk().isEmpty)
            #expect(second.isClosedByPeer())
            #expect(try RawClient.get(port: server.port, "/hello").status == 200)
        }
    }

    /// A stream's request body (a library's form, kilobytes for 500 podcasts), its header
    /// section (a reconnect's `Last-Event-ID` carries a library's token) and all but the first
    /// 64 bytes of its target (a library's query) are let go as the stream starts, not held as
    /// long as the stream is open: the handler read them, the stream and its end see the rest.
    @Test func aStreamsRequestIsCutToWhatItsEndNeedsAsTheStreamStarts() async throws {
        try await offPool {
            struct Seen: Equatable {
                var body = -1, lastEventID = -1, target = ""
            }
            let seen = Locked<(handler: Seen, stream: Seen)>((Seen(), Seen()))
            let ended = Locked<String?>(nil)
            var router = Router<BasicRequestContext>()
            router.use(EndedTarget(seen: ended))
            router.add("POST", "/events") { context in
                let request = context.request
                let read = Seen(body: request.body.count, lastEventID: request.headers["last-event-id"]?.utf8.count ?? 0, target: request.target)
                return .stream(Response(status: 200)) { stream, context in
                    let r = context.request
                    seen.withLock { $0 = (read, Seen(body: r.body.count, lastEventID: r.headers.count, target: r.target)) }
                    stream.finish()
                }
            }
            let server = try startTestServer(router)
            defer { server.shutdown() }
            let form = String(repeating: "podcasts=1234567890&", count: 400)
            let token = String(repeating: "A", count: 8000)
            let target = "/events?podcasts=" + String(repeating: "1234567890,", count: 60) + "&sync=" + String(repeating: "B", count: 400)
            let client = try RawClient(port: server.port, timeout: 10)
            try client.send(
                "POST \(target) HTTP/1.1\r\nHost: x\r\nLast-Event-ID: \(token)\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: \(form.utf8.count)\r\n\r\n\(form)")
            #expect(try client.readResponse().status == 200)
            #expect(waitUntil { seen.withLock { $0.stream.body } >= 0 })
            let cut = String(decoding: target.utf8.prefix(Request.streamTargetBytes), as: UTF8.self) + "…"
            #expect(seen.withLock { $0.handler } == Seen(body: form.utf8.count, lastEventID: token.utf8.count, target: target))
            #expect(seen.withLock { $0.stream } == Seen(body: 0, lastEventID: 0, target: cut))
            // Its end (the access log's line) names the target as kept.
            #expect(waitUntil { ended.withLock { $0 } != nil })
            #expect(ended.withLock { $0 } == cut)
        }
    }

    /// Notes the target a request's end sees.
    struct EndedTarget: Middleware {
        let seen: Locked<String?>
        func ended(_ context: BasicRequestContext, _ outcome: RequestOutcome) { seen.withLock { $0 = context.request.target } }
    }

    /// One event larger than the bound (a page of long show notes) goes whole to a reader that
    /// has taken everything before it; the stream stays open for the next.
    @Test func oneEventLargerThanTheBoundReachesAReaderThatKeepsUp() async throws {
        try await offPool {
            let opened = Opened()
            let server = try startTestServer(Self.router(opened)) { $0.maxStreamBufferedBytes = 16 << 10 }
            defer { server.shutdown() }
            let client = try RawClient(port: server.port, timeout: 10)
            try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try client.readResponse()
            _ = try client.readChunk()
            let stream = try #require(opened.streams.withLock { $0.first })
            #expect(waitUntil { stream.isIdle })
            let big = [UInt8](repeating: UInt8(ascii: "x"), count: 64 << 10)
            #expect(stream.send(big), "an empty stream takes one event of any size")
            var got: [UInt8] = []
            while got.count < big.count { got += try client.readChunk() }
            #expect(got == big)
            #expect(waitUntil { stream.isIdle })
            #expect(stream.send(Array("data: next\n\n".utf8)) && !stream.isClosed)
            #expect(String(decoding: try client.readChunk(), as: UTF8.self) == "data: next\n\n")
        }
    }

    /// A client that never reads: sends are refused once the stream's bound is reached (its
    /// buffer and the connection's), and the connection is closed.
    @Test func aClientThatNeverReadsIsClosedAtTheBound() async throws {
        try await offPool {
            let opened = Opened()
            let server = try startTestServer(Self.router(opened)) { $0.maxStreamBufferedBytes = 64 << 10 }
            defer { server.shutdown() }
            let client = try RawClient(port: server.port, timeout: 10)
            var small: Int32 = 4096
            setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            try client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            var stream: ResponseStream?
            for _ in 0..<500 where stream == nil {
                stream = opened.streams.withLock { $0.first }
                if stream == nil { usleep(10_000) }
            }
            let s = try #require(stream)
            let event = [UInt8](repeating: UInt8(ascii: "x"), count: 8 << 10)
            var accepted = 0
            // 64 MiB would be sent to a reader that kept up; this one reads nothing.
            for _ in 0..<8192 {
                guard s.send(event) else { break }
                accepted += 1
                if accepted % 64 == 0 { usleep(1_000) }
            }
            #expect(accepted < 8192, "refused at the bound")
            var closed = false
            for _ in 0..<500 where !closed {
                closed = opened.closedCount.load(ordering: .relaxed) == 1
                if !closed { usleep(10_000) }
            }
            #expect(closed, "the connection of a reader that fell behind is closed")
        }
    }
}
