import Foundation
import Primitives
import Testing
import TestSupport
@testable import RedisTier

/// Issue 20: the connection finds the primary through a real Sentinel and follows a
/// failover; credentials in a URL are percent-decoded.
@Suite(.serialized, .offPool) struct SentinelTests {
    @Test func followsAFailoverTheSentinelPerforms() async throws {
        try await offPoolAsync {
            let primary = try RedisServerProcess()
            let replica = try RedisServerProcess(arguments: ["--replicaof", "127.0.0.1", "\(primary.port)"])
            let sentinel = try SentinelProcess(monitoring: primary.port)
            // The sentinel has to have found the replica (through the primary) before it can promote it.
            #expect(await eventually(15) { ((try? sentinel.cli("SENTINEL", "replicas", "mymaster")) ?? "").contains("\(replica.port)") })
            #expect(await eventually(15) { ((try? replica.cli("INFO", "replication")) ?? "").contains("master_link_status:up") })

            let failovers = Locked(0)
            var settings = RedisConnection.Settings(endpoint: RedisEndpoint(host: "unused", port: 1))
            settings.sentinels = [RedisAddress(host: "127.0.0.1", port: sentinel.port)]
            settings.masterName = "mymaster"
            settings.commandTimeoutMs = 200
            settings.sentinelCheckSeconds = 0.2
            let c = RedisConnection(settings: settings) { event in
                if case .failover = event { failovers.withLock { $0 += 1 } }
            }
            defer { c.stop() }
            #expect(await eventually { c.isUp })
            #expect(await c.command(["SET", "before", "1"], operation: "t") == .success(.status("OK")))
            #expect(try primary.cli("GET", "before") == "1")

            // Three failovers, back and forth: each primary change followed is one failover, whichever
            // path finds it first (the periodic check, the old primary dropping its clients on demotion).
            var servers = [primary, replica]
            for round in 1...3 {
                let promoted = servers[1]
                #expect(await eventually(30) { ((try? promoted.cli("INFO", "replication")) ?? "").contains("master_link_status:up") })
                #expect(await eventually(30) { (try? sentinel.cli("SENTINEL", "FAILOVER", "mymaster")) == "OK" })
                #expect(await eventually(30) { sentinel.primaryPort == promoted.port })
                // Writes land on the promoted server within the check interval plus a reconnect.
                var landed = false
                for _ in 0..<300 where !landed {
                    if await c.command(["SET", "after", "\(round)"], operation: "t") == .success(.status("OK")),
                        (try? promoted.cli("GET", "after")) == "\(round)"
                    {
                        landed = true
                    } else {
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                #expect(landed)
                // Counted when the new primary was reached, so before any write could land there.
                #expect(failovers.withLock { $0 } == round)
                servers.reverse()
            }
            // Nothing counted late: a further check interval (and a reconnect) changes nothing.
            try await Task.sleep(for: .milliseconds(600))
            #expect(failovers.withLock { $0 } == 3)
        }
    }

    @Test func aManagedEndpointThatStepsDownIsOneFailoverHoweverManyWritesItRefuses() async throws {
        try await offPoolAsync {
            // A managed endpoint keeps its name through a failover; here the server behind it is
            // demoted (REPLICAOF another) and later promoted again, as its DNS would follow.
            let other = try RedisServerProcess()
            let server = try RedisServerProcess()
            let failovers = Locked(0)
            var settings = RedisConnection.Settings(endpoint: try RedisEndpoint(url: server.url))
            settings.commandTimeoutMs = 500
            let c = RedisConnection(settings: settings) { event in
                if case .failover = event { failovers.withLock { $0 += 1 } }
            }
            defer { c.stop() }
            #expect(await eventually { c.isUp })
            #expect(await c.command(["SET", "k", "1"], operation: "t") == .success(.status("OK")))
            try server.cli("REPLICAOF", "127.0.0.1", "\(other.port)")
            // Every write meanwhile is refused (READONLY) or finds the tier down while the name
            // still leads to a replica; none of them is a further failover.
            for _ in 0..<8 {
                #expect(await c.command(["SET", "k", "2"], operation: "t") != .success(.status("OK")))
                try await Task.sleep(for: .milliseconds(50))
            }
            try server.cli("REPLICAOF", "NO", "ONE")
            var written = false
            for _ in 0..<300 where !written {
                written = await c.command(["SET", "k", "3"], operation: "t") == .success(.status("OK"))
                if !written { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(written)
            #expect(failovers.withLock { $0 } == 1)
        }
    }

    @Test func noSentinelAnsweringIsADownTierNotAHang() async throws {
        var settings = RedisConnection.Settings(endpoint: RedisEndpoint(host: "unused", port: 1))
        settings.sentinels = [RedisAddress(host: "127.0.0.1", port: try RedisServerProcess.freePort())]
        settings.masterName = "mymaster"
        settings.commandTimeoutMs = 30_000  // a command queued for a master that is not there would wait this long
        let reasons = Locked<[String]>([])
        let c = RedisConnection(settings: settings) { event in
            if case .state(false, let reason) = event { reasons.withLock { $0.append(reason) } }
        }
        defer { c.stop() }
        #expect(await eventually { !reasons.withLock { $0 }.isEmpty })
        #expect(reasons.withLock { $0 }.first?.contains("no sentinel") == true)
        let start = Date()
        #expect(await c.command(["PING"], operation: "t") == .failure(.unavailable))
        #expect(Date().timeIntervalSince(start) < 15, "refused at once, not at its 30 s deadline")
    }

    @Test func urlCredentialsArePercentDecoded() throws {
        let e = try RedisEndpoint(url: "redis://app%40team:p%2Fss%3Aw%40rd@cache.internal:6380/3")
        #expect(e.username == "app@team" && e.password == "p/ss:w@rd" && e.host == "cache.internal" && e.port == 6380 && e.database == 3)
        #expect(throws: RedisEndpoint.InvalidURL.self) { try RedisEndpoint(url: "redis://:bad%zz@host") }
        #expect(RedisAddress("10.0.0.5:26380") == RedisAddress(host: "10.0.0.5", port: 26380))
        #expect(RedisAddress("sentinel-0") == RedisAddress(host: "sentinel-0", port: 26379))
        #expect(RedisAddress("host:99999") == nil)
    }
}
