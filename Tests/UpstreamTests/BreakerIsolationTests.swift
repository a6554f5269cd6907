import HTTPServer
import Testing
import TestSupport
@testable import Upstream

/// Breakers keyed by what fails (issue 19): one publisher's broken feed must not block
/// the other podcasts on its host, and publishers cannot grow the breaker map without bound.
@Suite(.offPool) struct BreakerIsolationTests {
    static func feed(_ url: String) -> UpstreamRequest {
        var r = UpstreamRequest(upstream: "episodes", url: url)
        r.urlChosenByThirdParty = true
        return r
    }

    static func client(threshold: Int = 3, clock: TestClock) throws -> UpstreamClient {
        var c = UpstreamConfiguration()
        c.breakerThreshold = threshold
        c.breakerCooldownSeconds = 30
        return try UpstreamClient(configuration: c, clock: { clock.now })
    }

    @Test func aBrokenFeedDoesNotOpenTheCircuitForItsHost() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client(clock: TestClock())
        for _ in 0..<3 { _ = try? await client.send(Self.feed(up.url("/status/500"))) }
        await expectError(.circuitOpen(retryAfter: 30), within: 15) { try await client.send(Self.feed(up.url("/status/500"))) }
        // Another feed on the same host (same host and port) still goes out and answers.
        let other = try await client.send(Self.feed(up.url("/ok")))
        #expect(other.status == 200)
        #expect(
            client.feedBreakerCounts()
                == {
                    var c = BreakerCounts(); c.closed = 1; c.open = 1; return c
                }())
        #expect(client.breakerStates().isEmpty)  // no per-feed series for metrics
    }

    @Test func configuredUpstreamsStillShareOneBreakerPerHost() async throws {
        let up = try FaultUpstream()
        defer { up.stop() }
        let client = try Self.client(clock: TestClock())
        for _ in 0..<3 { _ = try? await client.send(UpstreamRequest(upstream: "t", url: up.url("/status/500"))) }
        await expectError(.circuitOpen(retryAfter: 30), within: 15) { try await client.send(UpstreamRequest(upstream: "t", url: up.url("/ok"))) }
    }

    @Test func feedBreakersAreABoundedLRU() {
        let table = BreakerTable(threshold: 1, cooldown: 30, maxFeeds: 8)
        let bad = table.breaker(.init(name: "http://h/bad.xml", perFeed: true))
        bad.record(success: false, now: 0)
        for i in 0..<1000 {
            _ = table.breaker(.init(name: "http://h/\(i).xml", perFeed: true))
            if i % 4 == 0 { _ = table.breaker(.init(name: "http://h/bad.xml", perFeed: true)) }  // still asked for: kept
        }
        let counts = table.snapshot(now: 1).feeds
        #expect(counts.closed + counts.halfOpen + counts.open == 8)
        #expect(counts.open == 1)
        #expect(table.breaker(.init(name: "http://h/bad.xml", perFeed: true)) === bad)
        // An API host's breaker is not a feed's and is never evicted by them.
        let host = table.breaker(.init(name: "api.example", perFeed: false))
        for i in 0..<100 { _ = table.breaker(.init(name: "http://h/more\(i).xml", perFeed: true)) }
        #expect(table.breaker(.init(name: "api.example", perFeed: false)) === host)
    }
}
