import Foundation
import Primitives
import ResponseCache
import Synchronization
import Testing
import TestSupport
@testable import RedisTier

/// Issue 20: no convoys and bounded waits across replicas, with a real redis-server. Two
/// caches stand for two replicas sharing one tier.
@Suite(.serialized, .offPool) struct ConvoyTests {
    static let policy = FreshnessPolicy(ttl: 60, staleWhileRevalidate: 0, staleIfError: 0)

    static func replica(_ tier: RedisSharedCache, maxValueBytes: Int = 1 << 20, waitLimit: Double = 4, lockTTL: Double = 0.6) -> ResponseCache {
        var p = SharedTierPolicy(waitLimit: waitLimit, maxValueBytes: maxValueBytes)
        p.lockTTL = lockTTL
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

    /// Two replicas on `tier` that both hold a fresh copy of "k" (b waits up to 30 s for a lease).
    static func twoReplicasHoldingAFreshCopy(_ tier: RedisSharedCache) -> (ResponseCache, ResponseCache) {
        let a = replica(tier), b = replica(tier, waitLimit: 30)
        let fresh = CachedResponse(body: Array("old".utf8), gzippedBody: nil, storedAt: NativeThread.monotonicSeconds(), policy: policy)
        a.store(fresh, for: "k")
        b.store(fresh, for: "k")
        return (a, b)
    }

    static func setUp() async throws -> (RedisServerProcess, RedisConnection, RedisSharedCache) {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url, timeoutMs: 100)
        #expect(await eventually { c.isUp })
        return (redis, c, RedisSharedCache(connection: c, fingerprint: "f"))
    }

    /// A fetch longer than its lock keeps renewing it, also past a renewal that failed: Redis
    /// is paused across the first renewal (lock 6 s, renewed every 2 s, 100 ms command
    /// deadline). The waiter, arriving after the lock's first life, gets the holder's answer
    /// instead of taking a lapsed lock and fetching again.
    @Test func aLongFetchKeepsItsLockAndTheWaiterGetsItsAnswer() async throws {
        let (redis, c, tier) = try await Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let a = Self.replica(tier, waitLimit: 30, lockTTL: 6), b = Self.replica(tier, waitLimit: 30, lockTTL: 6)
        let first = Task { await a.fetch("k", loader: Self.loader(fetches, seconds: 10)) }
        #expect(await eventually { fetches.count == 1 })  // the holder has the lock and is fetching
        try await Task.sleep(for: .milliseconds(1500))
        redis.pause()
        try await Task.sleep(for: .milliseconds(1000))  // the renewal due at 2 s times out
        redis.resume()
        try await Task.sleep(for: .milliseconds(4000))  // past the lock's first life (6 s)
        let waited = await b.fetch("k", loader: Self.loader(fetches, seconds: 0))
        guard case .loaded(_, .sharedWait) = waited else {
            Issue.record("the waiter should have been answered by the holder's fetch: \(waited)")
            return
        }
        _ = await first.value
        #expect(fetches.count == 1)  // renewed: the waiter never took the lock
    }

    @Test func aFailedFetchIsAnsweredByItsWaitersNotRefetchedInTurn() async throws {
        let (redis, c, tier) = try await Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        // The waiter's limit is far longer than anything a loaded machine adds: answered well
        // before it means the holder's failure marker answered it.
        let a = Self.replica(tier), b = Self.replica(tier, waitLimit: 30)
        let first = Task { await a.fetch("k", loader: Self.loader(fetches, seconds: 0.3, fail: true)) }
        #expect(await eventually { fetches.count == 1 })
        let start = Date()
        guard case .failed(let error) = await b.fetch("k", loader: Self.loader(fetches, seconds: 0)) else {
            Issue.record("expected the holder's error")
            return
        }
        #expect(error.status == 502 && error.code == "upstream_http_error")
        #expect(Date().timeIntervalSince(start) < 15, "it waited for the whole limit")
        _ = await first.value
        #expect(fetches.count == 1)
    }

    @Test func tooLargeForTheTierWaitersFetchAtOnce() async throws {
        let (redis, c, tier) = try await Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let big = Array(repeating: UInt8(ascii: "x"), count: 500)
        let a = Self.replica(tier, maxValueBytes: 100), b = Self.replica(tier, maxValueBytes: 100, waitLimit: 30)
        let first = Task { await a.fetch("k", loader: Self.loader(fetches, seconds: 0.3, body: big)) }
        #expect(await eventually { fetches.count == 1 })
        let start = Date()
        guard case .loaded(_, .upstream) = await b.fetch("k", loader: Self.loader(fetches, seconds: 0, body: big)) else {
            Issue.record("expected its own fetch")
            return
        }
        #expect(Date().timeIntervalSince(start) < 15, "it waited for the whole limit")
        _ = await first.value
    }

