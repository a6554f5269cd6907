import Glibc
import HTTPServer
import Primitives
import Synchronization
import Testing
import TestSupport

/// Middleware as a real server runs them, over a context the application defines: each wraps
/// `next` (changes the context before, answers instead, changes the answer after, deferred
/// work included), sits on the router (every request) or on a group of routes (only those),
/// and sees each request's end with the context its work left, a stream's end included.
@Suite(.serialized, .offPool) struct MiddlewareTests {
    /// The application's own state per request: the server knows nothing of these fields.
    struct TestContext: RootRequestContext {
        let core: CoreRequestContext
        var notes: [String] = []
        var member: String?
        init(core: CoreRequestContext) { self.core = core }
    }

    struct Record: Sendable {
        let context: TestContext
        let outcome: RequestOutcome
        var status: Int { outcome.status }
    }

    /// Keeps what reaches it at the end.
    final class Ends: Sendable {
        let records = Locked<[Record]>([])

        func wait(for n: Int) -> [Record] {
            _ = waitUntil(60) { records.withLock { $0.count } >= n }
            return records.withLock { $0 }
        }
    }

    /// Around every request: refuses those carrying `X-Refuse`, notes the route, adds a header
    /// line to every answer (now, later, or a stream's head), records the end.
    struct Recorder: Middleware {
        let ends: Ends

        func handle(_ context: inout TestContext, next: (inout TestContext) -> HandlerResult<TestContext>) -> HandlerResult<TestContext> {
            context.notes.append("router:\(context.route)")
            guard context.request.headers["x-refuse"] == nil else {
                return .response(.error(ClientError(status: 429, code: "refused", message: "refused by middleware", retryAfter: 2)))
            }
            return next(&context).map(now: context) { response, _ in
                var marked = response
                marked.headers.add("X-Middleware", "on")
                return marked
            }
        }

        func ended(_ context: TestContext, _ outcome: RequestOutcome) { ends.records.withLock { $0.append(Record(context: context, outcome: outcome)) } }
    }

    /// Only on the `/members` group: says who the member is, or answers 401 instead.
    final class Calls: Sendable {
        let count = Atomic<Int>(0)
        let ends = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        var ended: Int { ends.load(ordering: .relaxed) }
    }

    struct Membership: Middleware {
        let calls: Calls

        func handle(_ context: inout TestContext, next: (inout TestContext) -> HandlerResult<TestContext>) -> HandlerResult<TestContext> {
            calls.count.add(1, ordering: .relaxed)
            guard let member = context.request.headers["x-member"] else { return .response(.error(status: 401, code: "who", message: "who are you")) }
            context.member = member
            return next(&context)
        }

        /// A group's middleware see the ends of its routes' requests (before the router's).
        func ended(_ context: TestContext, _ outcome: RequestOutcome) { calls.ends.add(1, ordering: .relaxed) }
    }

    /// A stream opened by `/members/events`, kept so the test can finish it.
    final class Opened: Sendable {
        let stream = Locked<ResponseStream?>(nil)
    }

    static func router(_ ends: Ends, membership: Membership, opened: Opened, handled: Locked<Int>) -> Router<TestContext> {
        var router = Router<TestContext>()
        router.use(Recorder(ends: ends))
        router.get("/open") { _ in .response(.json(Array("{}".utf8))) }
        router.group("/members", middleware: { membership }) { members in
            members.get(":id") { context in
                handled.withLock { $0 += 1 }
                let id = context.pathParameters["id"] ?? ""
                return .deferred { context in
                    // What deferred work learns reaches the end through the context it hands back.
                    context.notes.append("item:\(id)")
                    return .json(Array("{\"member\":\"\(context.member ?? "")\"}".utf8))
                }
            }
            members.get("slow") { _ in
                .deferred { _ in
                    try? await Task.sleep(for: .seconds(30))
                    return .json(Array("{}".utf8))
                }
            }
            members.get("events") { _ in
                var headers = HTTPHeaders()
                headers.add("Content-Type", "text/event-stream")
                return .stream(Response(status: 200, headers: headers)) { stream, context in
                    opened.stream.withLock { $0 = stream }
                    stream.send(Array("data: \(context.member ?? "")\n\n".utf8))
                }
            }
        }
        return router
    }

    struct Setup {
        let ends = Ends()
        let calls = Calls()
        let opened = Opened()
        let handled = Locked(0)
        let server: Server

        init() throws {
            server = try startTestServer(MiddlewareTests.router(ends, membership: Membership(calls: calls), opened: opened, handled: handled))
        }
    }

    static let patience = 60.0

    /// A fresh server for `body`, off the cooperative pool (the raw client blocks), shut down after.
    static func withSetup(_ body: (Setup) throws -> Void) async throws {
        try await offPool {
            let s = try Setup()
            defer { s.server.shutdown() }
            try body(s)
        }
    }

