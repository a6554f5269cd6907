import Foundation
import Primitives
import ResponseCache
import Synchronization
import Testing
import TestSupport
@testable import RedisTier

private let policy = FreshnessPolicy(ttl: 60, staleWhileRevalidate: 600, staleIfError: 3600)

/// An empty gzip member (RFC 1952): what a stored pre-compressed variant starts with.
private let gzipBytes: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]

private func entry(_ text: String, status: Int = 200, gzip: [UInt8]? = gzipBytes) -> CachedResponse {
    CachedResponse(status: status, body: Array(text.utf8), gzippedBody: gzip, storedAt: 0, policy: policy)
}

@Suite(.serialized, .offPool) struct RedisSharedCacheTests {
    @Test func entriesRoundTripWithTheirAgeOnRedisClockAndExpireThemselves() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let tier = RedisSharedCache(connection: c, fingerprint: "f1")
        guard case .absent = await tier.get("k") else { Issue.record("expected absent"); return }
        await tier.put("k", entry("{\"a\":1}"), age: 5)
        guard case .found(let found, let age) = await tier.get("k") else { Issue.record("expected found"); return }
        #expect(found.body == Array("{\"a\":1}".utf8))
        #expect(found.gzippedBody == gzipBytes)
        #expect(found.policy == policy)
        #expect(found.etag == entry("{\"a\":1}").etag)  // the same content gives the same ETag everywhere
        #expect(age >= 5 && age < 15)  // the 5 s it was stored with, plus this test's own time
        // Redis drops it once nobody could use it: TTL + the longer stale window.
        let pttl = Int(try redis.cli("PTTL", "feedproxy:f1:c:k")) ?? 0
        #expect(pttl > 3_600_000 && pttl <= 3_660_000)
        // A paging Link header travels with the entry (issue 21).
        let link = #"</loans?page=2&limit=20>; rel="next""#
        await tier.put("paged", CachedResponse(body: Array("{}".utf8), gzippedBody: nil, storedAt: 0, policy: policy, link: link), age: 0)
        guard case .found(let paged, _) = await tier.get("paged") else { Issue.record("expected found"); return }
        #expect(paged.link == link)
        // Another fingerprint (another schema or configuration) does not see it.
        guard case .absent = await RedisSharedCache(connection: c, fingerprint: "f2").get("k") else { Issue.record("fingerprint leak"); return }
    }

    @Test func damagedEntriesReadAsAbsentInsteadOfTrapping() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let tier = RedisSharedCache(connection: c, fingerprint: "f1")
        let damaged: [(String, String)] = [
            ("1000", "1e300 0 0"),  // a TTL no header can carry
            ("-9223372036854775808", "60 600 3600"),  // a stored time that would overflow the age
            ("1000", "60 nan 3600"), ("1000", "60 600"),
        ]
        for (i, (stored, policyText)) in damaged.enumerated() {
            _ = try redis.cli("HSET", "feedproxy:f1:c:d\(i)", "t", stored, "s", "200", "p", policyText, "b", "{}", "z", "")
            guard case .absent = await tier.get("d\(i)") else { Issue.record("damaged entry \(i) was not absent"); continue }
        }
        // Statuses a replica never stores (1xx/204/304 go out without Content-Length and would
        // desynchronise a front proxy), and a "gzip" variant that is not gzip (issue 19).
        for (i, (status, gzip)) in [("101", ""), ("100", ""), ("204", ""), ("304", ""), ("302", ""), ("200", "not gzip")].enumerated() {
            _ = try redis.cli("HSET", "feedproxy:f1:c:s\(i)", "t", "1000", "s", status, "p", "60 600 3600", "b", "{}", "z", gzip)
            guard case .absent = await tier.get("s\(i)") else { Issue.record("status \(status) / gzip \(gzip) was not absent"); continue }
        }
        _ = try redis.cli("HSET", "feedproxy:f1:c:neg", "t", "1000", "s", "404", "p", "10 0 0", "b", "{}", "z", "")
        guard case .found(let negative, _) = await tier.get("neg") else { Issue.record("a negative entry must still be found"); return }
        #expect(negative.status == 404)
        // A policy at the limit still round-trips, and its header value stays within RFC 9111's range.
        _ = try redis.cli("HSET", "feedproxy:f1:c:long", "t", "1000", "s", "200", "p", "1000000000 0 0", "b", "{}", "z", "")
        guard case .found(let long, _) = await tier.get("long") else { Issue.record("expected found"); return }
        #expect(long.cacheControl.hasPrefix("public, max-age=1000000000,"))
    }

    /// An image's type travels with it (so another replica answers `image/webp`, with `Vary:
    /// Accept`, not JSON), and a type no replica writes reads as absent.
    @Test func anImageKeepsItsMediaType() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let tier = RedisSharedCache(connection: c, fingerprint: "f1")
        let webp = CachedResponse(body: Array("RIFF....WEBP".utf8), gzippedBody: nil, storedAt: 0, policy: policy, contentType: "image/webp")
        await tier.put("img", webp, age: 0)
        guard case .found(let found, _) = await tier.get("img") else { Issue.record("expected found"); return }
        #expect(found.contentType == "image/webp" && !found.isJSON && found.etag == webp.etag)
        #expect(String(decoding: found.representation.headerLines, as: UTF8.self).contains("Vary: Accept\r\nContent-Type: image/webp\r\n"))
        await tier.put("json", entry("{}"), age: 0)
        guard case .found(let json, _) = await tier.get("json") else { Issue.record("expected found"); return }
        #expect(json.isJSON)
        _ = try redis.cli("HSET", "feedproxy:f1:c:html", "t", "1000", "s", "200", "p", "60 600 3600", "b", "<p>", "z", "", "m", "text/html")
        guard case .absent = await tier.get("html") else { Issue.record("a media type no replica writes must read as absent"); return }
    }

    @Test func newerWinsSoASlowOlderFillNeverOverwrites() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let tier = RedisSharedCache(connection: c, fingerprint: "f")
        // As production sends them: age 0 at put, and how long the fetch took.
        #expect(await tier.put("k", entry("new"), age: 0, fetchSeconds: 0.05))
        // A slow fetch that started 5 s ago, before "new" did, arrives later: dropped.
        #expect(await tier.put("k", entry("old"), age: 0, fetchSeconds: 5) == false)
        guard case .found(let e, _) = await tier.get("k") else { Issue.record("missing"); return }
        #expect(e.body == Array("new".utf8))
        #expect(await tier.put("k", entry("newer"), age: 0, fetchSeconds: 0))
        guard case .found(let e2, _) = await tier.get("k") else { Issue.record("missing"); return }
        #expect(e2.body == Array("newer".utf8))
        // A negative answer (an upstream 404, fetched later) never replaces the good one (issue 20).
        #expect(await tier.put("k", entry("{}", status: 404, gzip: nil), age: 0, fetchSeconds: 0) == false)
        guard case .found(let e3, _) = await tier.get("k") else { Issue.record("missing"); return }
        #expect(e3.status == 200 && e3.body == Array("newer".utf8))
        // Where there is no good answer, the negative one is stored.
        #expect(await tier.put("gone", entry("{}", status: 404, gzip: nil), age: 0, fetchSeconds: 0))
    }

    @Test func fetchLockIsExclusiveReleasedOnlyByItsHolderAndExpires() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let tier = RedisSharedCache(connection: c, fingerprint: "f")
        guard case .acquired(let token) = await tier.lock("k", ttl: 0.3) else { Issue.record("not acquired"); return }
        #expect(await tier.lock("k", ttl: 0.3) == .heldElsewhere)
        await tier.unlock("k", token: "someone-else")
        #expect(await tier.lock("k", ttl: 0.3) == .heldElsewhere)
        await tier.unlock("k", token: token)
        guard case .acquired = await tier.lock("k", ttl: 0.3) else { Issue.record("not released"); return }
        try await Task.sleep(for: .milliseconds(400))  // the holder "died": the lock expires by itself
        guard case .acquired = await tier.lock("k", ttl: 0.3) else { Issue.record("did not expire"); return }
    }

    @Test func rateBudgetIsOneForAllReplicas() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let a = try connection(redis.url), b = try connection(redis.url)
        defer {
            a.stop()
            b.stop()
        }
        #expect(await eventually { a.isUp && b.isUp })
        let replicas = [RedisRateBudget(connection: a), RedisRateBudget(connection: b)]
        var granted = 0
        var retryAfter = 0.0
        // One token a minute after the burst: however slowly the loop runs, none comes back.
        for i in 0..<20 {
            let d = await replicas[i % 2].take("itunes", perMinute: 1, burst: 10)
            if d?.granted == true { granted += 1 } else { retryAfter = d?.retryAfter ?? -1 }
        }
        #expect(granted == 10)
        #expect(retryAfter > 0 && retryAfter <= 60)
        #expect(await replicas[0].take("kiva", perMinute: 1, burst: 10)?.granted == true)  // budgets are per upstream
    }

    @Test func twoCachesShareOneFetchThroughRedis() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c1 = try connection(redis.url), c2 = try connection(redis.url)
        defer {
            c1.stop()
            c2.stop()
        }
        #expect(await eventually { c1.isUp && c2.isUp })
        let clock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        let shared = SharedTierPolicy(waitLimit: 2, maxValueBytes: 1 << 20)
        let replicas = [c1, c2].map {
            ResponseCache(maxBytes: 1 << 20, clock: clock, shared: RedisSharedCache(connection: $0, fingerprint: "f"), sharedPolicy: shared)
        }
        let fetches = Atomic<Int>(0)
        let loader: ResponseCache.Loader = {
            fetches.add(1, ordering: .relaxed)
            try? await Task.sleep(for: .milliseconds(150))
            return .success(CachedResponse(body: Array("shared".utf8), gzippedBody: nil, storedAt: clock(), policy: policy))
        }
        let outcomes = await withTaskGroup(of: (Bool, LoadOrigin?).self) { group in
            for i in 0..<20 {
                group.addTask {
                    if case .loaded(let e, let origin) = await replicas[i % 2].fetch("key", loader: loader) { return (e.body == Array("shared".utf8), origin) }
                    return (false, nil)
                }
            }
            return await group.reduce(into: [(Bool, LoadOrigin?)]()) { $0.append($1) }
        }
        #expect(fetches.load(ordering: .relaxed) == 1)
        #expect(outcomes.allSatisfy { $0.0 })
        #expect(outcomes.contains { $0.1 == .sharedWait })
        // A third replica starting cold finds it in L2 without fetching.
        let cold = ResponseCache(maxBytes: 1 << 20, clock: clock, shared: RedisSharedCache(connection: c1, fingerprint: "f"), sharedPolicy: shared)
        try await Task.sleep(for: .milliseconds(50))  // the holder's put runs after its flight
        guard case .loaded(_, .sharedHit) = await cold.fetch("key", loader: loader) else { Issue.record("expected an L2 hit"); return }
        #expect(fetches.load(ordering: .relaxed) == 1)
        // A client's no-cache revalidates upstream even though L2 holds a fresh answer.
        let another = ResponseCache(maxBytes: 1 << 20, clock: clock, shared: RedisSharedCache(connection: c2, fingerprint: "f"), sharedPolicy: shared)
        guard case .loaded(_, .upstream) = await another.fetch("key", revalidate: true, loader: loader) else { Issue.record("expected upstream"); return }
        #expect(fetches.load(ordering: .relaxed) == 2)
    }

    @Test func tooLargeValuesStayLocalAndRedisDownMeansFetchHere() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let events = Locked<[SharedTierEvent]>([])
        let cache = ResponseCache(
            maxBytes: 1 << 20, clock: { Date().timeIntervalSince1970 }, shared: RedisSharedCache(connection: c, fingerprint: "f"),
            sharedPolicy: SharedTierPolicy(waitLimit: 30, maxValueBytes: 100), sharedObserver: { e in events.withLock { $0.append(e) } })
        let big: ResponseCache.Loader = {
            .success(CachedResponse(body: Array(repeating: 0x41, count: 500), gzippedBody: nil, storedAt: Date().timeIntervalSince1970, policy: policy))
        }
        guard case .loaded(_, .upstream) = await cache.fetch("big", loader: big) else { Issue.record("expected upstream"); return }
        #expect(await eventually { events.withLock { $0.contains(.skippedTooLarge) } })
        #expect(try redis.cli("EXISTS", "feedproxy:f:c:big") == "0")
        redis.kill9()
        #expect(await eventually { !c.isUp })
        let before = events.withLock { $0.count }
        let start = Date()
        guard case .loaded(_, .upstream) = await cache.fetch("other", loader: big) else { Issue.record("expected a local fetch"); return }
        // Straight to the upstream: no miss counted against the dead tier, no wait for it; the
        // fetch is counted as one made without the key's lock (another replica may make it too).
        #expect(events.withLock { Array($0[before...]) }.filter { $0 != .skippedTooLarge } == [.fetchedUnlocked], "\(events.withLock { $0 })")
        #expect(Date().timeIntervalSince(start) < 10)  // not the 30 s wait limit
    }

    /// Issue 20: a replica with no copy of its own serves the tier's stale answer at once
    /// (stale-while-revalidate across replicas) and refreshes once, in the background.
    @Test func aColdReplicaServesTheTiersStaleAnswerAndRefreshesOnce() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let tier = RedisSharedCache(connection: c, fingerprint: "f")
        let shortPolicy = FreshnessPolicy(ttl: 1, staleWhileRevalidate: 60, staleIfError: 600)
        await tier.put("k", CachedResponse(body: Array("old".utf8), gzippedBody: nil, storedAt: 0, policy: shortPolicy), age: 5)  // 5 s old: stale
        let fetches = Atomic<Int>(0)
        let cache = ResponseCache(
            maxBytes: 1 << 20, clock: { Date().timeIntervalSince1970 }, shared: tier, sharedPolicy: SharedTierPolicy(waitLimit: 1, maxValueBytes: 1 << 20))
        // The upstream answers only once the stale answer was served (or after 30 s): a fetch
        // that waited for it would come back late, and fresh.
        let served = Atomic<Bool>(false)
        let slow: ResponseCache.Loader = {
            fetches.add(1, ordering: .relaxed)
            for _ in 0..<3000 where !served.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(10)) }
            return .success(CachedResponse(body: Array("fresh".utf8), gzippedBody: nil, storedAt: Date().timeIntervalSince1970, policy: shortPolicy))
        }
        guard case .loaded(let stale, .staleWhileOtherRefreshes) = await cache.fetch("k", loader: slow) else { Issue.record("expected stale"); return }
        served.store(true, ordering: .releasing)
        #expect(stale.body == Array("old".utf8))
        #expect(await eventually { (try? redis.cli("HGET", "feedproxy:f:c:k", "b")) == "fresh" })
        #expect(fetches.load(ordering: .relaxed) == 1)
        guard case .fresh(let refreshed) = cache.lookup("k") else { Issue.record("expected the refreshed entry locally"); return }
        #expect(refreshed.body == Array("fresh".utf8))
    }

    /// Issue 20: when the fetch fails, the tier's stale copy answers inside stale-if-error.
    @Test func aFailedFetchFallsBackToTheTiersStaleCopy() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let tier = RedisSharedCache(connection: c, fingerprint: "f")
        let p = FreshnessPolicy(ttl: 1, staleWhileRevalidate: 0, staleIfError: 600)
        await tier.put("k", CachedResponse(body: Array("last good".utf8), gzippedBody: nil, storedAt: 0, policy: p), age: 30)
        let cache = ResponseCache(maxBytes: 1 << 20, clock: { Date().timeIntervalSince1970 }, shared: tier)
        let failing: ResponseCache.Loader = { .failure(CacheLoadError(status: 502, code: "upstream_http_error", message: "500")) }
        guard case .staleAfterError(let entry, _) = await cache.fetch("k", loader: failing) else { Issue.record("expected the tier's stale copy"); return }
        #expect(entry.body == Array("last good".utf8))
    }
}

