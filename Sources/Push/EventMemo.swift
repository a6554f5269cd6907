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
    private let statuses: TurnStatuses
    /// This turn's changes, a fragment each.
    let fragments: EpisodeChangeFragments

    /// `read`: a podcast's status as the cache holds it. The fragments read through the same
    /// statuses, not through the memo (a memo its own fragments held was never freed: every
    /// turn that told a change kept its events and podcasts' data for good).
    init(changes: [Int: EpisodeChangeFragments.Change], read: @escaping @Sendable (Int) -> EpisodeBatch.Status) {
        let statuses = TurnStatuses(read: read)
        self.statuses = statuses
        fragments = EpisodeChangeFragments(changes: changes, status: statuses.status)
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

    /// Podcast `id`'s status this turn, read the first time it is asked for.
    func status(_ id: Int) -> EpisodeBatch.Status { statuses.status(id) }
}

/// Each podcast of a turn read from its data once (a thousand streams following one podcast do
/// not each parse its data).
final class TurnStatuses: Sendable {
    private let read: @Sendable (Int) -> EpisodeBatch.Status
    private let statuses = Locked<[Int: EpisodeBatch.Status]>([:])

    init(read: @escaping @Sendable (Int) -> EpisodeBatch.Status) { self.read = read }

    @Sendable func status(_ id: Int) -> EpisodeBatch.Status {
        if let known = statuses.withLock({ $0[id] }) { return known }
        let status = read(id)
        statuses.withLock { $0[id] = status }
        return status
    }
}
