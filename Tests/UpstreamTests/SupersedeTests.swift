import Foundation
import Primitives
import Testing
import TestSupport
@testable import Upstream

/// Issue 21: a client's newer request in a lane replaces its own older one still queued.
@Suite(.serialized) struct SupersedeTests {
    static func acquire(_ queue: FairQueue, _ client: UInt64, lane: String?) async -> Task<FairQueue.Outcome, Never> {
        let before = queue.stats.depth
        let task = Task { await queue.acquire(client: FairQueueTests.key(client), maxWait: 5, lane: lane) }
        await FairQueueTests.eventually { queue.stats.depth > before }
        return task
    }

    @Test func aNewerRequestInTheLaneReplacesTheQueuedOneAndSpendsNoToken() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, clock: FairQueueTests.clock)
        let older = await Self.acquire(queue, 1, lane: "search")
        let other = await Self.acquire(queue, 2, lane: "search")  // another client's: untouched
        let unlaned = await Self.acquire(queue, 1, lane: nil)  // the same client, another kind of request: untouched
        let newer = Task { await queue.acquire(client: FairQueueTests.key(1), maxWait: 5, lane: "search") }
        #expect(await older.value == .rejected(.superseded, retryAfter: 0))
        await FairQueueTests.eventually { queue.stats.depth == 3 }
        #expect(queue.stats.waitsSuperseded == 1)
        tokens.add(3)
        for t in [other, unlaned, newer] {
            if case .granted = await t.value {} else { Issue.record("expected a grant") }
        }
        #expect(tokens.left == 0)
    }

    @Test func theSupersededRequestAnswersAtOnceAsItsOwnError() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        var c = UpstreamConfiguration()
        c.tokenSources = ["t": ManualTokens()]
        c.queueWaitMs = 5000
        let client = try UpstreamClient(configuration: c)
        let request = {
            var r = UpstreamRequest(upstream: "t", url: up.url("/ok"))
            r.supersedeLane = "search"
            return r
        }()
        let older = Task { try await UpstreamRequestContext.$current.withValue(.init(requester: FairQueueTests.key(7))) { try await client.send(request) } }
        try await Task.sleep(for: .milliseconds(200))
        let newer = Task { try await UpstreamRequestContext.$current.withValue(.init(requester: FairQueueTests.key(7))) { try await client.send(request) } }
        let result = await older.result
        if case .failure(let e) = result { #expect(e as? UpstreamError == .superseded) } else { Issue.record("expected superseded") }
        #expect(UpstreamError.superseded.clientStatus == 503 && UpstreamError.superseded.code == "superseded")
        newer.cancel()
        _ = await newer.result
        #expect(up.requestCount == 0)
    }
}

/// Issue 20: one budget for a whole answer: a call made past the caller's deadline fails at once.
@Suite struct DeadlineTests {
    @Test func aCallPastTheDeadlineTimesOutAtOnceAndOneWithinItIsCut() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try UpstreamClient(configuration: UpstreamConfiguration())
        let start = Date()
        await expectError(.timeout, within: 0.5) {
            try await UpstreamRequestContext.$current.withValue(.init(deadline: NativeThread.monotonicSeconds() - 1)) {
                try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
            }
        }
        #expect(up.requestCount == 0)
        await expectError(.timeout, within: 2) {
            try await UpstreamRequestContext.$current.withValue(.init(deadline: NativeThread.monotonicSeconds() + 0.3)) {
                try await client.send(UpstreamRequest(upstream: "t", url: up.url("/slow?ms=3000")))
            }
        }
        #expect(Date().timeIntervalSince(start) < 2.5)
    }
}