    @Test func aDeadHoldersLockFreesTheKeyWithinItsShortLife() async throws {
        let (redis, c, tier) = try await Self.setUp()
        defer { c.stop(); _ = redis }
        // A holder that died: its lock was taken and never renewed nor released. Redis set its
        // 0.6 s life after `locked`, so no fetch may start before locked + 0.6 s; and the
        // waiter's 30 s limit is not what freed it.
        let locked = NativeThread.monotonicSeconds()
        guard case .acquired = await tier.lock("k", ttl: 0.6) else {
            Issue.record("lock")
            return
        }
        let fetchedAt = Locked(0.0)
        let loader: ResponseCache.Loader = {
            fetchedAt.withLock { $0 = NativeThread.monotonicSeconds() }
            return .success(CachedResponse(body: Array("{}".utf8), gzippedBody: nil, storedAt: NativeThread.monotonicSeconds(), policy: Self.policy))
        }
        guard case .loaded(_, .upstream) = await Self.replica(tier, waitLimit: 30).fetch("k", loader: loader) else {
            Issue.record("expected a fetch once the lock expired")
            return
        }
        let waited = fetchedAt.withLock { $0 } - locked
        #expect(waited >= 0.599 && waited < 15, "\(waited)")
    }
}

extension ConvoyTests {
    /// While another replica refreshes a key, a replica with its own stale copy serves that
    /// at once (no wait, no fetch), having asked the tier without its body.
    @Test func staleIsServedWhileAnotherReplicaRefreshes() async throws {
        let (redis, c, tier) = try await Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let a = Self.replica(tier), b = Self.replica(tier)
        let old = CachedResponse(
            body: Array("old".utf8), gzippedBody: nil, storedAt: NativeThread.monotonicSeconds() - 120,
            policy: FreshnessPolicy(ttl: 60, staleWhileRevalidate: 600, staleIfError: 0))
        b.store(old, for: "k")
        let refreshing = Task { await a.fetch("k", loader: Self.loader(fetches, seconds: 1)) }
        #expect(await eventually { fetches.count == 1 })  // a holds the lock and is fetching
        // Served as stale-while-another-refreshes: not a wait for a's answer, nor a fetch.
        guard case .loaded(let served, .staleWhileOtherRefreshes) = await b.fetch("k", loader: Self.loader(fetches, seconds: 0)) else {
            Issue.record("expected the stale copy")
            return
        }
        #expect(served.body == Array("old".utf8))
        _ = await refreshing.value
        #expect(fetches.count == 1)
    }
}

extension ConvoyTests {
    /// Revalidations (a watched feed's turn, a ping, a client's no-cache) ask the upstream even
    /// while a copy is fresh, one replica at a time: the key's lock is the lease. The replica
    /// that finds it held waits and takes the holder's answer rather than downloading again;
    /// once the lease is let go, the next revalidation reads again.
    @Test func oneReplicaAtATimeRevalidatesAndTheOtherTakesItsRead() async throws {
        let (redis, c, tier) = try await Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let (a, b) = Self.twoReplicasHoldingAFreshCopy(tier)
        let reading = Task { await a.refresh("k", revalidating: true, refreshing: { _ in await Self.loader(fetches, seconds: 1, body: Array("new".utf8))() }) }
        #expect(await eventually { fetches.count == 1 })  // a holds the lease and is reading
        guard case .loaded(let taken, .sharedWait) = await b.refresh("k", revalidating: true, refreshing: { _ in await Self.loader(fetches, seconds: 0)() })
        else {
            Issue.record("expected the holder's read")
            return
        }
        #expect(taken.body == Array("new".utf8))
        guard case .loaded(let read, .upstream) = await reading.value else {
            Issue.record("expected a's own read")
            return
        }
        #expect(read.body == Array("new".utf8))
        #expect(fetches.count == 1, "one download for both replicas")
        #expect(b.peek("k")?.body == Array("new".utf8))

        guard case .loaded(_, .upstream) = await b.refresh("k", revalidating: true, refreshing: { _ in await Self.loader(fetches, seconds: 0)() }) else {
            Issue.record("the lease let go: the next revalidation reads")
            return
        }
        #expect(fetches.count == 2)
    }

    /// A publisher's ping tells of what it published after a read already under way asked:
    /// that read (another replica's, holding the lease) answers with the feed before it. The
    /// ping's read waits for the lease and reads itself (conditionally) instead of taking the
    /// holder's answer; the chaos test's rolling deploy lost an episode this way.
    @Test func aPingsReadIsNotTheReadAlreadyUnderWayAtAnotherReplica() async throws {
        let (redis, c, tier) = try await Self.setUp()
        defer { c.stop(); _ = redis }
        let fetches = Fetches()
        let (a, b) = Self.twoReplicasHoldingAFreshCopy(tier)
        let reading = Task {
            await a.refresh("k", revalidating: true, refreshing: { _ in await Self.loader(fetches, seconds: 1, body: Array("before".utf8))() })
        }
        #expect(await eventually { fetches.count == 1 })  // a holds the lease and is reading
        // Published now, and pinged to b.
        let pinged = await b.refresh(
            "k", revalidating: true, wanted: .startingNow, refreshing: { _ in await Self.loader(fetches, seconds: 0, body: Array("after".utf8))() })
        guard case .loaded(let read, .upstream) = pinged else {
            Issue.record("expected b's own read, got \(pinged)")
            return
        }
        #expect(read.body == Array("after".utf8))
        #expect(fetches.count == 2)
        _ = await reading.value
    }
}
