import Testing
import TestSupport
@testable import Upstream

/// Tokens only when the test hands them out; asks to be polled every 10 ms.
final class ManualTokens: TokenSource {
    let perSecond: Double
    let retryAfter: Double
    private let tokens = Locked(0)

    init(perSecond: Double = 100, retryAfter: Double = 0.01) {
        self.perSecond = perSecond
        self.retryAfter = retryAfter
    }

    func add(_ n: Int = 1) { tokens.withLock { $0 += n } }
    var left: Int { tokens.withLock { $0 } }

    func take(now: Double) -> (granted: Bool, retryAfter: Double) {
        tokens.withLock { t in
            guard t > 0 else { return (false, retryAfter) }
            t -= 1
            return (true, 0)
        }
    }
}

/// The pump runs on the cooperative pool, which blocking tests elsewhere in this process may
/// hold for seconds on a 2-core machine: the checks are about order and state, with generous
/// time limits.
@Suite(.serialized, .offPool) struct FairQueueTests {
    static let epoch = ContinuousClock.now
    static let clock: @Sendable () -> Double = { (ContinuousClock.now - FairQueueTests.epoch) / .seconds(1) }

    static func key(_ n: UInt64) -> ClientKey { ClientKey(high: 0, low: n) }

    /// Polls until `condition` holds (or fails the test after `seconds`).
    static func eventually(_ seconds: Double = 20, _ condition: () -> Bool) async {
        let deadline = clock() + seconds
        while !condition() {
            guard clock() < deadline else {
                Issue.record("condition not met in \(seconds) s")
                return
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Starts one waiter that records `label` in `order` when granted. It waits up to two
    /// minutes: these tests are about order, and a busy machine has held a queue of seven
    /// past 5 s (their waiters then timed out).
    static func enqueue(
        _ queue: FairQueue, _ label: String, _ client: UInt64, order: Locked<[String]>, maxWait: Double = 120
    ) async -> Task<FairQueue.Outcome, Never> {
        let before = queue.stats.depth
        let task = Task {
            let outcome = await queue.acquire(client: key(client), maxWait: maxWait)
            if case .granted = outcome { order.withLock { $0.append(label) } }
            return outcome
        }
        await eventually { queue.stats.depth == before + 1 }
        return task
    }

    @Test func tokensAlternateBetweenClientsNotFirstComeFirstServed() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, settings: .init(perClient: 10), clock: Self.clock)
        let order = Locked<[String]>([])
        var tasks: [Task<FairQueue.Outcome, Never>] = []
        for i in 1...4 { tasks.append(await Self.enqueue(queue, "a\(i)", 1, order: order)) }  // the busy client queued first
        for i in 1...2 { tasks.append(await Self.enqueue(queue, "b\(i)", 2, order: order)) }
        tasks.append(await Self.enqueue(queue, "c1", 3, order: order))
        for n in 1...7 {
            tokens.add()
            await Self.eventually { order.withLock { $0.count } == n }
        }
        #expect(order.withLock { $0 } == ["a1", "b1", "c1", "a2", "b2", "a3", "a4"])
        for t in tasks { if case .granted = await t.value {} else { Issue.record("not granted") } }
        #expect(queue.stats.depth == 0)
        #expect(queue.stats.waitsGranted == 7)
    }

    @Test func aClientJustServedWaitsBehindOneThatWasNot() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, clock: Self.clock)
        tokens.add(2)
        #expect(await queue.acquire(client: Self.key(1), maxWait: 1) == .granted(waited: 0))
        #expect(await queue.acquire(client: Self.key(1), maxWait: 1) == .granted(waited: 0))
        let order = Locked<[String]>([])
        let a = await Self.enqueue(queue, "a", 1, order: order)
        let b = await Self.enqueue(queue, "b", 2, order: order)
        tokens.add()
        await Self.eventually { order.withLock { $0.count } == 1 }
        #expect(order.withLock { $0 } == ["b"])
        tokens.add()
        _ = await a.value
        _ = await b.value
        #expect(order.withLock { $0 } == ["b", "a"])
    }

    @Test func eachClientsQueueIsBounded() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, settings: .init(perClient: 2), clock: Self.clock)
        let order = Locked<[String]>([])
        let a1 = await Self.enqueue(queue, "a1", 1, order: order)
        let a2 = await Self.enqueue(queue, "a2", 1, order: order)
        guard case .rejected(.queueFull, let after) = await queue.acquire(client: Self.key(1), maxWait: 5) else {
            Issue.record("third waiter of one client was queued")
            return
        }
        #expect(after > 0)
        let b = await Self.enqueue(queue, "b", 2, order: order)  // another client still gets in
        tokens.add(3)
        for t in [a1, a2, b] { if case .granted = await t.value {} else { Issue.record("not granted") } }
        #expect(queue.stats.rejected["queue_full"] == 1)
    }

    @Test func aWaitThatCannotFitTheLimitIsRefusedAtOnce() async {
        let queue = FairQueue(source: ManualTokens(perSecond: 1, retryAfter: 120), clock: Self.clock)
        let start = Self.clock()
        guard case .rejected(.waitLimit, let after) = await queue.acquire(client: Self.key(1), maxWait: 60) else {
            Issue.record("expected wait_limit")
            return
        }
        #expect(after >= 120)
        #expect(Self.clock() - start < 30, "refused at once, not after its 60 s wait")
        #expect(queue.stats.depth == 0)
    }

    @Test func aWaiterGivesUpAtItsDeadlineAndLeavesNothingBehind() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, clock: Self.clock)
        let start = Self.clock()
        guard case .rejected(.timeout, let after) = await queue.acquire(client: Self.key(1), maxWait: 0.15) else {
            Issue.record("expected queue_timeout")
            return
        }
        let waited = Self.clock() - start
        #expect(waited >= 0.14 && waited < 10)
        #expect(after >= 1)
        #expect(queue.stats.depth == 0 && queue.stats.waitsTimedOut == 1)
        tokens.add()  // the token was not spent on the one who left
        #expect(await queue.acquire(client: Self.key(2), maxWait: 0) == .granted(waited: 0))
    }

    @Test func aCancelledWaiterLeavesTheQueueAndSpendsNoToken() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, clock: Self.clock)
        let order = Locked<[String]>([])
        let a = await Self.enqueue(queue, "a", 1, order: order)
        let b = await Self.enqueue(queue, "b", 2, order: order)
        a.cancel()
        #expect(await a.value == .rejected(.cancelled, retryAfter: 0))
        #expect(queue.stats.depth == 1 && queue.stats.waitsCancelled == 1)
        tokens.add()
        if case .granted = await b.value {} else { Issue.record("b not granted") }
        #expect(order.withLock { $0 } == ["b"])
        // Cancelled before it even asked: refused, never queued.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await queue.acquire(client: Self.key(3), maxWait: 5)
        }
        guard case .rejected = await early.value else {
            Issue.record("a cancelled task was queued")
            return
        }
        #expect(queue.stats.depth == 0)
    }

    @Test func backgroundWorkNeverWaitsNorJumpsTheQueue() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, clock: Self.clock)
        guard case .rejected(.noToken, _) = await queue.acquire(client: nil, maxWait: 5) else {
            Issue.record("anonymous request waited")
            return
        }
        let order = Locked<[String]>([])
        let a = await Self.enqueue(queue, "a", 1, order: order)
        // A token appears while a client waits: background work does not take it first.
        tokens.add()
        guard case .rejected(.noToken, _) = await queue.acquire(client: nil, maxWait: 5) else {
            Issue.record("anonymous request jumped the queue")
            return
        }
        if case .granted = await a.value {} else { Issue.record("a not granted") }
    }

    @Test func manyClientsManyWaitersAllResolve() async {
        let tokens = ManualTokens()
        let queue = FairQueue(source: tokens, settings: .init(perClient: 4), clock: Self.clock)
        let outcomes = await withTaskGroup(of: FairQueue.Outcome.self) { group in
            for i in 0..<64 { group.addTask { await queue.acquire(client: Self.key(UInt64(i % 8)), maxWait: 0.3) } }
            group.addTask {
                for _ in 0..<16 {
                    tokens.add()
                    try? await Task.sleep(for: .milliseconds(5))
                }
                return .granted(waited: -1)
            }
            var all: [FairQueue.Outcome] = []
            for await o in group { all.append(o) }
            return all
        }
        let granted = outcomes.filter { if case .granted(let w) = $0 { return w >= 0 } else { return false } }.count
        #expect(granted + tokens.left == 16)
        #expect(queue.stats.depth == 0)
    }
}

