import Primitives
import TestSupport
import Testing
@testable import Feeds

/// Issue 58: how often a watched feed is read again follows its own cadence.
@Suite(.offPool) struct EpisodeCadenceTests {
    static func data(gap: Int, count: Int, newest: Int) throws -> EpisodeFeedData {
        let episodes = (0..<count).map { (guid: "e\($0)", published: newest - $0 * gap) }
        let blob = try EpisodeFeedData.build(
            feed: SyntheticFeed.rss("Show", episodes), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20)
        return try #require(EpisodeFeedData(blob))
    }

    @Test func aFeedIsReadAtATwentiethOfItsGapWithinBounds() throws {
        let now = 1_800_000_000, bounds = 120.0...1800.0
        // Daily: 72 minutes, past the longest; hourly: 3 minutes; every 10 minutes: the shortest.
        #expect(EpisodeCadence.refreshInterval(try Self.data(gap: 86_400, count: 6, newest: now - 3600), now: Double(now), within: bounds) == 1800)
        #expect(EpisodeCadence.refreshInterval(try Self.data(gap: 3600, count: 6, newest: now - 600), now: Double(now), within: bounds) == 180)
        #expect(EpisodeCadence.refreshInterval(try Self.data(gap: 600, count: 6, newest: now - 60), now: Double(now), within: bounds) == 120)
        // Dormant (nothing for ten gaps), or a single episode: the longest.
        #expect(EpisodeCadence.refreshInterval(try Self.data(gap: 3600, count: 6, newest: now - 86_400 * 30), now: Double(now), within: bounds) == 1800)
        #expect(EpisodeCadence.refreshInterval(try Self.data(gap: 3600, count: 1, newest: now), now: Double(now), within: bounds) == 1800)
    }
}
