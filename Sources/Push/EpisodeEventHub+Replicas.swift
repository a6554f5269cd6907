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

    static func podcastID(ofDataKey key: String) -> Int? {
        let prefix = EpisodesAdapter.dataKey(0).dropLast()
        guard key.hasPrefix(prefix), key.utf8.count <= prefix.utf8.count + 18 else { return nil }
        return Int(key.dropFirst(prefix.count)).flatMap { $0 > 0 ? $0 : nil }
    }
}
