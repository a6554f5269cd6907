import Foundation
import Primitives
import Testing
import TestSupport
@testable import RedisTier
@testable import Upstream

/// Issue 20: the wait for the budget all replicas share, and its cancellation, against a
/// real redis-server (the path the fair-queue tests do not reach: the token comes from Redis).
@Suite(.serialized) struct SharedBudgetWaitTests {
    static func client(_ c: RedisConnection, perMinute: Double, queueWaitMs: Int) throws -> UpstreamClient {
        var config = UpstreamConfiguration()
        config.ratePerMinute = ["t": perMinute]
        config.sharedBudget = RedisRateBudget(connection: c)
        config.queueWaitMs = queueWaitMs
        return try UpstreamClient(configuration: config)
    }

    @Test func anEmptySharedBudgetIsWaitedForAndTheCancelledWaitTakesNoToken() async throws {
        let redis = try RedisServerProcess()
        let c = try connection(redis.url, timeoutMs: 100)
        defer { c.stop() }
        #expect(waitUntil { c.isUp })
        let up = try FaultUpstream()
        defer { up.stop() }
        // 120/min: a burst of 20, one token every 0.5 s. Another replica spends the burst.
        let other = RedisRateBudget(connection: c)
        for _ in 0..<20 { _ = await other.take("t", perMinute: 120, burst: 20) }
        let client = try Self.client(c, perMinute: 120, queueWaitMs: 2000)
        let start = Date()
        let r = try await UpstreamRequestContext.$current.withValue(.init(requester: ClientKey(high: 0, low: 1))) {
            try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
        }
        let waited = Date().timeIntervalSince(start)
        #expect(r.status == 200)
        #expect(waited > 0.05 && waited < 1.5, "\(waited)")  // waited for the shared bucket, not refused
        // A wait cancelled midway spends nothing: the next token is still there for the next caller.
        for _ in 0..<5 { _ = await other.take("t", perMinute: 120, burst: 20) }
        let cancelled = Task {
            try await UpstreamRequestContext.$current.withValue(.init(requester: ClientKey(high: 0, low: 2))) {
                try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        cancelled.cancel()
        _ = await cancelled.result
        try await Task.sleep(for: .milliseconds(600))  // past the next token
        #expect(up.requestCount == 1)
        #expect(await other.take("t", perMinute: 120, burst: 20)?.granted == true)
    }
}
