import Synchronization
import Testing
import TestSupport
import Primitives
@testable import ResponseCache

/// Issue 21: a flight whose every caller went away is cancelled (its loader sees it), one
/// that still has a caller, or that nobody called for (a background refresh), is not.
@Suite(.offPool) struct FlightCancellationTests {
    let clock = ManualClock()
    let policy = FreshnessPolicy(ttl: 60, staleWhileRevalidate: 600, staleIfError: 0)

    /// A loader that waits until cancelled or released, and says which.
    final class Gate: Sendable {
        let cancelled = Atomic<Bool>(false)
        let released = Atomic<Bool>(false)
        let started = Atomic<Int>(0)
        var wasCancelled: Bool { cancelled.load(ordering: .relaxed) }
    }

    func loader(_ gate: Gate) -> ResponseCache.Loader {
        let clock = self.clock, policy = self.policy
        return {
            gate.started.add(1, ordering: .relaxed)
            while !gate.released.load(ordering: .relaxed) {
                if Task.isCancelled {
                    gate.cancelled.store(true, ordering: .relaxed)
                    return .failure(CacheLoadError(status: 502, code: "upstream_cancelled", message: "cancelled"))
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return .success(CachedResponse(body: Array("{}".utf8), gzippedBody: nil, storedAt: clock.now, policy: policy))
        }
    }

    static func waitUntil(_ condition: () -> Bool) async {
        for _ in 0..<2000 where !condition() { try? await Task.sleep(for: .milliseconds(5)) }
    }

    @Test func theLastCallerLeavingCancelsTheFlight() async {
        let clock = self.clock
        let cache = ResponseCache(maxBytes: 1 << 20, clock: { clock.now })
        let gate = Gate()
        let a = Task { await cache.fetch("k", loader: loader(gate)) }
        let b = Task { await cache.fetch("k", loader: loader(gate)) }
        await Self.waitUntil { gate.started.load(ordering: .relaxed) == 1 && cache.callers(of: "k") == 2 }
        a.cancel()
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!gate.wasCancelled)  // b still wants it
        b.cancel()
        await Self.waitUntil { gate.cancelled.load(ordering: .relaxed) }
        #expect(gate.wasCancelled)
        // The next caller starts afresh instead of joining the cancelled flight.
        let fresh = Gate()
        fresh.released.store(true, ordering: .relaxed)
        if case .loaded = await cache.fetch("k", loader: loader(fresh)) {} else { Issue.record("expected a fresh load") }
        _ = await (a.value, b.value)
    }

    /// Issue 55: a caller whose own deadline passes while it waits on a flight someone else
    /// started with a longer budget (a library batch's load) gets upstream_timeout at its
    /// deadline; the flight goes on for the one who started it.
    @Test func aCallerLeavesALongerFlightAtItsOwnDeadline() async {
        let clock = self.clock
        let cache = ResponseCache(maxBytes: 1 << 20, clock: { clock.now })
        let gate = Gate()
        let started = Task { await cache.lookupOrFetch("k", admit: { true }, refreshing: { _ in await self.loader(gate)() }) }
        await Self.waitUntil { gate.started.load(ordering: .relaxed) == 1 }
        clock.advance(5)
        let joined = await cache.lookupOrFetch("k", waitUntil: clock.now - 1, admit: { true }, refreshing: { _ in await self.loader(gate)() })
        guard case .failed(let error)? = joined else {
            Issue.record("expected the caller's deadline: \(String(describing: joined))")
            return
        }
        #expect(error.status == 504 && error.code == "upstream_timeout")
        #expect(!gate.wasCancelled && gate.started.load(ordering: .relaxed) == 1)
        gate.released.store(true, ordering: .relaxed)
        if case .loaded? = await started.value {} else { Issue.record("the flight should have gone on for its caller") }
    }

    /// Issue 66: a caller whose flight ends before its deadline leaves nothing behind: the
    /// deadline's timer (which held the flight and its answer) ends with the wait, not at the
    /// deadline an hour later.
    @Test func aFlightEndingBeforeTheDeadlineLeavesNoTimerBehind() async {
        let clock = self.clock
        let cache = ResponseCache(maxBytes: 1 << 20, clock: { clock.now })
        let gate = Gate()
        gate.released.store(true, ordering: .relaxed)
        for i in 0..<50 {
            let outcome = await cache.lookupOrFetch("k\(i)", waitUntil: clock.now + 3600, admit: { true }, refreshing: { _ in await self.loader(gate)() })
            guard case .loaded? = outcome else {
                Issue.record("expected a load: \(String(describing: outcome))")
                return
            }
        }
        await Self.waitUntil { cache.waitingWithDeadline == 0 }
        #expect(cache.waitingWithDeadline == 0)
    }

    @Test func aBackgroundRefreshIsNeverCancelledByACallerWhoJoinedIt() async {
        let clock = self.clock
        let cache = ResponseCache(maxBytes: 1 << 20, clock: { clock.now })
        let gate = Gate()
        cache.refreshInBackground("k", loader: loader(gate))
        await Self.waitUntil { gate.started.load(ordering: .relaxed) == 1 }
        let joined = Task { await cache.fetch("k", loader: loader(gate)) }
        try? await Task.sleep(for: .milliseconds(20))
        joined.cancel()
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!gate.wasCancelled)
        gate.released.store(true, ordering: .relaxed)
        _ = await joined.value
        await Self.waitUntil { cache.lookup("k").isFresh }
        #expect(cache.lookup("k").isFresh)
    }
}

extension ResponseCache.Lookup {
    var isFresh: Bool {
        if case .fresh = self { return true }
        return false
    }
}
