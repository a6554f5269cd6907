import Foundation
import Primitives
import ResponseCache
import Synchronization
import Testing
import TestSupport

@testable import RedisTier

/// Issue 55: a storm of keys fetched by one replica while others wait costs the shared tier a
/// few commands per interval, not a poll per key; the locks held are renewed together.
@Suite(.serialized, .offPool) struct SharedWaitTests {
    /// A connection whose commands are counted by operation.
    static func counted(_ url: String) throws -> (RedisConnection, Locked<[String: Int]>) {
        let counts = Locked<[String: Int]>([:])
        var settings = RedisConnection.Settings(endpoint: try RedisEndpoint(url: url))
        settings.commandTimeoutMs = 1000
        settings.scripts = RedisConnection.tierScripts
        let c = RedisConnection(settings: settings) { event in
            if case .command(let operation, _) = event { counts.withLock { $0[operation, default: 0] += 1 } }
        }
        return (c, counts)
    }

    /// Locks live 3 s (renewed every second): a busy machine running the suite in parallel has
    /// held a renewal task past a shorter life.
    static func replica(_ tier: RedisSharedCache, lockTTL: Double = 3) -> ResponseCache {
        var p = SharedTierPolicy(waitLimit: 60, maxValueBytes: 1 << 20)
        p.lockTTL = lockTTL
        return ResponseCache(maxBytes: 1 << 20, clock: { NativeThread.monotonicSeconds() }, shared: tier, sharedPolicy: p)
    }

    @Test func aHundredKeysFetchedElsewhereAreWaitedOnTogether() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let (ca, aCounts) = try Self.counted(redis.url)
        let (cb, bCounts) = try Self.counted(redis.url)
        defer {
            ca.stop()
            cb.stop()
        }
        #expect(await eventually { ca.isUp && cb.isUp })
        let a = Self.replica(RedisSharedCache(connection: ca, fingerprint: "f"))
        let b = Self.replica(RedisSharedCache(connection: cb, fingerprint: "f"))
        let fetches = ConvoyTests.Fetches()
        let keys = (0..<100).map { "k\($0)" }
        // Replica a holds every key's lock for 4 s (more than a lock's life: renewed meanwhile).
        let holders = keys.map { key in Task { await a.fetch(key, loader: ConvoyTests.loader(fetches, seconds: 4)) } }
        #expect(await eventually { fetches.count == 100 })
        let before = aCounts.withLock { $0["lock"] ?? 0 }
        let waiters = keys.map { key in Task { await b.fetch(key, loader: ConvoyTests.loader(fetches, seconds: 0)) } }
        var waited = 0
        for w in waiters { if case .loaded(_, .sharedWait) = await w.value { waited += 1 } }
        for h in holders { _ = await h.value }
        #expect(waited == 100 && fetches.count == 100)
        // b asked about all hundred at once, each interval: far fewer commands than a poll per key.
        let asked = bCounts.withLock { $0 }
        // (A poll per key would be a hundred every 50 ms: thousands.)
        #expect((asked["watch"] ?? 0) < 400 && (asked["probe"] ?? 0) < 20, "\(asked)")
        // a renewed its hundred locks in a few round trips (a third of a lock's life apart), not one per lock.
        #expect(aCounts.withLock { $0["lock"] ?? 0 } - before < 30, "\(aCounts.withLock { $0 })")
    }
}
