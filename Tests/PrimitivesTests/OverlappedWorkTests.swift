import Foundation
import Synchronization
import Testing
import TestSupport

@testable import Primitives

@Suite(.offPool) struct OverlappedWorkTests {
    /// An item handed over is worked on while the caller goes on (before it asks for the
    /// results), and every result comes back under its key, those left to the end included.
    @Test func itemsAreDoneWhileTheCallerGoesOnAndEachComesBackUnderItsKey() {
        let started = Atomic<Int>(0)
        let work = OverlappedWork<Int, String>(helpers: 1, name: "test-overlap") { n in
            started.add(1, ordering: .relaxed)
            return "item \(n)"
        }
        work.submit(0, 0)
        // The caller does something else; a helper takes the item meanwhile.
        let deadline = Date().addingTimeInterval(10)
        while started.load(ordering: .relaxed) == 0, Date() < deadline { usleep(1_000) }
        #expect(started.load(ordering: .relaxed) == 1, "taken before finish() was called")
        for n in 1..<500 { work.submit(n * 3, n) }
        let results = work.finish()
        #expect(results.count == 500)
        #expect((0..<500).allSatisfy { results[$0 * 3] == "item \($0)" })
    }

    /// Abandoned, it stops taking items (what is left is not done) and its helpers end.
    @Test func anAbandonedWorkDoesNothingMore() {
        let done = Atomic<Int>(0)
        let gate = WakeSignal()
        let work = OverlappedWork<Int, Int>(helpers: 1, name: "test-abandon") { n in
            if n == 0 { _ = gate.wait(timeout: 10) }
            done.add(1, ordering: .relaxed)
            return n
        }
        work.submit(0, 0)
        for n in 1..<100 { work.submit(n, n) }
        work.abandon()
        gate.signal()
        usleep(100_000)
        #expect(done.load(ordering: .relaxed) <= 1)
        #expect(work.finish().count <= 1)
    }
}
