import Foundation
import Primitives
import Testing
import TestSupport
import Upstream

@testable import RedisTier

/// Redis replies read like network input: a reply no script of ours would give is absent.
@Suite(.offPool) struct RedisReplyValidationTests {
    private func budget(answering reply: String) async throws -> RateDecision? {
        let fake = try FakeRedis(.scripted { _ in reply })
        defer { fake.stop() }
        let c = try connection(fake.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        return await RedisRateBudget(connection: c).take("itunes", perMinute: 60, burst: 5)
    }

    @Test func rateRepliesOutsideWhatTheScriptAnswersReadAsUnavailable() async throws {
        // {0, 0} would send every miss straight back to Redis: a spin until its deadline.
        #expect(try await budget(answering: "*2\r\n:0\r\n:0\r\n") == nil)
        #expect(try await budget(answering: "*2\r\n:0\r\n:-5\r\n") == nil)
        // Longer than one emission interval (1 s at 60/min).
        #expect(try await budget(answering: "*2\r\n:0\r\n:1001\r\n") == nil)
        #expect(try await budget(answering: "*2\r\n:2\r\n:0\r\n") == nil)
        #expect(try await budget(answering: "*2\r\n:1\r\n:250\r\n") == nil)
        #expect(try await budget(answering: "*2\r\n:0\r\n:250\r\n") == RateDecision(granted: false, retryAfter: 0.25))
        #expect(try await budget(answering: "*2\r\n:1\r\n:0\r\n") == RateDecision(granted: true, retryAfter: 0))
    }

    @Test func failureMarkersNameOnlyCodesThisServiceWrites() {
        let codes: Set<String> = ["upstream_timeout"]
        let good = Array("504\nupstream_timeout\nthe upstream timed out".utf8)
        #expect(RedisSharedCache.failure(good, codes: codes) != nil)
        // Anything else would become a metrics label (unbounded series, broken exposition).
        for code in ["evil\"} 1\n", "upstream_timeout ", "", String(repeating: "a", count: 900)] {
            #expect(RedisSharedCache.failure(Array("504\n\(code)\nmessage".utf8), codes: codes) == nil)
        }
    }

    @Test func aReplyPastTheCapDropsTheConnectionInsteadOfGrowingTheBuffer() async throws {
        let big = String(repeating: "x", count: 3 << 20)
        let fake = try FakeRedis(.scripted { command in command.first == "GET" ? "$\(big.utf8.count)\r\n\(big)\r\n" : "$2\r\nok\r\n" })
        defer { fake.stop() }
        var settings = RedisConnection.Settings(endpoint: try RedisEndpoint(url: fake.url))
        settings.commandTimeoutMs = 500
        settings.scripts = []
        settings.maxReplyBytes = 1 << 20
        let c = RedisConnection(settings: settings)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        #expect(await c.command(["ECHO", "ok"], operation: "t") == .success(.bulk(Array("ok".utf8))))
        guard case .failure = await c.command(["GET", "big"], operation: "t") else {
            Issue.record("a 3 MiB reply was read with a 1 MiB cap")
            return
        }
    }
}
