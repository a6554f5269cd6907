import Primitives
import Synchronization

/// Cache results for one source.
package final class CacheStats: Sendable {
    package let hits = Counter()
    package let misses = Counter()
    package let stale = Counter()
}
