import Testing

@testable import Primitives

@Suite struct LockStripesTests {
    private final class Counter: @unchecked Sendable {
        var value = 0
    }

    /// An object's stripe makes its critical sections exclusive: four threads adding to one
    /// unguarded counter lose no addition.
    @Test func anObjectsSectionsExcludeEachOther() async {
        let stripes = LockStripes(count: 8)
        let counter = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<20_000 { stripes.withLock(for: counter) { counter.value += 1 } }
                }
            }
        }
        #expect(stripes.withLock(for: counter) { counter.value } == 80_000)
    }

    /// Objects spread over the stripes (consecutive allocations do not all share one).
    @Test func objectsSpreadOverTheStripes() {
        let stripes = LockStripes(count: 16)
        let objects = (0..<256).map { _ in Counter() }
        let used = Set(objects.map { stripes.stripe(ObjectIdentifier($0)) })
        #expect(used.count >= 8, "\(used.count) of 16 stripes")
    }
}