/// The client in front of its queue: who is asking comes from a task-local.
@Suite(.serialized, .offPool) struct UpstreamClientQueueTests {
    @Test func aClientsRequestWaitsForTheNextTokenAndBackgroundWorkDoesNot() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let tokens = ManualTokens()
        var c = UpstreamConfiguration()
        c.timeoutMs = 20_000
        c.queueWaitMs = 15_000
        c.tokenSources = ["itunes": tokens]
        let client = try UpstreamClient(configuration: c)
        let request = UpstreamRequest(upstream: "itunes", url: up.url("/ok"))
        // No requester (a background refresh): refused at once, as before the queue.
        do {
            _ = try await client.send(request)
            Issue.record("background request waited or was sent")
        } catch {
            guard case .rateLimited = error else { throw error }
        }
        let waiting = Task {
            try await UpstreamRequestContext.$current.withValue(.init(requester: ClientKey(high: 0, low: 7))) { try await client.send(request).status }
        }
        await FairQueueTests.eventually { client.queueStats().first { $0.upstream == "itunes" }?.stats.depth == 1 }
        #expect(up.requestCount == 0)
        tokens.add()
        #expect(try await waiting.value == 200)
        #expect(up.requestCount == 1)
        #expect(client.queueStats().first { $0.upstream == "itunes" }?.stats.waitsGranted == 1)
    }
}
