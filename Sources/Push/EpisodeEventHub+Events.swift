import EpisodeSync
import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// Making a stream's events: what it has not seen, once per distinct position a turn.
extension EpisodeEventHub {
    /// Sends `s` what it has not seen (the first event always: it names the client's position).
    /// Serial per stream (its token's lock): events leave in the order their ids advance.
    /// `memo`: events already made this turn, by what they are made of (streams of one library
    /// at one position get the same bytes: made once, not once per stream).
    package func deliver(_ s: Subscriber, first: Bool = false, memo: EventMemo? = nil) {
        s.withPosition { position in
            guard first || position.started else { return }
            position.started = true
            // A long backlog goes as several events, a page each: the rest a page a turn.
            let token = position.token
            // Up to date with what it was last told: this turn's changes, worked out once for all.
            if !first, let token, let fragments = memo?.fragments, !fragments.isEmpty,
                !state.withLock({ $0.morePages.contains(s.slot.load(ordering: .relaxed)) })
            {
                switch fragments.event(ids: s.ids, token: token, limit: s.limit, maxItemBytes: Self.eventItemBytes) {
                case .nothing: return
                case .event(let bytes, let next):
                    guard s.stream.send(bytes) else { return }
                    counters.events.add(1, ordering: .relaxed)
                    position.token = next
                    return
                case .general: break
                }
            }
            let key = memo.map { _ in "\(s.limit)|\(token?.encoded ?? "-")|" + s.ids.map(String.init).joined(separator: ",") }
            let made: EventMemo.Made
            if let key, let known = memo?.made(key) {
                made = known
            } else {
                made = makeEvent(s, after: token, first: first, memo: memo)
                if let key, let memo { memo.keep(made, as: key) }
            }
            guard case .event(let event) = made else {
                // Nothing more for it: not looked at again until its podcasts change.
                state.withLock { _ = $0.morePages.remove(s.slot.load(ordering: .relaxed)) }
                return
            }
            guard s.stream.send(event.bytes) else { return }
            counters.events.add(1, ordering: .relaxed)
            position.token = event.token
            state.withLock { st in
                let slot = s.slot.load(ordering: .relaxed)
                if event.more, st.subscribers[slot] === s { st.morePages.insert(slot) } else { st.morePages.remove(slot) }
            }
        }
    }

    /// Episode JSON one event holds at most: a quarter of the stream's bound (256 KiB), so a
    /// reader on a slow network always takes a whole event before it falls a bound behind (a
    /// page of 100 episodes with long notes passed it, and the reader was closed inside it on
    /// every reconnect). The rest follows page by page, resumed from the token.
    static let eventItemBytes = 64 << 10

    /// The event that brings a stream from `token` on (`.nothing` when nothing is new, unless
    /// `first`). `memo`: the turn's podcasts, each read from its data once for every stream.
    private func makeEvent(_ s: Subscriber, after token: SyncToken?, first: Bool, memo: EventMemo?) -> EventMemo.Made {
        counters.composed.add(1, ordering: .relaxed)
        let statuses = s.ids.map { id -> EpisodeBatch.Status in memo?.status(id) ?? status(of: id) }
        let batch = EpisodeBatch(ids: s.ids, limit: s.limit, sync: token, maxItemBytes: Self.eventItemBytes)
        let selection = batch.select(statuses)
        let news = !selection.items.isEmpty || selection.resync.contains(true) || selection.token != token
        guard news || first else { return .nothing }
        let body = batch.render(statuses, selection).body
        // Without a position the stream starts at the newest `limit`: older pages are not its to send.
        return .event(
            EventMemo.Event(
                bytes: ServerSentEvent.encode(id: selection.token?.encoded, event: "episodes", data: body), token: selection.token,
                more: token != nil && selection.next != nil))
    }

    /// Podcast `id` as this replica's cache holds it now.
    func status(of id: Int) -> EpisodeBatch.Status {
        switch cache.lookup(EpisodesAdapter.dataKey(id)) {
        case .fresh(let entry), .stale(let entry): EpisodeBatch.Status(cached: entry.status, body: entry.body)
        case .miss: .pending
        }
    }
}
