import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// What `/metrics` counts of the event streams.
package final class EventCounters: Sendable {
    let events = Atomic<Int>(0)
    let refreshes = Atomic<Int>(0)
    let pings = Atomic<Int>(0)
    let composed = Atomic<Int>(0)
    let tierEmptied = Atomic<Int>(0)
    /// Turns of the ticker that looked at the watched podcasts' entries.
    let cacheLooks = Atomic<Int>(0)

    package var sharedTierEmptied: Int { tierEmptied.load(ordering: .relaxed) }

    package var eventsComposed: Int { composed.load(ordering: .relaxed) }
    package var eventsSent: Int { events.load(ordering: .relaxed) }
    package var refreshesStarted: Int { refreshes.load(ordering: .relaxed) }
    package var pingsHeard: Int { pings.load(ordering: .relaxed) }
}
