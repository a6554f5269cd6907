import Feeds
import Primitives
import ResponseCache
import TestSupport
import Testing

@testable import Push

/// Issue 66: an idle replica's ticker costs nothing per watched podcast. A turn looks at the
/// watched podcasts' entries only when something was stored since its last look, a stream came
/// or a feed's read is due; not five times a second over every one of them while nothing moves.
@Suite(.offPool) struct IdleTurnTests {
    @Test func aTurnLooksAtTheEntriesOnlyWhenSomethingChangedOrIsDue() throws {
        let now = Locked(10_000.0)
        let clock: @Sendable () -> Double = { now.withLock { $0 } }
        let cache = ResponseCache(maxBytes: 64 << 20, clock: clock)
        let xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title><item><guid>e</guid><title>e</title></item></channel></rss>"#
        let data = try EpisodeFeedData.build(feed: Array(xml.utf8), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20)
        let policy = FreshnessPolicy(ttl: 1800, staleWhileRevalidate: 18_000, staleIfError: 0)
        @Sendable func store(_ id: Int) {
            cache.store(CachedResponse(Representation(data), storedAt: clock(), policy: policy), for: EpisodesAdapter.dataKey(id))
        }
        for id in 1...50 { store(id) }
        let hub = EpisodeEventHub(cache: cache, limits: EpisodeEventHub.Limits(), clock: clock)
        // Fifty watched podcasts (watched by no stream the turn could write to), and a library
        // feed that keeps the turns going without starting the background ticker.
        hub.state.withLock { st in
            st.library[1_000_000] = .infinity
            for id in 1...50 { st.watchers[id] = [0] }
        }
        func looks() -> Int { hub.counters.cacheLooks.load(ordering: .relaxed) }
        func turn(after seconds: Double = 0.2) {
            now.withLock { $0 += seconds }
            hub.tick()
        }
        turn()
        #expect(looks() == 1, "the first turn looks (every podcast gets its next read)")
        for _ in 0..<20 { turn() }
        #expect(looks() == 1, "twenty idle turns look at nothing")
        store(7)
        turn()
        #expect(looks() == 2, "a stored entry is looked at")
        turn()
        #expect(looks() == 2)
        turn(after: 2000)
        #expect(looks() == 3, "a feed's read came due")
    }
}
