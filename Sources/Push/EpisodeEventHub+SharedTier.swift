import EpisodeSync
import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// The shared tier's epoch: a tier back empty (or back after silence) is caught up.
extension EpisodeEventHub {
    /// Every second, the shared tier's epoch: changed, the tier came back empty (a Redis
    /// restarted without persistence, or flushed) and lost what it held: pings accepted and
    /// not yet read, announcements not yet heard, records. Back after two looks unanswered, the
    /// announcements made meanwhile were lost. Either way every watched feed is read again,
    /// spread at the refresh ceiling's pace (the first replica to read one stores it, the others
    /// take that copy: `FeedRead.sharedTierEmptied`), and the records this replica can rebuild
    /// are written again.
    func noticeAnEmptiedTier(_ changes: any SharedChangeFeed) async {
        let now = clock()
        let look = state.withLock { st -> Bool in
            guard now >= st.nextEpochLook else { return false }
            st.nextEpochLook = now + 1
            return true
        }
        guard look else { return }
        guard let epoch = await changes.epoch(proposing: String(UInt64.random(in: 1...UInt64.max), radix: 16)) else {
            // Unreachable two looks in a row (not one slow answer): what is announced meanwhile is lost.
            state.withLock { st in st.tierSilentLooks = min(st.tierSilentLooks + 1, 1_000) }
            return
        }
        let found = state.withLock { st -> (watched: [Int], emptied: Bool)? in
            defer {
                st.tierEpoch = epoch
                st.tierSilentLooks = 0
            }
            guard let seen = st.tierEpoch, seen != epoch || st.tierSilentLooks >= 2 else { return nil }
            let ids = st.watchers.keys.shuffled()
            let window = max(5, Double(ids.count) * 60 / max(1, limits.refreshesPerMinute))
            for (i, id) in ids.enumerated() { st.catchUp[id] = now + window * Double(i) / Double(ids.count) }
            return (ids, seen != epoch)
        }
        guard let (watched, emptied) = found, emptied else { return }
        counters.tierEmptied.add(1, ordering: .relaxed)
        // The records it may have lost, written again from what this replica holds, at once:
        // a stream reconnecting to a replica without the data finds its podcast's history.
        records?.storeEmptied()
        for id in watched {
            guard let records, let entry = cache.peek(EpisodesAdapter.dataKey(id)), entry.status == 200,
                let history = EpisodeFeedData(entry.body).map(EpisodeHistory.init)
            else { continue }
            records.keepHistory(id, seq: history.log.current.seq, history.encoded)
        }
    }

    /// The watched feeds whose turn to be read again (the shared tier came back empty) has come.
    func catchUpAfterAnEmptiedTier(now: Double) {
        let due = state.withLock { st -> [Int] in
            guard !st.catchUp.isEmpty else { return [] }
            let due = st.catchUp.filter { $0.value <= now }.map(\.key)
            for id in due { st.catchUp[id] = nil }
            return due.filter { st.watchers[$0] != nil }
        }
        for id in due {
            counters.refreshes.add(1, ordering: .relaxed)
            refresh(id, .sharedTierEmptied)
        }
    }
}
