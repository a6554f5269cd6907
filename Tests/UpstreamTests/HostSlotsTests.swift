import Testing
import TestSupport

@testable import Upstream

/// Issue 55: connections to one host shared fairly, so one client's flood of feeds on a big
/// hosting platform cannot push another client's one feed past its deadline.
@Suite(.serialized, .offPool) struct HostSlotsTests {
    static let epoch = ContinuousClock.now
    static let clock: @Sendable () -> Double = { (ContinuousClock.now - HostSlotsTests.epoch) / .seconds(1) }
    static func key(_ n: UInt64) -> ClientKey { ClientKey(high: 0, low: n) }

    /// Starts a waiter that records `label` when granted; waits until it is queued.
    static func enqueue(_ slots: HostSlots, host: String = "feeds.example:443", _ label: String, client: UInt64?, order: Locked<[String]>, wait: Double = 120)
        async -> Task<HostSlots.Outcome, Never>
    {
        let before = slots.stats.waiting
        let task = Task {
            let outcome = await slots.acquire(host: host, client: client.map(key), deadline: clock() + wait)
            if case .granted = outcome { order.withLock { $0.append(label) } }
            return outcome
        }
        await FairQueueTests.eventually { slots.stats.waiting > before }
        return task
    }

    @Test func aFloodDoesNotSitInFrontOfAnotherClientsOneRequest() async {
        let slots = HostSlots(limit: 2, clock: Self.clock)
        let order = Locked<[String]>([])
        for _ in 0..<2 { #expect(await slots.acquire(host: "feeds.example:443", client: Self.key(1), deadline: Self.clock() + 60) == .granted(waited: 0)) }
        // Client 1's flood queues first, then client 2's one request, then background work.
        var waiters: [Task<HostSlots.Outcome, Never>] = []
        for n in 0..<6 { waiters.append(await Self.enqueue(slots, "flood\(n)", client: 1, order: order)) }
        waiters.append(await Self.enqueue(slots, "one", client: 2, order: order))
        waiters.append(await Self.enqueue(slots, "background", client: nil, order: order))
        // Another host is not held up by this one.
        #expect(await slots.acquire(host: "other.example:80", client: Self.key(1), deadline: Self.clock() + 60) == .granted(waited: 0))
        for n in 1...8 {
            slots.release(host: "feeds.example:443")
            await FairQueueTests.eventually { order.withLock { $0.count } == n }
        }
        for w in waiters { _ = await w.value }
        // The flood's first waiter had arrived first; then the others each get their turn before the flood's next.
        #expect(order.withLock { $0 } == ["flood0", "one", "background", "flood1", "flood2", "flood3", "flood4", "flood5"])
        #expect(slots.stats.waiting == 0 && slots.stats.waitsGranted == 8)
    }

    @Test func aWaiterLeavesAtItsDeadlineOrWhenCancelled() async {
        let slots = HostSlots(limit: 1, clock: Self.clock)
        #expect(await slots.acquire(host: "h:80", client: Self.key(1), deadline: Self.clock() + 60) == .granted(waited: 0))
        let order = Locked<[String]>([])
        // Queued, and let go at its deadline (the slot is never freed meanwhile).
        #expect(await slots.acquire(host: "h:80", client: Self.key(2), deadline: Self.clock() + 0.05) == .timedOut)
        let gone = await Self.enqueue(slots, host: "h:80", "gone", client: 3, order: order)
        gone.cancel()
        #expect(await gone.value == .cancelled)
        #expect(slots.stats.waiting == 0 && slots.stats.waitsTimedOut == 1)
        // The slot comes back whole: the next request takes it at once.
        slots.release(host: "h:80")
        #expect(await slots.acquire(host: "h:80", client: Self.key(4), deadline: Self.clock() + 60) == .granted(waited: 0))
        // A deadline already passed is refused without queueing.
        #expect(await slots.acquire(host: "h:80", client: Self.key(5), deadline: Self.clock() - 1) == .timedOut)
    }

    @Test func hostAndPortNameTheConnectionPool() {
        #expect(UpstreamURL("https://Feeds.Example.com/rss").hostAndPort == "feeds.example.com:443")
        #expect(UpstreamURL("http://feeds.example.com:8080/rss?x").hostAndPort == "feeds.example.com:8080")
        #expect(UpstreamURL("http://user:pw@[::1]:9/x").hostAndPort == "[::1]:9")
        #expect(UpstreamURL("HTTP://a.b").hostAndPort == "a.b:80")
        #expect(UpstreamURL("mailto:x").hostAndPort == nil)
    }
}