/// Issue 40: a long feed's episode data (a large body kept without a compressed variant) is
/// shared compressed, so one replica's download serves the others; what Redis holds is what
/// counts against the limit, and a damaged compressed body reads as absent.
@Suite(.serialized, .offPool) struct CompressedSharedEntryTests {
    @Test func aLargeBodyWithoutAVariantIsStoredCompressedAndReadBackWhole() async throws {
        let redis = try await offPool { try RedisServerProcess() }
        let c = try connection(redis.url)
        defer { c.stop() }
        #expect(await eventually { c.isUp })
        let tier = RedisSharedCache(connection: c, fingerprint: "f")
        let text = (0..<40_000).map { "episode \($0) of a daily show;" }.joined()  // about 1.2 MB, compressible
        let data = CachedResponse(body: Array(text.utf8), gzippedBody: nil, storedAt: 0, policy: policy)
        #expect(await tier.put("long", data, age: 0, fetchSeconds: 0, maxBytes: 1 << 20) == .stored)
        #expect(Int(try redis.cli("MEMORY", "USAGE", "feedproxy:f:c:long")) ?? Int.max < 1 << 20)
        guard case .found(let found, _) = await tier.get("long") else { Issue.record("expected found"); return }
        #expect(found.body == data.body)
        #expect(found.gzippedBody == nil)
        #expect(found.etag == data.etag)

        // What does not compress stays too large; a small entry is stored as it is.
        var rng = SplitMix(seed: 3)
        let noise = CachedResponse(body: (0..<(1 << 20) + 10).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, gzippedBody: nil, storedAt: 0, policy: policy)
        #expect(await tier.put("noise", noise, age: 0, fetchSeconds: 0, maxBytes: 1 << 20) == .tooLarge)
        #expect(await tier.put("small", entry("{}", gzip: nil), age: 0, fetchSeconds: 0, maxBytes: 1 << 20) == .stored)
        #expect(try redis.cli("HGET", "feedproxy:f:c:small", "b") == "{}")

        // A compressed body that does not inflate is damage: absent, never a trap.
        try redis.cli("HSET", "feedproxy:f:c:long", "b", "\u{1F}\u{8B}not really gzip at all, just bytes")
        guard case .absent = await tier.get("long") else { Issue.record("expected absent"); return }
    }
}
