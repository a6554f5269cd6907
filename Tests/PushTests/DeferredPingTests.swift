import Primitives
import ResponseCache
import TestSupport
import Testing

@testable import Push

/// Issue 58: a feed's pings are read at most once per interval, but one that comes within the
/// interval is not lost: a publisher that updates twice in ten seconds (or a hub that notifies
/// twice) is heard twice, the second time when the interval has passed; a flood still once more.
@Suite(.offPool) struct DeferredPingTests {
    @Test func aPingWithinTheIntervalIsReadWhenItHasPassed() {
        let now = Locked(1000.0)
        let clock: @Sendable () -> Double = { now.withLock { $0 } }
        let hub = EpisodeEventHub(cache: ResponseCache(maxBytes: 1 << 20, clock: clock), limits: EpisodeEventHub.Limits(), clock: clock)
        let reads = Locked<[Double]>([])
        hub.setRefresher { id, reason in
            #expect(id == 7 && reason == .ping)
            reads.withLock { $0.append(clock()) }
        }
        guard case .refreshing = hub.ping(7) else {
            Issue.record("the first ping reads")
            return
        }
        now.withLock { $0 += 3 }
        for _ in 0..<50 {
            guard case .tooSoon = hub.ping(7) else {
                Issue.record("within the interval: not read now")
                return
            }
        }
        _ = hub.tick()
        #expect(reads.withLock { $0 } == [1000])
        now.withLock { $0 += 7 }
        _ = hub.tick()
        _ = hub.tick()
        #expect(reads.withLock { $0 } == [1000, 1010], "read once more when the interval passed, however many came")
        now.withLock { $0 += 30 }
        _ = hub.tick()
        #expect(reads.withLock { $0 }.count == 2)
    }
}
