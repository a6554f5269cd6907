import Feeds
import Primitives
import ResponseCache
import TestSupport
import Testing

@testable import Push

/// Issue 58: what keeping 1,000 watched feeds warm costs their publishers, counted over one
/// simulated hour of the refresher's own scheduling (the clock moved two seconds a turn, each
/// read answered as a 304 would be: the entry renewed). A quarter each: an hourly show, a
/// daily one, a weekly one, and a dormant one (nothing for months).
@Suite(.offPool) struct WatchedFeedsCostTests {
    static func feed(gap: Int, newestAgo: Int) throws -> [UInt8] {
        let newest = Timestamp.now() - newestAgo
        var xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title>"#
        for i in 0..<8 { xml += "<item><guid>e\(i)</guid><title>e\(i)</title><pubDate>\(Timestamp.format(newest - i * gap))</pubDate></item>" }
        return try EpisodeFeedData.build(feed: Array((xml + "</channel></rss>").utf8), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20)
    }

    @Test func thousandWatchedFeedsOfMixedCadenceInAnHour() throws {
        let now = Locked(10_000.0)
        let clock: @Sendable () -> Double = { now.withLock { $0 } }
        let cache = ResponseCache(maxBytes: 64 << 20, clock: clock)
        let kinds = [
            try Self.feed(gap: 3600, newestAgo: 600), try Self.feed(gap: 86_400, newestAgo: 3600), try Self.feed(gap: 604_800, newestAgo: 86_400),
            try Self.feed(gap: 604_800, newestAgo: 200 * 86_400),
        ]
        let policy = FreshnessPolicy(ttl: 1800, staleWhileRevalidate: 18_000, staleIfError: 0)  // the defaults: CACHE_SWR_FACTOR 10
        @Sendable func store(_ id: Int) {
            cache.store(CachedResponse(Representation(kinds[id % 4]), storedAt: clock(), policy: policy), for: EpisodesAdapter.dataKey(id))
        }
        for id in 1...1000 { store(id) }
        let hub = EpisodeEventHub(cache: cache, limits: EpisodeEventHub.Limits(), clock: clock)
        let reads = Locked([Int](repeating: 0, count: 4))
        hub.setRefresher { id, _ in
            reads.withLock { $0[id % 4] += 1 }
            store(id)
        }
        // One library refresh names them all (a stream would, through the same scheduling).
        hub.noteLibrary(Array(1...1000))
        for _ in 0..<1800 {
            now.withLock { $0 += 2 }
            _ = hub.tick()
        }
        let perKind = reads.withLock { $0 }
        let total = perKind.reduce(0, +)
        print("1,000 warm feeds, one simulated hour: \(total) reads (hourly, daily, weekly, dormant: \(perKind))")
        // Hourly shows every 3 minutes (a twentieth of their gap): about 20 each, less their
        // first times being set a hundred a turn; the others at the longest interval (30
        // minutes): about 2 each.
        #expect((250 * 15...250 * 20).contains(perKind[0]), "\(perKind)")
        for kind in 1...3 { #expect((250 * 1...250 * 2).contains(perKind[kind]), "\(perKind)") }
        #expect(total < 6_500)
    }
}
