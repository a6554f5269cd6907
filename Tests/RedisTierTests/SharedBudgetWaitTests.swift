import Foundation
import Primitives
import Testing
import TestSupport
@testable import RedisTier
@testable import Upstream

/// Issue 20: the wait for the budget all replicas share, and its cancellation, against a
/// real redis-server (the path the fair-queue tests do not reach: the token comes from Redis).
@Suite(.serialized, .offPool) struct SharedBudgetWaitTests {
    static func client(_ budget: RedisRateBudget, perMinute: Double, queueWaitMs: Int) throws -> UpstreamClient {
        var config = UpstreamConfiguration()
        config.ratePerMinute = ["t": perMinute]
        config.sharedBudget = budget
        config.queueWaitMs = queueWaitMs
        return try UpstreamClient(configuration: config)
    }

    /// Takes tokens until the shared bucket refuses (bounded): empty at that moment, however
    /// slowly this machine runs.
    static func drain(_ budget: RedisRateBudget, perMinute: Double, burst: Int) async {
        for _ in 0..<(burst + 100) where await budget.take("t", perMinute: perMinute, burst: burst)?.granted == true {}
    }

    @Test func anEmptySharedBudgetIsWaitedForAndTheCancelledWaitTakesNoToken() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url, timeoutMs: 100)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let up = try FaultUpstream()
        defer { up.stop() }
        // 120/min: a burst of 20, one token every 0.5 s. Another replica spends the burst; the
        // request waits for the next token (its wait limit is far longer) instead of a 429.
        let other = RedisRateBudget(connection: c)
        await Self.drain(other, perMinute: 120, burst: 20)
        let client = try Self.client(RedisRateBudget(connection: c), perMinute: 120, queueWaitMs: 20_000)
        let r = try await UpstreamRequestContext.$current.withValue(.init(requester: ClientKey(high: 0, low: 1))) {
            try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
        }
        #expect(r.status == 200)
        #expect(up.requestCount == 1)
        // A wait cancelled midway spends nothing. At 6/min the next token is 10 s away, beyond
        // anything a loaded machine adds here: the bucket's state in Redis (its GCRA time)
        // must be as the drain left it, and nothing was sent.
        let slow = RedisRateBudget(connection: c, prefix: "slow")
        await Self.drain(slow, perMinute: 6, burst: 1)
        let before = try redis.cli("GET", "slow:rate:t")
        let slowClient = try Self.client(slow, perMinute: 6, queueWaitMs: 60_000)
        let cancelled = Task {
            try await UpstreamRequestContext.$current.withValue(.init(requester: ClientKey(high: 0, low: 2))) {
                try await slowClient.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        cancelled.cancel()
        _ = await cancelled.result
        #expect(!before.isEmpty)
        #expect(try redis.cli("GET", "slow:rate:t") == before)
        #expect(up.requestCount == 1)
    }
}
