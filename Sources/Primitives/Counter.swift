/// A counter many threads bump without a lock: striped by CPU (`StripedCounters`), so the
/// event loops' cores never write one shared line.
public final class Counter: Sendable {
    private let slots = StripedCounters(count: 1)
    public init() {}
    public func add(_ n: Int = 1) { slots.add(0, n) }
    public var current: Int { slots.value(0) }
}
