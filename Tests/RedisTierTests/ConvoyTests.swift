import Foundation
import Primitives
import ResponseCache
import Synchronization
import Testing
import TestSupport
@testable import RedisTier

/// Issue 20: no convoys and bounded waits across replicas, with a real redis-server. Two
/// caches stand for two replicas sharing one tier.
@Suite(.serialized) struct ConvoyTests {
    static let policy = FreshnessPolicy(ttl: 60, staleWhileRevalidate: 0, staleIfError: 0)

    static func replica(_ tier: RedisSharedCache, maxValueBytes: Int = 1 << 20, waitLimit: Double = 4) -> ResponseCache {
        var p = SharedTierPolicy(waitLimit: waitLimit, maxValueBytes: maxValueBytes)
        p.lockTTL = 0.6
        return ResponseCache(maxBytes: 1 << 20, clock: { NativeThread.monotonicSeconds() }, shared: tier, sharedPolicy: p)
    }

    /// Upstream fetches made, across both replicas.
    final class Fetches: Sendable {
        private let n = Atomic<Int>(0)
        func add() { n.add(1, ordering: .relaxed) }
        var count: Int { n.load(ordering: .relaxed) }
    }

    static func loader(_ fetches: Fetches, seconds: Double, body: [UInt8] = Array("{}".utf8), fail: Bool = false) -> ResponseCache.Loader {
        {
            fetches.add()
            try? await Task.sleep(for: .seconds(seconds))
            if fail { return .failure(CacheLoadError(status: 502, code: "upstream_http_error", message: "flickr: the upstream answered HTTP 500")) }
            return .success(CachedResponse(body: body, gzippedBody: nil, storedAt: NativeThread.monotonicSeconds(), policy: policy))
        }
    }

    static func setUp() throws -> (RedisServerProcess, RedisConnection, RedisSharedCache) {
        let redis = try RedisServerProcess()
        let c = try connection(redis.url, timeoutMs: 100)
        #expect(waitUntil { c.isUp })
        return (redis, c, RedisSharedCache(connection: c, fingerprint: "f"))
    }

    @Test func aLongFetchKeepsItsLockAndTheWaiterGetsItsAnswer() async throws {
        let (redis, c, tier) = try Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let a = Self.replica(tier), b = Self.replica(tier)
        let first = Task { await a.fetch("k", loader: Self.loader(fetches, seconds: 1.5)) }  // longer than the 0.6 s lock
        try await Task.sleep(for: .milliseconds(100))
        guard case .loaded(_, .sharedWait) = await b.fetch("k", loader: Self.loader(fetches, seconds: 0)) else {
            Issue.record("the waiter should have been answered by the holder's fetch")
            return
        }
        _ = await first.value
        #expect(fetches.count == 1)  // renewed: the waiter never took the lock
    }

    @Test func aFailedFetchIsAnsweredByItsWaitersNotRefetchedInTurn() async throws {
        let (redis, c, tier) = try Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let a = Self.replica(tier), b = Self.replica(tier)
        let first = Task { await a.fetch("k", loader: Self.loader(fetches, seconds: 0.3, fail: true)) }
        try await Task.sleep(for: .milliseconds(100))
        let start = Date()
        guard case .failed(let error) = await b.fetch("k", loader: Self.loader(fetches, seconds: 0)) else {
            Issue.record("expected the holder's error")
            return
        }
        #expect(error.status == 502 && error.code == "upstream_http_error")
        #expect(Date().timeIntervalSince(start) < 1)
        _ = await first.value
        #expect(fetches.count == 1)
    }

    @Test func tooLargeForTheTierWaitersFetchAtOnce() async throws {
        let (redis, c, tier) = try Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let big = Array(repeating: UInt8(ascii: "x"), count: 500)
        let a = Self.replica(tier, maxValueBytes: 100), b = Self.replica(tier, maxValueBytes: 100, waitLimit: 8)
        let first = Task { await a.fetch("k", loader: Self.loader(fetches, seconds: 0.3, body: big)) }
        try await Task.sleep(for: .milliseconds(100))
        let start = Date()
        guard case .loaded(_, .upstream) = await b.fetch("k", loader: Self.loader(fetches, seconds: 0, body: big)) else {
            Issue.record("expected its own fetch")
            return
        }
        #expect(Date().timeIntervalSince(start) < 2, "it waited for the whole limit")
        _ = await first.value
    }

    @Test func aDeadHoldersLockFreesTheKeyWithinItsShortLife() async throws {
        let (redis, c, tier) = try Self.setUp()
        defer { c.stop(); _ = redis }
        // A holder that died: its lock was taken and never renewed nor released.
        guard case .acquired = await tier.lock("k", ttl: 0.6) else {
            Issue.record("lock")
            return
        }
        let fetches = Fetches()
        let start = Date()
        guard case .loaded(_, .upstream) = await Self.replica(tier).fetch("k", loader: Self.loader(fetches, seconds: 0)) else {
            Issue.record("expected a fetch once the lock expired")
            return
        }
        let waited = Date().timeIntervalSince(start)
        #expect(waited >= 0.4 && waited < 1.5, "\(waited)")
    }
}

extension ConvoyTests {
    /// While another replica refreshes a key, a replica with its own stale copy serves that
    /// at once (no wait, no fetch), having asked the tier without its body.
    @Test func staleIsServedWhileAnotherReplicaRefreshes() async throws {
        let (redis, c, tier) = try Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let a = Self.replica(tier), b = Self.replica(tier)
        let old = CachedResponse(
            body: Array("old".utf8), gzippedBody: nil, storedAt: NativeThread.monotonicSeconds() - 120,
            policy: FreshnessPolicy(ttl: 60, staleWhileRevalidate: 600, staleIfError: 0))
        b.store(old, for: "k")
        let refreshing = Task { await a.fetch("k", loader: Self.loader(fetches, seconds: 1)) }
        try await Task.sleep(for: .milliseconds(150))
        let start = Date()
        guard case .loaded(let served, .staleWhileOtherRefreshes) = await b.fetch("k", loader: Self.loader(fetches, seconds: 0)) else {
            Issue.record("expected the stale copy")
            return
        }
        #expect(served.body == Array("old".utf8))
        #expect(Date().timeIntervalSince(start) < 0.5)
        _ = await refreshing.value
        #expect(fetches.count == 1)
    }
}
