import Foundation
import Testing
import TestSupport

@testable import Primitives

@Suite(.offPool) struct StripedCountersTests {
    /// Threads adding at once, on different CPUs and unpinned, lose nothing: every row is
    /// summed, every add is atomic.
    @Test func concurrentAddsSumExactly() {
        let counters = StripedCounters(count: 20)
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<20_000 { counters.add(i % 20, t + 1) }
        }
        // Each counter got 1,000 adds from each thread t, of t + 1 each: 1,000 × (1 + … + 8).
        for i in 0..<20 { #expect(counters.value(i) == 36_000) }
        #expect(counters.count == 20)
    }

    @Test func outOfRangeIndexesAreIgnoredNotTrapped() {
        let counters = StripedCounters(count: 2)
        counters.add(-1)
        counters.add(2)
        counters.add(Int.max)
        counters.add(1, Int.max)
        counters.add(1, 1)  // wraps, as a counter that ran for ever would; never traps
        #expect(counters.value(0) == 0)
        #expect(counters.value(1) == Int.min)
        #expect(counters.value(7) == 0)
        #expect(counters.next(5) == 0)
        // An absurd size is cut, not trapped on (row arithmetic, 32-bit indexes in the C calls).
        let huge = StripedCounters(count: Int.max)
        #expect(huge.count == 65_536)
        huge.add(65_535, 3)
        #expect(huge.value(65_535) == 3)
        #expect(StripedCounters(count: -5).count == 0)
    }

    /// `next()` is what request ids are made of: no two calls return the same number, from
    /// threads pinned to each CPU (different rows) or not, and every value stays below 2^36.
    @Test func nextIsUniqueAcrossThreadsAndCPUs() throws {
        let counters = StripedCounters(count: 1)
        let cpus = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
        let seen = Locked<[UInt64]>([])
        DispatchQueue.concurrentPerform(iterations: cpus * 2) { t in
            let take = { @Sendable in (0..<5_000).map { _ in counters.next() } }
            let values = t < cpus ? ((try? onCPU(t, take)) ?? take()) : take()
            seen.withLock { $0 += values }
        }
        let all = seen.withLock { $0 }
        #expect(all.count == cpus * 2 * 5_000)
        #expect(Set(all).count == all.count)
        #expect(all.allSatisfy { $0 > 0 && $0 < 1 << 36 })
        #expect(counters.value(0) == all.count)
    }
}
