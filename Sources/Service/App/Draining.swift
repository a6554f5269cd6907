import ResponseCache
import Synchronization
import Upstream

/// Set once when shutdown starts; read by `/readyz`.
final class Draining: Sendable {
    private let flag = Atomic<Bool>(false)
    var isDraining: Bool { flag.load(ordering: .relaxed) }
    func begin() { flag.store(true, ordering: .relaxed) }
}
