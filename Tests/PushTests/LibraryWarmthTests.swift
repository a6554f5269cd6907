import Feeds
import Primitives
import ResponseCache
import TestSupport
import Testing

@testable import Push

/// Issue 58: the feeds of recent library refreshes are kept warm — read again at their own
/// cadence, never before one interval has passed since the refresh that read them, within the
/// refresh ceiling, never when evicted, and no longer once the library's warmth has passed.
@Suite(.offPool) struct LibraryWarmthTests {
    static func hourlyShow() throws -> [UInt8] {
        let newest = Timestamp.now() - 600
        var xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Hourly</title>"#
        for i in 0..<6 { xml += "<item><guid>e\(i)</guid><title>e\(i)</title><pubDate>\(Timestamp.format(newest - i * 3600))</pubDate></item>" }
        return try EpisodeFeedData.build(
            feed: Array((xml + "</channel></rss>").utf8), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20)
    }

    @Test func aLibrarysFeedsAreReadAgainAtTheirCadenceWithinTheCeiling() throws {
        let now = Locked(1000.0)
        let clock: @Sendable () -> Double = { now.withLock { $0 } }
        let cache = ResponseCache(maxBytes: 64 << 20, clock: clock)
        let blob = try Self.hourlyShow()
        for id in [1, 2, 3] {
            cache.store(
                CachedResponse(Representation(blob), storedAt: 1000, policy: FreshnessPolicy(ttl: 1800, staleWhileRevalidate: 0, staleIfError: 0)),
                for: EpisodesAdapter.dataKey(id))
        }
        var limits = EpisodeEventHub.Limits()
        limits.refreshesPerMinute = 2
        let hub = EpisodeEventHub(cache: cache, limits: limits, clock: clock)
        let reads = Locked<[Int]>([])
        hub.setRefresher { id, reason in reads.withLock { $0.append(reason == .ping ? -id : id) } }
        // Podcast 4 is not cached (evicted, or never read), 5's read failed: neither is read for warmth.
        cache.store(
            CachedResponse(
                Representation(Array("{}".utf8), status: 404), storedAt: 1000, policy: FreshnessPolicy(ttl: 1800, staleWhileRevalidate: 0, staleIfError: 0)),
            for: EpisodesAdapter.dataKey(5))
        hub.noteLibrary([1, 2, 3, 4, 5])
        func turns(_ n: Int) { for _ in 0..<n { _ = hub.tick() } }

        turns(60)
        #expect(reads.withLock { $0 }.isEmpty, "read by the refresh itself: not again before its interval (180 s for an hourly show)")
        now.withLock { $0 += 200 }
        turns(60)
        let first = reads.withLock { $0 }
        #expect(first.count == 2 && Set(first).isSubset(of: [1, 2, 3]), "two a minute at most: \(first)")
        now.withLock { $0 += 60 }
        turns(60)
        #expect(Set(reads.withLock { $0 }) == [1, 2, 3], "the third within the next minute, and never the evicted or failed ones")

        // Two hours on, with no library refresh naming them again: left alone.
        now.withLock { $0 += 7300 }
        turns(60)
        let settled = reads.withLock { $0.count }
        now.withLock { $0 += 600 }
        turns(60)
        #expect(reads.withLock { $0.count } == settled, "a library's warmth ends")
    }
}
