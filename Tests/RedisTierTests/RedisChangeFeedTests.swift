import Foundation
import Primitives
import Testing
import TestSupport
@testable import RedisTier

/// Word between replicas that a feed changed, on a real Redis stream: what one announces the
/// others read once, from where they started; an entry this code did not write is skipped.
@Suite(.serialized, .offPool) struct RedisChangeFeedTests {
    @Test func announcementsAreReadOnceFromWhereAReaderStarted() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let feed = RedisChangeFeed(connection: c, prefix: "t")
        await feed.announce("before|1", etag: "\"a\"")
        let start = try #require(await feed.changes(after: nil))
        #expect(start.changes.isEmpty, "what came before a reader started is not news to it")
        await feed.announce("episodes-feed|id=7", etag: "\"b\"")
        _ = await c.command(["XADD", "t:changes", "*", "x", "forged"], operation: "t")
        await feed.announce("episodes-feed|id=8", etag: "\"c\"")
        let read = try #require(await feed.changes(after: start.cursor))
        #expect(read.changes.map { "\($0.key) \($0.etag)" } == ["episodes-feed|id=7 \"b\"", "episodes-feed|id=8 \"c\""])
        let again = try #require(await feed.changes(after: read.cursor))
        #expect(again.changes.isEmpty && again.cursor == read.cursor)
    }
}
