import Primitives

/// A counter many threads bump without a lock: striped by CPU (`StripedCounters`), so the
/// event loops' cores never write one shared line.
final class Counter: Sendable {
    private let slots = StripedCounters(count: 1)
    func add(_ n: Int = 1) { slots.add(0, n) }
    var current: Int { slots.value(0) }
}
