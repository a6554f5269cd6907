import Primitives
import ResponseCache
import TestSupport
import Testing

@testable import RedisTier

/// Issue 67: an accepted ping is kept in Redis until a replica has read the feed. One replica
/// takes it and dies before acknowledging: another takes it over once it stalled; what is
/// acknowledged is gone; a Redis emptied under the queue gets its group back.
@Suite(.serialized, .offPool) struct RedisPingQueueTests {
    @Test func aPingTakenByADeadReplicaIsTakenOverAndAnAcknowledgedOneIsGone() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let dead = RedisPingQueue(connection: c, prefix: "t"), alive = RedisPingQueue(connection: c, prefix: "t")
        _ = await dead.take(max: 10, stalled: 20)  // the first pass makes the group
        #expect(await dead.enqueue(7))
        let taken = try #require(await dead.take(max: 10, stalled: 20))
        #expect(taken.map(\.id) == [7])
        // Taken by `dead`, never acknowledged: not new for `alive`, and not stalled yet.
        #expect(await alive.take(max: 10, stalled: 20)?.isEmpty == true)
        try await Task.sleep(for: .milliseconds(300))
        let takenOver = try #require(await alive.take(max: 10, stalled: 0.2))
        #expect(takenOver.map(\.id) == [7], "a dead replica's ping is read by another")
        await alive.done(takenOver[0].entry)
        try await Task.sleep(for: .milliseconds(300))
        #expect(await alive.take(max: 10, stalled: 0.2)?.isEmpty == true, "acknowledged: gone")
        // Redis emptied (a restart without persistence): the group is made again, pings go on.
        _ = try await offPool { try redis.cli("FLUSHALL") }
        _ = await alive.take(max: 10, stalled: 20)
        #expect(await alive.enqueue(8))
        #expect(await alive.take(max: 10, stalled: 20)?.map(\.id) == [8])
        // A ping within its feed's interval is kept with the time it may be read.
        #expect(await alive.enqueue(9, notBefore: 1_900_000_000_000))
        #expect(await alive.take(max: 10, stalled: 20)?.map(\.notBefore) == [1_900_000_000_000])
    }
}
