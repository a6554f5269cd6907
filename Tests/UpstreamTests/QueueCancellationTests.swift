import Foundation
import Primitives
import Testing
import TestSupport
@testable import Upstream

/// A client key is an address, and an address may be many people (NAT): nothing one
/// request of a key does takes another's place. Only a waiter's own cancellation (its
/// client disconnected) takes it out, and then nothing was sent.
@Suite(.serialized, .offPool) struct QueueCancellationTests {
    static func acquire(_ queue: FairQueue, _ client: UInt64) async -> Task<FairQueue.Outcome, Never> {
        let before = queue.stats.depth
        let task = Task { await queue.acquire(client: FairQueueTests.key(client), maxWait: 5) }
        await FairQueueTests.eventually { queue.stats.depth > before }
        return task
    }

    @Test func twoRequestsOfOneKeyKeepTheirPlacesUntilTheirTurn() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, clock: FairQueueTests.clock)
        let first = await Self.acquire(queue, 1)  // one person behind the address
        let second = await Self.acquire(queue, 1)  // another, searching something else
        #expect(queue.stats.depth == 2)
        tokens.add(2)
        for t in [first, second] {
            if case .granted = await t.value {} else { Issue.record("expected a grant") }
        }
        #expect(tokens.left == 0)
        #expect(queue.stats.waitsCancelled == 0)
    }

    @Test func aCallerThatLeavesWhileQueuedSendsNothingAndCostsItsClientNothing() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        var c = UpstreamConfiguration()
        c.tokenSources = ["t": ManualTokens()]
        c.queueWaitMs = 5000
        let client = try UpstreamClient(configuration: c)
        let request = UpstreamRequest(upstream: "t", url: up.url("/ok"))
        let waiting = Task { try await UpstreamRequestContext.$current.withValue(.init(requester: FairQueueTests.key(7))) { try await client.send(request) } }
        try await Task.sleep(for: .milliseconds(200))
        waiting.cancel()
        let result = await waiting.result
        if case .failure(let e) = result { #expect(e as? UpstreamError == .cancelledWhileQueued) } else { Issue.record("expected a cancellation") }
        // Refused before sending: the route gives the client's quota token back.
        #expect(UpstreamError.cancelledWhileQueued.isOwnRefusal && UpstreamError.cancelledWhileQueued.code == "upstream_cancelled")
        #expect(up.requestCount == 0)
    }
}

/// Issue 20: one budget for a whole answer: a call made past the caller's deadline fails at once.
@Suite(.offPool) struct DeadlineTests {
    @Test func aCallPastTheDeadlineTimesOutAtOnceAndOneWithinItIsCut() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try UpstreamClient(configuration: UpstreamConfiguration())
        let start = Date()
        await expectError(.timeout, within: 5) {
            try await UpstreamRequestContext.$current.withValue(.init(deadline: NativeThread.monotonicSeconds() - 1)) {
                try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok")))
            }
        }
        #expect(up.requestCount == 0)
        // Cut by its 0.3 s deadline, not waited out: the upstream would answer after 30 s. (How
        // near the deadline the answer comes is measured by make bench, not bounded here.)
        await expectError(.timeout, within: 15) {
            try await UpstreamRequestContext.$current.withValue(.init(deadline: NativeThread.monotonicSeconds() + 0.3)) {
                try await client.send(UpstreamRequest(upstream: "t", url: up.url("/slow?ms=30000")))
            }
        }
        #expect(Date().timeIntervalSince(start) < 15)
    }
}