    @Test func middlewareWrapTheHandlerAndItsDeferredWork() async throws {
        try await Self.withSetup { s in
            let ok = try RawClient.get(port: s.server.port, "/members/7", headers: ["X-Member: ada"], timeout: Self.patience)
            #expect(ok.status == 200 && ok.text == #"{"member":"ada"}"#)
            #expect(ok.header("X-Middleware") == "on", "the router's middleware changed the deferred answer")
            let refused = try RawClient.get(port: s.server.port, "/members/8", headers: ["X-Refuse: yes", "X-Member: ada"], timeout: Self.patience)
            #expect(refused.status == 429 && refused.header("Retry-After") == "2")
            let stranger = try RawClient.get(port: s.server.port, "/members/9", timeout: Self.patience)
            #expect(stranger.status == 401 && stranger.header("X-Middleware") == "on")
            #expect(s.handled.withLock { $0 } == 1, "neither the refused request nor the stranger reached the handler")
            let records = s.ends.wait(for: 3)
            #expect(records.map(\.status) == [200, 429, 401])
            let first = try #require(records.first)
            #expect(first.context.notes == ["router:/members/:id", "item:7"] && first.context.member == "ada")
            #expect(first.context.core.peer?.description == "127.0.0.1" && !first.context.core.requestID.isEmpty)
        }
    }

    /// A group's middleware run on its routes only: a 404 or a route outside the group never meets them.
    @Test func aGroupsMiddlewareRunOnlyOnItsRoutes() async throws {
        try await Self.withSetup { s in
            #expect(try RawClient.get(port: s.server.port, "/open", timeout: Self.patience).status == 200)
            let missing = try RawClient.get(port: s.server.port, "/nope", timeout: Self.patience)
            #expect(missing.status == 404 && missing.header("X-Middleware") == "on")
            #expect(s.calls.value == 0)
            #expect(try RawClient.get(port: s.server.port, "/members/1", headers: ["X-Member: bo"], timeout: Self.patience).status == 200)
            #expect(s.calls.value == 1)
            #expect(s.ends.wait(for: 3).map(\.context.route) == ["/open", "(unmatched)", "/members/:id"])
            #expect(s.calls.ended == 1, "only the group's route reaches the group's end")
        }
    }

    /// A stream outlives its handler: its middleware see its end when the connection's comes,
    /// with every byte it carried.
    @Test func aStreamsEndReachesItsMiddleware() async throws {
        try await Self.withSetup { s in
            let client = try RawClient(port: s.server.port, timeout: Self.patience)
            try client.send("GET /members/events HTTP/1.1\r\nHost: x\r\nX-Member: cy\r\n\r\n")
            let head = try client.readResponse()
            #expect(head.status == 200 && head.header("X-Middleware") == "on")
            #expect(String(decoding: try client.readChunk(), as: UTF8.self) == "data: cy\n\n")
            #expect(s.ends.records.withLock { $0.isEmpty }, "not ended while the stream is open")
            s.opened.stream.withLock { $0 }?.finish()
            #expect(try client.readChunk().isEmpty)
            let record = try #require(s.ends.wait(for: 1).first)
            #expect(record.status == 200 && record.context.member == "cy")
            #expect(record.outcome.bodyBytes == "a\r\ndata: cy\n\n\r\n".utf8.count, "the chunk as sent")
            #expect(record.outcome.durationSeconds >= record.outcome.headSeconds)
        }
    }

    /// A client that leaves before its deferred answer: the end is a 499, with the context as
    /// the middleware left it.
    @Test func aClientThatLeavesIsA499() async throws {
        try await Self.withSetup { s in
            let client = try RawClient(port: s.server.port, timeout: Self.patience)
            try client.send("GET /members/slow HTTP/1.1\r\nHost: x\r\nX-Member: di\r\n\r\n")
            usleep(100_000)
            client.close()
            let record = try #require(s.ends.wait(for: 1).first)
            #expect(record.status == 499 && record.context.member == "di")
            usleep(200_000)  // a second end would have come by now
            #expect(s.ends.records.withLock { $0.count } == 1 && s.calls.ended == 1)
        }
    }

    @Test func aRequestThatBreaksTheProtocolMeetsTheRoutersMiddleware() async throws {
        try await Self.withSetup { s in
            let c = try RawClient(port: s.server.port, timeout: Self.patience)
            try c.send("GET /members/1 HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 400 && r.header("X-Middleware") == "on")
            let record = try #require(s.ends.wait(for: 1).first)
            #expect(record.context.route == "(invalid)")
            // Introduced as any request is: a valid trace (never all zeros) and its peer.
            #expect(record.context.core.trace.traceHigh | record.context.core.trace.traceLow != 0 && record.context.core.trace.spanID != 0)
            #expect(record.context.peer != nil)
            #expect(s.calls.value == 0)
        }
    }
}
