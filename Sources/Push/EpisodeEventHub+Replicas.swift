import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// News from the other replicas: a watched podcast whose data changed there is taken from the shared tier.
extension EpisodeEventHub {
    /// What the other replicas announced: a watched podcast whose data changed there is taken
    /// from the shared tier (the tick then tells its streams). The tier may not hold it yet
    /// when the word comes: it is looked for again on the next few turns.
    func learnFromOtherReplicas() async {
        guard let changes else { return }
        await noticeAnEmptiedTier(changes)
        let cursor = state.withLock { $0.changeCursor }
        if let (next, heard) = await changes.changes(after: cursor) {
            let unwatched = state.withLock { st -> [String] in
                st.changeCursor = next
                // The tier did not answer as this replica started: what was announced until
                // now is unknown, so each watched podcast's newest copy is looked for once.
                if cursor == nil { for id in st.watchers.keys where st.announced[id] == nil { st.announced[id] = ("", 1) } }
                var unwatched: [String] = []
                for (key, etag) in heard {
                    guard let id = Self.podcastID(ofDataKey: key) else { continue }
                    guard st.watchers[id] != nil else {
                        unwatched.append(key)
                        continue
                    }
                    if st.told[id] != etag { st.announced[id] = (etag, 10) }
                }
                return unwatched
            }
            // A podcast no stream here watches but this replica holds: its copy is taken too, or a
            // stream that comes to watch it later (an app reconnecting from a replica that went
            // away) would start from the stale copy and hear of nothing until the next read.
            for key in unwatched where cache.peek(key) != nil { _ = await cache.newestAnywhere(key) }
        }
        let wanted = state.withLock { st -> [(Int, String)] in
            var wanted: [(Int, String)] = []
            for (id, want) in st.announced {
                if want.tries <= 0 || st.told[id] == want.etag {
                    st.announced[id] = nil
                } else {
                    st.announced[id] = (want.etag, want.tries - 1)
                    wanted.append((id, want.etag))
                }
            }
            return wanted
        }
        for (id, _) in wanted { _ = await cache.newestAnywhere(EpisodesAdapter.dataKey(id)) }
    }

    /// Where this replica starts hearing the others: the change feed's end as the replica
    /// starts, not when its first stream comes. Until then no ticker reads the feed, yet the
    /// replica may come to hold podcasts (a ping, an app's request): what another replica
    /// announced of them meanwhile is then heard as the first stream comes, and an app that
    /// reconnects here from a replica that went away does not start from a stale copy.
    /// Asked again every second while the tier does not answer.
    func startHearingOtherReplicas() {
        Task.detached { [weak self] in
            while await self?.takesTheChangeCursor() == false {
                try? await Task.sleep(nanoseconds: 1_000_000_000)
            }
        }
    }

    /// False while the tier does not answer.
    private func takesTheChangeCursor() async -> Bool {
        guard let changes, state.withLock({ $0.changeCursor == nil }) else { return true }
        guard let (cursor, _) = await changes.changes(after: nil) else { return false }
        state.withLock { st in
            if st.changeCursor == nil { st.changeCursor = cursor }
        }
        return true
    }

    static func podcastID(ofDataKey key: String) -> Int? {
        let prefix = EpisodesAdapter.dataKey(0).dropLast()
        guard key.hasPrefix(prefix), key.utf8.count <= prefix.utf8.count + 18 else { return nil }
        return Int(key.dropFirst(prefix.count)).flatMap { $0 > 0 ? $0 : nil }
    }
}
