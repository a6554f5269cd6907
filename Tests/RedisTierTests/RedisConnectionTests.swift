import Foundation
import Primitives
import Testing
import TestSupport
@testable import RedisTier

/// A connection for tests: a command deadline (1 s) that a loaded machine keeps, unless the
/// test is about deadlines and sets its own.
func connection(_ url: String, timeoutMs: Int = 1000, scripts: [String] = RedisConnection.tierScripts) throws -> RedisConnection {
    var settings = RedisConnection.Settings(endpoint: try RedisEndpoint(url: url))
    settings.commandTimeoutMs = timeoutMs
    settings.scripts = scripts
    return RedisConnection(settings: settings)
}

@Suite(.serialized, .offPool) struct RedisConnectionTests {
    @Test func aRefusedHandshakeIsReportedWithRedisOwnWords() async throws {
        let redis = try await offPool { try RedisServerProcess() }  // no password configured: AUTH is refused
        let events = Locked<[String]>([])
        var settings = RedisConnection.Settings(endpoint: try RedisEndpoint(url: redis.url.replacingOccurrences(of: "redis://", with: "redis://:wrong@")))
        settings.scripts = RedisConnection.tierScripts
        let c = RedisConnection(settings: settings) { event in
            if case .state(let up, let reason) = event { events.withLock { $0.append("\(up) \(reason)") } }
        }
        defer { c.stop() }
        #expect(await eventually { !events.withLock { $0 }.isEmpty })
        let seen = events.withLock { $0 }
        #expect(seen.first?.hasPrefix("false AUTH refused: ERR") == true, "\(seen)")
        try await Task.sleep(for: .milliseconds(300))  // retries with the same reason are not reported again
        #expect(events.withLock { $0 }.count == 1, "\(events.withLock { $0 })")
        #expect(!c.isUp)
    }

