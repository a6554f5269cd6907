import Primitives
import Synchronization
import Upstream

/// A counter that many threads bump without a lock.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int = 1) { value.add(n, ordering: .relaxed) }
    var current: Int { value.load(ordering: .relaxed) }
}
