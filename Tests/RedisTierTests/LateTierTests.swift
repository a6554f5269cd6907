import Foundation
import Primitives
import ResponseCache
import Testing
import TestSupport
@testable import RedisTier

/// make scaleout-test [1] once saw two downloads of one key: a request's lookup passed its
/// 25 ms deadline and the replica fetched without the lock (`fetched_unlocked`). A Redis that
/// answers late costs waiting, not a second download; a stopped one is still not waited for.
@Suite(.serialized, .offPool) struct LateTierTests {
    /// Production's 25 ms command deadline; the stall timeout long (5 s), so that only silence,
    /// never the connection dropping, can end a wait early. Records the operations that timed out.
    static func requestConnection(_ url: String) throws -> (RedisConnection, Locked<[String]>) {
        let timedOut = Locked<[String]>([])
        var settings = RedisConnection.Settings(endpoint: try RedisEndpoint(url: url))
        settings.commandTimeoutMs = 25
        settings.stallTimeoutMs = 5000
        settings.scripts = RedisConnection.tierScripts
        let c = RedisConnection(settings: settings) { event in
            if case .command(let operation, "timeout") = event { timedOut.withLock { $0.append(operation) } }
        }
        return (c, timedOut)
    }

    static func replica(_ c: RedisConnection, lateAnswerWait: Double, events: Locked<[SharedTierEvent]>) -> ResponseCache {
        var p = SharedTierPolicy(waitLimit: 30, maxValueBytes: 1 << 20)
        p.lockTTL = 3
        p.lateAnswerWait = lateAnswerWait
        return ResponseCache(
            maxBytes: 1 << 20, clock: { NativeThread.monotonicSeconds() }, shared: RedisSharedCache(connection: c, fingerprint: "f"),
            sharedPolicy: p, sharedObserver: { e in events.withLock { $0.append(e) } })
    }

    /// Every reply a second late (CLIENT PAUSE; 300 ms was not always past the lookup's deadline
    /// when both cores were busy), none lost, while replica a holds the key's lock:
    /// b's lookup times out, and b waits for the late reply, asks for the lock patiently, finds it
    /// held and takes a's answer.
    @Test func aLateLookupWaitsForTheHoldersAnswer() async throws {
        let redis = try RedisServerProcess()
        let holder = try connection(redis.url)
        let (late, timedOut) = try Self.requestConnection(redis.url)
        defer {
            holder.stop()
            late.stop()
        }
        #expect(await eventually { holder.isUp && late.isUp })
        let fetches = ConvoyTests.Fetches()
        let events = Locked<[SharedTierEvent]>([])
        let a = Self.replica(holder, lateAnswerWait: 0.015, events: Locked([]))
        // Longer than the pause: this machine's scheduling must not decide the test.
        let b = Self.replica(late, lateAnswerWait: 2, events: events)
        let first = Task { await a.fetch("k", loader: ConvoyTests.loader(fetches, seconds: 1)) }
        #expect(await eventually { fetches.count == 1 })  // a holds the lock and is fetching
        try redis.cli("CLIENT", "PAUSE", "1000", "ALL")
        let waited = await b.fetch("k", loader: ConvoyTests.loader(fetches, seconds: 0))
        guard case .loaded(_, .sharedWait) = waited else {
            Issue.record("expected a's answer: \(waited)")
            return
        }
        _ = await first.value
        #expect(fetches.count == 1, "one download for both replicas")
        #expect(timedOut.withLock { $0 }.contains("get"), "the lookup passed its deadline: \(timedOut.withLock { $0 })")
        #expect(!events.withLock { $0 }.contains(.fetchedUnlocked), "\(events.withLock { $0 })")
    }

    /// A stopped Redis (SIGSTOP) stays silent: the miss is fetched alone after one deadline and
    /// the short wait, long before the 5 s a patient call would take.
    @Test func aStoppedRedisIsNotWaitedFor() async throws {
        let redis = try RedisServerProcess()
        let (c, _) = try Self.requestConnection(redis.url)
        defer {
            redis.resume()
            c.stop()
        }
        #expect(await eventually { c.isUp })
        let fetches = ConvoyTests.Fetches()
        let events = Locked<[SharedTierEvent]>([])
        let b = Self.replica(c, lateAnswerWait: 0.015, events: events)
        redis.pause()
        let start = NativeThread.monotonicSeconds()
        guard case .loaded(_, .upstream) = await b.fetch("cold", loader: ConvoyTests.loader(fetches, seconds: 0)) else {
            Issue.record("expected its own fetch")
            return
        }
        #expect(NativeThread.monotonicSeconds() - start < 2.5)
        #expect(events.withLock { $0 }.contains(.fetchedUnlocked), "\(events.withLock { $0 })")
        // Silent, not answering, though more than a deadline has passed: no reply since.
        #expect(c.isUp && !c.hasRepliedSinceTimeout)
    }
}
