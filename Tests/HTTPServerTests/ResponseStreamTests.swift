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

    /// A stream's request body (a library's form, kilobytes for 500 podcasts) and its header
    /// section (a reconnect's `Last-Event-ID` carries a library's token) are let go as the
    /// stream starts, not held as long as the stream is open: the handler read them, the
    /// stream's body sees them empty.
    @Test func aStreamsRequestBodyAndHeadersAreLetGoAsTheStreamStarts() async throws {
        try await offPool {
            let seen = Locked<(handler: Int, handlerHeaders: Int, stream: Int, streamHeaders: Int)>((-1, -1, -1, -1))
            var router = Router<BasicRequestContext>()
            router.add("POST", "/events") { context in
                let read = context.request.body.count, lastEventID = context.request.headers["last-event-id"]?.utf8.count ?? 0
                return .stream(Response(status: 200)) { stream, context in
                    seen.withLock { $0 = (read, lastEventID, context.request.body.count, context.request.headers.count) }
                    stream.finish()
                }
            }
            let server = try startTestServer(router)
            defer { server.shutdown() }
            let form = String(repeating: "podcasts=1234567890&", count: 400)
            let token = String(repeating: "A", count: 8000)
            let client = try RawClient(port: server.port, timeout: 10)
            try client.send(
                "POST /events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: \(token)\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: \(form.utf8.count)\r\n\r\n\(form)")
            #expect(try client.readResponse().status == 200)
            #expect(waitUntil { seen.withLock { $0.stream } >= 0 })
            #expect(seen.withLock { $0 } == (form.utf8.count, token.utf8.count, 0, 0))
        }
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