    /// A command the connection thread never answers (as when hiredis fails to take it)
    /// still returns within the caller's own deadline, and the connection keeps working.
    @Test func anUnansweredCommandTimesOutOnTheCallersSide() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url, timeoutMs: 30)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        c.losesRepliesForTesting.store(true, ordering: .relaxed)
        let start = Date()
        let lost = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<20 { group.addTask { await c.command(["ECHO", "lost\(i)"], operation: "t") == .failure(.timeout) } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        let waited = Date().timeIntervalSince(start)
        #expect(lost == 20)
        // The callers' own deadline (30 ms + the slack) answered them: no hang, whatever a loaded
        // machine adds to that.
        #expect(waited < 5, "\(waited)")
        c.losesRepliesForTesting.store(false, ordering: .relaxed)
        // Silent since those timeouts: commands fail at once for a deadline, then one finds it answering.
        var back = false
        for _ in 0..<200 where !back {
            back = await c.command(["ECHO", "back"], operation: "t") == .success(.bulk(Array("back".utf8)))
            if !back { try? await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(back)
    }

    @Test func binarySafeRoundTripAndPipelining() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let value: [UInt8] = [0, 0xFF, 0x0D, 0x0A, 0x24, 0x2A] + Array(repeating: 0x41, count: 9000)
        #expect(await c.command([Array("SET".utf8), Array("k".utf8), value], operation: "t") == .success(.status("OK")))
        #expect(await c.command(["GET", "k"], operation: "t") == .success(.bulk(value)))
        // Many concurrent commands share the connection (pipelined) and each gets its own reply.
        let replies = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<500 {
                group.addTask { await c.command(["ECHO", "n\(i)"], operation: "t") == .success(.bulk(Array("n\(i)".utf8))) }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(replies == 500)
        #expect(await c.command(["INCR", "k"], operation: "t") == .failure(.error("ERR value is not an integer or out of range")))
    }

    @Test func urlsParseAndBadOnesAreRefused() throws {
        let e = try RedisEndpoint(url: "redis://user:secret@cache.internal:6380/3")
        #expect(e.host == "cache.internal" && e.port == 6380 && e.database == 3 && e.username == "user" && e.password == "secret")
        #expect(try RedisEndpoint(url: "redis://10.0.0.5").port == 6379)
        #expect(try RedisEndpoint(url: "redis://[::1]:7000/").host == "::1")
        for bad in ["rediss://x:6379", "http://x", "redis://", "redis://x:0", "redis://x:99999", "redis://x/abc"] {
            #expect(throws: RedisEndpoint.InvalidURL.self) { try RedisEndpoint(url: bad) }
        }
    }

    @Test func nothingListeningIsUnavailableAtOnce() async throws {
        var settings = RedisConnection.Settings(endpoint: try RedisEndpoint(url: "redis://127.0.0.1:\(try RedisServerProcess.freePort())"))
        settings.scripts = RedisConnection.tierScripts
        let reasons = Locked<[String]>([])
        let c = RedisConnection(settings: settings) { event in
            if case .state(false, let reason) = event { reasons.withLock { $0.append(reason) } }
        }
        defer { c.stop() }
        // It has tried and says why (hiredis' words), and keeps retrying without making callers wait.
        #expect(await eventually { !reasons.withLock { $0 }.isEmpty })
        #expect(reasons.withLock { $0 }.first?.lowercased().contains("refused") == true, "\(reasons.withLock { $0 })")
        for _ in 0..<20 {
            // Unavailable, not a timeout: it did not wait for the command deadline.
            #expect(await c.command(["PING"], operation: "t") == .failure(.unavailable))
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(!c.isUp)
    }

    @Test func aStoppedServerTimesOutWithinTheDeadlineThenRecovers() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url, timeoutMs: 25)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        redis.pause()
        let start = Date()
        #expect(await c.command(["PING"], operation: "t") == .failure(.timeout))
        #expect(Date().timeIntervalSince(start) < 5)  // answered by the deadline, not hanging
        // Down now: later commands fail instead of hanging. Unavailable at once, unless a busy
        // machine let the reconnect start meanwhile: its handshake with the stopped server then
        // times out once more, by the same deadline.
        let second = Date()
        let again = await c.command(["PING"], operation: "t")
        #expect(again == .failure(.unavailable) || again == .failure(.timeout), "\(again)")
        #expect(Date().timeIntervalSince(second) < 5)
        redis.resume()
        #expect(await eventually { c.isUp })
        var pong = false
        for _ in 0..<500 where !pong {
            pong = await c.command(["PING"], operation: "t") == .success(.status("PONG"))
            if !pong { try? await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(pong)
    }

    @Test func aRestartedEmptyServerIsReconnectedAndScriptsReloaded() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        redis.kill9()
        #expect(await eventually { !c.isUp })
        try await offPool { try redis.start() }
        #expect(await eventually { c.isUp })
        let budget = RedisRateBudget(connection: c)
        #expect(await budget.take("itunes", perMinute: 60, burst: 2)?.granted == true)
    }

    @Test func aStallingSocketIsATimeoutAndAClosingOneUnavailable() async throws {
        let stall = try FakeRedis(.stall)
        defer { stall.stop() }
        // The handshake (SCRIPT LOAD) itself stalls: the connection never comes up.
        let c = try connection(stall.url, timeoutMs: 30)
        defer { c.stop() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!c.isUp)
        #expect(await c.command(["PING"], operation: "t") == .failure(.unavailable))

        let noScripts = try connection(stall.url, timeoutMs: 30, scripts: [])
        defer { noScripts.stop() }
        #expect(await eventually { noScripts.isUp })
        let start = Date()
        #expect(await noScripts.command(["GET", "x"], operation: "t") == .failure(.timeout))
        #expect(Date().timeIntervalSince(start) < 10, "answered at its deadline, never left waiting")

        let closer = try FakeRedis(.close)
        defer { closer.stop() }
        let d = try connection(closer.url, scripts: [])
        defer { d.stop() }
        #expect(await eventually { d.isUp })
        #expect(await d.command(["GET", "x"], operation: "t") == .failure(.unavailable))
    }

    @Test func noscriptFallsBackToEval() async throws {
        let fake = try FakeRedis(.lostScripts)
        defer { fake.stop() }
        let c = try connection(fake.url, scripts: ["return 7"])
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        #expect(await c.script(0, keys: [], args: [], operation: "t") == .success(.integer(7)))
        let names = fake.commands.withLock { $0.map { $0.first ?? "" } }.filter { $0 != "PING" }  // the idle check's
        #expect(names.suffix(2) == ["EVALSHA", "EVAL"])
    }
}
