import Primitives
import Synchronization
import Upstream

/// Cache results for one source.
final class CacheStats: Sendable {
    let hits = Counter()
    let misses = Counter()
    let stale = Counter()
}
