import EpisodeSync
import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// Events made in one turn of the ticker, by what they are made of.
package final class EventMemo: Sendable {
    struct Event: Sendable {
        let bytes: [UInt8]
        let token: SyncToken?
        let more: Bool
    }

    /// What a turn made for one position.
    enum Made: Sendable {
        /// Nothing new for it.
        case nothing
        case event(Event)
    }

    private let made = Locked<(events: [String: Made], bytes: Int)>(([:], 0))
    /// Each podcast of the turn read from its data once (a thousand streams following one
    /// podcast do not each parse its data).
    private let statuses = Locked<[Int: EpisodeBatch.Status]>([:])
    /// This turn's changes, a fragment each (set once, before any stream is told).
    private let changeFragments = Locked<EpisodeChangeFragments?>(nil)
    var fragments: EpisodeChangeFragments? {
        get { changeFragments.withLock { $0 } }
        set { changeFragments.withLock { $0 = newValue } }
    }

    /// Kept for the turn at most: past these, events are made for each stream (as without a memo).
    static let maxEvents = 10_000, maxBytes = 32 << 20

    /// What was made for `key` this turn; nil when nothing was yet.
    func made(_ key: String) -> Made? { made.withLock { $0.events[key] } }
    func keep(_ result: Made, as key: String) {
        var size = key.utf8.count
        if case .event(let event) = result { size += event.bytes.count }
        made.withLock { m in
            guard m.events.count < Self.maxEvents, m.bytes + size <= Self.maxBytes else { return }
            m.events[key] = result
            m.bytes += size
        }
    }

    /// Podcast `id`'s status this turn, read by `read` the first time.
    func status(_ id: Int, _ read: () -> EpisodeBatch.Status) -> EpisodeBatch.Status {
        if let known = statuses.withLock({ $0[id] }) { return known }
        let status = read()
        statuses.withLock { $0[id] = status }
        return status
    }
}
