import Glibc
import HTTPServer
import Primitives
import Synchronization
import Testing
import TestSupport

/// The middleware chain as a real server runs it: `prepare` after routing and before the
/// handler (and instead of it when it answers), header lines on every answer, `completed`
/// with the context the handler (deferred or not) left.
@Suite(.serialized) struct MiddlewareTests {
    /// Refuses requests carrying `X-Refuse`, tags the context, adds a header line, keeps the records.
    final class Recorder: Middleware {
        let phases: MiddlewarePhases = [.prepare, .headerLines, .completed]
        let records = Mutex<[Record]>([])
        let line = Array("X-Middleware: on\r\n".utf8)

        func prepare(_ context: inout RequestContext) -> Response? {
            context.logFields.append(("prepared_route", context.route))
            guard context.request.headers["x-refuse"] == nil else {
                return .error(ClientError(status: 429, code: "refused", message: "refused by middleware", retryAfter: 2))
            }
            return nil
        }

        func headerLines(for response: Response, in context: RequestContext) -> [UInt8] { line }

        func completed(_ context: RequestContext, _ outcome: RequestOutcome) { records.withLock { $0.append(Record(context: context, outcome: outcome)) } }

        func waitForRecords(_ n: Int) -> [Record] {
            for _ in 0..<6000 {
                let taken = records.withLock { $0 }
                if taken.count >= n { return taken }
                usleep(10_000)
            }
            return records.withLock { $0 }
        }
    }

    struct Record: Sendable {
        let context: RequestContext
        let outcome: RequestOutcome
        var status: Int { outcome.status }
    }

    /// Takes no part in any phase: never called.
    final class Idle: Middleware {
        let phases: MiddlewarePhases = []
        func prepare(_ context: inout RequestContext) -> Response? { .error(status: 500, code: "idle_called", message: "an idle middleware ran") }
    }

    /// How long a client waits for an answer: only a broken server takes this long. The
    /// deferred handler runs on the shared task pool, which a loaded test run can keep busy.
    static let patience = 60.0

    static func router(handled: Locked<Int>) -> Router {
        var r = Router()
        r.get("/items/:id") { context in
            handled.withLock { $0 += 1 }
            let id = context.pathParameters["id"] ?? ""
            return .deferred { context in
                // What deferred work learns reaches `completed` through the context it hands back.
                context.logFields.append(("item", id))
                return .json(Array("{}".utf8))
            }
        }
        return r
    }

    @Test func prepareRunsAfterRoutingAndCanAnswerInsteadOfTheHandler() async throws {
        try await offPool {
            let handled = Locked(0)
            let recorder = Recorder()
            let server = try startTestServer(Self.router(handled: handled), middleware: [Idle(), recorder])
            defer { server.shutdown() }
            let ok = try RawClient.get(port: server.port, "/items/7", timeout: Self.patience)
            #expect(ok.status == 200)
            #expect(ok.header("X-Middleware") == "on")
            let refused = try RawClient.get(port: server.port, "/items/8", headers: ["X-Refuse: yes"], timeout: Self.patience)
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After") == "2")
            #expect(refused.header("X-Middleware") == "on")
            #expect(handled.withLock { $0 } == 1, "the refused request never reached its handler")
            let missing = try RawClient.get(port: server.port, "/nope", timeout: Self.patience)
            #expect(missing.status == 404)
            #expect(missing.header("X-Middleware") == "on")
            let records = recorder.waitForRecords(3)
            #expect(records.map(\.status) == [200, 429, 404])
            #expect(records.map(\.context.route) == ["/items/:id", "/items/:id", "(unmatched)"])
            let first = try #require(records.first)
            #expect(first.context.logFields.map(\.0) == ["prepared_route", "item"])
            #expect(first.context.logFields.map(\.1) == ["/items/:id", "7"])
            #expect(first.context.peer?.description == "127.0.0.1")
            #expect(!first.context.requestID.isEmpty)
        }
    }

    @Test func aRequestThatBreaksTheProtocolIsRecordedAndCarriesTheHeaderLines() async throws {
        try await offPool {
            let recorder = Recorder()
            let server = try startTestServer(Self.router(handled: Locked(0)), middleware: [recorder])
            defer { server.shutdown() }
            let c = try RawClient(port: server.port, timeout: Self.patience)
            try c.send("GET /items/1 HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 400)
            #expect(r.header("X-Middleware") == "on")
            #expect(recorder.waitForRecords(1).first?.context.route == "(invalid)")
        }
    }
}
