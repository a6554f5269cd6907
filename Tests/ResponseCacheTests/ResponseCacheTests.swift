import Synchronization
import Testing
import TestSupport
import Primitives
@testable import ResponseCache

final class ManualClock: Sendable {
    private let value = Locked<Double>(1000)
    var now: Double { value.withLock { $0 } }
    func advance(_ s: Double) { value.withLock { $0 += s } }
}

final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

@Suite(.offPool) struct ResponseCacheTests {
    let clock = ManualClock()
    let policy = FreshnessPolicy(ttl: 60, staleWhileRevalidate: 600, staleIfError: 86_400)

    func cache(maxBytes: Int = 1 << 20) -> ResponseCache {
        let clock = self.clock
        return ResponseCache(maxBytes: maxBytes, clock: { clock.now })
    }

    func entry(_ text: String, policy: FreshnessPolicy? = nil) -> CachedResponse {
        CachedResponse(body: Array(text.utf8), gzippedBody: nil, storedAt: clock.now, policy: policy ?? self.policy)
    }

    func loader(_ text: String, calls: Counter, delayMs: Int = 0) -> ResponseCache.Loader {
        let clock = self.clock, policy = self.policy
        return {
            calls.increment()
            if delayMs > 0 { try? await Task.sleep(for: .milliseconds(delayMs)) }
            return .success(CachedResponse(body: Array(text.utf8), gzippedBody: nil, storedAt: clock.now, policy: policy))
        }
    }

    func aliased(_ cache: ResponseCache, _ alias: String) -> String? {
        cache.lookup(alias: alias).map { String(decoding: $0.body, as: UTF8.self) }
    }

    func body(_ lookup: ResponseCache.Lookup) -> String? {
        switch lookup {
        case .fresh(let r), .stale(let r): return String(decoding: r.body, as: UTF8.self)
        case .miss: return nil
        }
    }

    @Test func freshThenStaleThenMiss() {
        let c = cache()
        c.store(entry("a"), for: "k")
        guard case .fresh = c.lookup("k") else { Issue.record("expected fresh"); return }
        clock.advance(61)
        guard case .stale = c.lookup("k") else { Issue.record("expected stale"); return }
        clock.advance(600)
        guard case .miss = c.lookup("k") else { Issue.record("expected miss"); return }
    }

    /// The load is held until all 200 callers are counted on its flight, so the test does not
    /// depend on how fast a loaded machine starts them (a flight that ended first would rightly
    /// be followed by a second).
    @Test func singleFlightCoalescesConcurrentLoads() async {
        let c = cache()
        let calls = Counter()
        let released = Atomic<Bool>(false)
        let clock = self.clock, policy = self.policy
        let held: ResponseCache.Loader = {
            calls.increment()
            while !released.load(ordering: .relaxed) { try? await Task.sleep(for: .milliseconds(2)) }
            return .success(CachedResponse(body: Array("v".utf8), gzippedBody: nil, storedAt: clock.now, policy: policy))
        }
        let results = await withTaskGroup(of: String.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    if case .loaded(let r, _) = await c.fetch("k", loader: held) {
                        return String(decoding: r.body, as: UTF8.self)
                    }
                    return "error"
                }
            }
            await FlightCancellationTests.waitUntil { c.callers(of: "k") == 200 }
            #expect(c.callers(of: "k") == 200)
            released.store(true, ordering: .relaxed)
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(calls.count == 1)
        #expect(results.count == 200 && results.allSatisfy { $0 == "v" })
        #expect(body(c.lookup("k")) == "v")
    }

    /// A ping's refresh does not take a read of this replica's that began before it (that read
    /// may answer with the feed before what the publisher pinged about): it waits for it, then
    /// reads again. (Whenever the ping's task runs, its answer is the read after; the release
    /// waits for it to start, so that without the rule it would join the read before.)
    @Test func aPingsRefreshReadsAgainAfterAReadAlreadyUnderWay() async {
        let c = cache()
        let calls = Counter()
        let released = Atomic<Bool>(false), asked = Atomic<Bool>(false)
        let clock = self.clock, policy = self.policy
        let before: ResponseCache.RefreshingLoader = { _ in
            calls.increment()
            while !released.load(ordering: .relaxed) { try? await Task.sleep(for: .milliseconds(2)) }
            return .success(CachedResponse(body: Array("before".utf8), gzippedBody: nil, storedAt: clock.now, policy: policy))
        }
        let after: ResponseCache.RefreshingLoader = { _ in
            calls.increment()
            return .success(CachedResponse(body: Array("after".utf8), gzippedBody: nil, storedAt: clock.now, policy: policy))
        }
        c.refreshInBackground("k", revalidating: true, refreshing: before)
        #expect(c.isRefreshing("k"))
        let ping = Task {
            asked.store(true, ordering: .relaxed)
            return await c.refresh("k", revalidating: true, wanted: .startingNow, refreshing: after)
        }
        await FlightCancellationTests.waitUntil { asked.load(ordering: .relaxed) }
        try? await Task.sleep(for: .milliseconds(10))
        released.store(true, ordering: .relaxed)
        guard case .loaded(let pinged, _) = await ping.value else {
            Issue.record("expected a load")
            return
        }
        #expect(String(decoding: pinged.body, as: UTF8.self) == "after")
        #expect(calls.count == 2)
        #expect(body(c.lookup("k")) == "after")
    }

    @Test func staleWhileRevalidateRefreshesExactlyOnce() async throws {
        let c = cache()
        c.store(entry("old"), for: "k")
        clock.advance(61)
        let calls = Counter()
        for _ in 0..<50 {
            guard case .stale(let r) = c.lookup("k") else { Issue.record("expected stale"); return }
            #expect(String(decoding: r.body, as: UTF8.self) == "old")
            c.refreshInBackground("k", loader: loader("new", calls: calls, delayMs: 50))
        }
        while c.isRefreshing("k") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(calls.count == 1)
        guard case .fresh(let r) = c.lookup("k") else { Issue.record("expected fresh after refresh"); return }
        #expect(String(decoding: r.body, as: UTF8.self) == "new")
    }

    /// Where a request keeps its upstream deadline, fair-queue turn and trace: task-locals.
    enum RequestLocal { @TaskLocal static var name: String? }

    /// A background refresh belongs to no request: started from inside one, its load sees
    /// none of that request's task-locals (no deadline of a request long answered, no place in
    /// its client's queue, no spans in its trace). A caller's own flight does see them.
    @Test func aBackgroundRefreshInheritsNothingFromTheRequestThatStartedIt() async throws {
        let c = cache()
        c.store(entry("old"), for: "stale")
        clock.advance(61)
        let seen = Locked<[String: String]>([:])
        let clock = self.clock, policy = self.policy
        func recording(_ key: String) -> ResponseCache.Loader {
            {
                seen.withLock { $0[key] = RequestLocal.name ?? "none" }
                return .success(CachedResponse(body: Array("new".utf8), gzippedBody: nil, storedAt: clock.now, policy: policy))
            }
        }
        await RequestLocal.$name.withValue("the request") {
            c.refreshInBackground("stale", loader: recording("stale"))
            _ = await c.fetch("missing", loader: recording("missing"))
        }
        while c.isRefreshing("stale") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(seen.withLock { $0 } == ["stale": "none", "missing": "the request"])
    }

    @Test func staleIfErrorServesLastGoodEntryForItsWindow() async {
        let c = cache()
        c.store(entry("good"), for: "k")
        let failing: ResponseCache.Loader = { .failure(CacheLoadError(status: 504, code: "upstream_timeout", message: "slow")) }
        clock.advance(3600)
        guard case .staleAfterError(let r, let e) = await c.fetch("k", loader: failing) else { Issue.record("expected stale"); return }
        #expect(String(decoding: r.body, as: UTF8.self) == "good")
        #expect(e.status == 504)
        clock.advance(86_400)
        guard case .failed(let e2) = await c.fetch("k", loader: failing) else { Issue.record("expected failure past the window"); return }
        #expect(e2.code == "upstream_timeout")
    }

    @Test func errorsAreNotCachedButNegativeEntriesAreBriefly() async {
        let c = cache()
        let calls = Counter()
        let failing: ResponseCache.Loader = {
            calls.increment()
            return .failure(CacheLoadError(status: 502, code: "upstream_http_error", message: "400"))
        }
        _ = await c.fetch("k", loader: failing)
        _ = await c.fetch("k", loader: failing)
        #expect(calls.count == 2)
        guard case .miss = c.lookup("k") else { Issue.record("errors must not be cached"); return }

        let clock = self.clock
        let negative: ResponseCache.Loader = {
            .failure(
                CacheLoadError(
                    status: 502, code: "upstream_http_error", message: "400",
                    negativeEntry: CachedResponse(status: 502, body: Array("{}".utf8), gzippedBody: nil, storedAt: clock.now, policy: .negative(ttl: 10))))
        }
        _ = await c.fetch("n", loader: negative)
        guard case .fresh(let r) = c.lookup("n") else { Issue.record("expected negative entry"); return }
        #expect(r.status == 502)
        clock.advance(11)
        guard case .miss = c.lookup("n") else { Issue.record("negative entry must expire without a stale window"); return }
    }

    @Test func lruEvictsLeastRecentlyUsedUnderTheByteBudget() {
        let c = cache(maxBytes: 4000)
        let text = String(repeating: "x", count: 300)  // ~430 bytes each with overhead
        for i in 0..<8 { c.store(entry(text), for: "k\(i)") }
        #expect(c.byteCount <= 4000)
        _ = c.lookup("k0")  // touch the oldest
        c.store(entry(text), for: "k8")
        c.store(entry(text), for: "k9")
        #expect(c.byteCount <= 4000)
        #expect(body(c.lookup("k0")) != nil)
        #expect(body(c.lookup("k1")) == nil)
        #expect(body(c.lookup("k9")) != nil)
    }

    @Test func aFullCacheOfSmallEntriesKeepsTheMostRecentWithinBudget() {
        // 64 KiB of small negative-style entries, then 20,000 more: each insert evicts.
        let c = cache(maxBytes: 64 * 1024)
        for i in 0..<20_000 { c.store(entry("{\"error\":\(i)}"), for: "k\(i)") }
        #expect(c.byteCount <= 64 * 1024)
        #expect(c.entryCount > 300)
        #expect(body(c.lookup("k19999")) != nil)
        #expect(body(c.lookup("k\(20_000 - c.entryCount)")) != nil)
        #expect(body(c.lookup("k\(19_999 - c.entryCount)")) == nil)
    }

    @Test func oversizedEntryDoesNotEvictTheCache() {
        let c = cache(maxBytes: 4000)
        for i in 0..<5 { c.store(entry("small"), for: "k\(i)") }
        c.store(entry(String(repeating: "y", count: 3000)), for: "huge")
        #expect(c.entryCount == 5)
        #expect(body(c.lookup("huge")) == nil)
    }

    @Test func etagIsStrongAndContentBased() {
        let a = entry("same"), b = entry("same"), d = entry("different")
        #expect(a.etag == b.etag)
        #expect(a.etag != d.etag)
        #expect(a.etag.hasPrefix("\"") && a.etag.hasSuffix("\""))
    }

    @Test func aliasesResolveFreshEntriesOnlyAndStayBounded() {
        let c = cache()
        c.store(entry("a"), for: "key")
        _ = c.lookup("key", alias: "/photos?tags=A")
        #expect(c.lookup(alias: "/photos?tags=A").map { String(decoding: $0.body, as: UTF8.self) } == "a")
        #expect(c.lookup(alias: "/unknown") == nil)
        _ = c.lookup("key", alias: "/" + String(repeating: "x", count: 600))
        #expect(c.lookup(alias: "/" + String(repeating: "x", count: 600)) == nil)
        clock.advance(61)
        #expect(c.lookup(alias: "/photos?tags=A") == nil)  // stale goes the long way (refresh logic)
    }

    /// A target seen before whose entry is stale or gone tells the miss path what a lookup by
    /// key would: the route need not enter the cache again before loading.
    @Test func aKnownAliasSaysWhatItsKeyHolds() {
        let c = cache()
        func probe() -> (fresh: CachedResponse?, known: ResponseCache.KnownAlias?) {
            var known: ResponseCache.KnownAlias?
            return (c.lookup(alias: "/photos?tags=A", now: clock.now, known: &known), known)
        }
        #expect(probe().fresh == nil && probe().known == nil, "an unseen target is unknown")
        c.store(entry("a"), for: "key")
        _ = c.lookup("key", alias: "/photos?tags=A")
        #expect(probe().fresh != nil && probe().known == nil)
        clock.advance(61)  // past the TTL, inside stale-while-revalidate
        let stale = probe()
        #expect(stale.fresh == nil && stale.known?.key == "key")
        guard case .stale(let entry)? = stale.known?.lookup else {
            Issue.record("a stale entry is known as stale")
            return
        }
        #expect(String(decoding: entry.body, as: UTF8.self) == "a")
        clock.advance(10_000)  // past every window
        guard case .miss? = probe().known?.lookup else {
            Issue.record("an expired entry is known as a miss")
            return
        }
    }

    /// An alias keeps where its entry sits; the slot is checked against the key, so after
    /// eviction (and the slot's reuse by other keys) it never answers another entry's body.
    @Test func anAliasFollowsItsEntryThroughEvictionAndSlotReuse() {
        let c = cache(maxBytes: 4000)
        _ = c.lookup("key-a", alias: "/a")  // as a first miss does: before the entry exists
        #expect(c.lookup(alias: "/a") == nil)
        c.store(entry("a"), for: "key-a")
        #expect(aliased(c, "/a") == "a")
        for i in 0..<40 { c.store(entry(String(repeating: "\(i % 10)", count: 200)), for: "other\(i)") }
        #expect(body(c.lookup("key-a")) == nil)
        #expect(c.lookup(alias: "/a") == nil)  // evicted: its old slot holds another key now
        c.store(entry("a2"), for: "key-a")
        #expect(aliased(c, "/a") == "a2")
        #expect(aliased(c, "/a") == "a2")
    }

    /// A target not seen before enters the cache once before its flight: the lookup by key,
    /// the alias remembered and the flight joined or started, under one lock. Only a start
    /// is admitted; what it finds by key is answered without asking.
    @Test func aTargetNotSeenBeforeIsLookedUpRememberedAndFetchedInOneVisit() async {
        let c = cache()
        c.store(entry("a"), for: "key-a")
        let calls = Counter()
        let x = loader("x", calls: calls), b = loader("b", calls: calls), n = loader("c", calls: calls)
        let refuse: () -> Bool = {
            Issue.record("a found entry is not admitted")
            return false
        }
        guard case .fresh(let fresh)? = await c.lookupOrFetch("key-a", alias: "/a", admit: refuse, refreshing: { _ in await x() }) else {
            Issue.record("a fresh entry is found")
            return
        }
        #expect(String(decoding: fresh.body, as: UTF8.self) == "a" && aliased(c, "/a") == "a" && calls.count == 0)

        var admitted = 0
        let found = await c.lookupOrFetch(
            "key-b", alias: "/b",
            admit: {
                admitted += 1
                return true
            }, refreshing: { _ in await b() })
        guard case .loaded(let loaded, .upstream)? = found else {
            Issue.record("a miss starts the flight")
            return
        }
        #expect(String(decoding: loaded.body, as: UTF8.self) == "b" && admitted == 1 && calls.count == 1)
        #expect(aliased(c, "/b") == "b", "remembered before its entry existed, it finds it")

        clock.advance(61)  // past the TTL, inside stale-while-revalidate
        guard case .stale? = await c.lookupOrFetch("key-a", alias: "/a2", admit: refuse, refreshing: { _ in await x() }) else {
            Issue.record("a stale entry is served as found")
            return
        }
        guard await c.lookupOrFetch("key-c", alias: "/c", admit: { false }, refreshing: { _ in await n() }) == nil
        else {
            Issue.record("a start not admitted is refused")
            return
        }
        #expect(calls.count == 1)
    }

    /// `no-cache`: a fresh entry found by key is still fetched again (and the alias remembered).
    @Test func aRevalidatingTargetNotSeenBeforeFetchesPastAFreshEntry() async {
        let c = cache()
        c.store(entry("old"), for: "key")
        let calls = Counter()
        let load = loader("new", calls: calls)
        guard
            case .loaded(let entry, _)? = await c.lookupOrFetch(
                "key", alias: "/k", revalidate: true, admit: { true }, refreshing: { _ in await load() })
        else {
            Issue.record("revalidation fetches")
            return
        }
        #expect(String(decoding: entry.body, as: UTF8.self) == "new" && calls.count == 1 && aliased(c, "/k") == "new")
    }

    /// An answer cut from data (a page of a feed) is looked up under its own key first, then
    /// the data it is cut from, in the same visit; the alias means the answer.
    @Test func anAnswerCutFromDataIsFoundBeforeItsData() async {
        let c = cache()
        let calls = Counter()
        let load = loader("x", calls: calls)
        func find() async -> ResponseCache.Outcome? {
            await c.lookupOrFetch("data", answer: "page", alias: "/page", admit: { false }, refreshing: { _ in await load() })
        }
        guard await find() == nil else {
            Issue.record("neither is there: a fetch, here not admitted")
            return
        }
        c.store(entry("d"), for: "data")
        guard case .fresh(let data)? = await find(), String(decoding: data.body, as: UTF8.self) == "d" else {
            Issue.record("no page yet: the data")
            return
        }
        c.store(entry("p"), for: "page")
        guard case .answered(let page)? = await find(), String(decoding: page.body, as: UTF8.self) == "p" else {
            Issue.record("the page cut before")
            return
        }
        #expect(aliased(c, "/page") == "p" && calls.count == 0)
    }

    /// Issue 67: an answer cut from data lives no longer than that data. A refresh that brings
    /// other data drops every answer cut from the old at once (its alias finds nothing); the
    /// same data renewed keeps them; a cut of data replaced while it was cut is not kept.
    @Test func answersCutFromDataGoWhenTheDataIsReplaced() async throws {
        let c = cache()
        let old = entry("d1")
        c.store(old, for: "data")
        c.store(entry("p1"), for: "page", cutFrom: "data", source: old)
        c.store(entry("q1"), for: "other", cutFrom: "data", source: old)
        #expect(body(c.lookup("page", alias: "/page")) == "p1" && body(c.lookup("other")) == "q1")
        #expect(aliased(c, "/page") == "p1")
        // Renewed (an upstream 304, or read back from the shared tier): the same representation.
        c.store(old.restamped(storedAt: clock.now), for: "data")
        #expect(body(c.lookup("page")) == "p1")
        // Refreshed with new data: both cuts gone at once, before any TTL.
        guard case .loaded = await c.fetch("data", revalidate: true, loader: loader("d2", calls: Counter())) else {
            Issue.record("expected the refresh to load")
            return
        }
        #expect(aliased(c, "/page") == nil)
        guard case .miss = c.lookup("page"), case .miss = c.lookup("other") else {
            Issue.record("an answer cut from replaced data still answers")
            return
        }
        // A cut of the old data that finished after the refresh: not kept.
        c.store(entry("p1"), for: "page", cutFrom: "data", source: old)
        guard case .miss = c.lookup("page") else {
            Issue.record("a cut of replaced data was kept")
            return
        }
        // A cut of the new data: kept, until the data gives way in turn.
        let new = try #require(c.peek("data"))
        c.store(entry("p2"), for: "page", cutFrom: "data", source: new)
        #expect(body(c.lookup("page")) == "p2" && aliased(c, "/page") == "p2")
        c.store(entry("d3"), for: "data")
        #expect(aliased(c, "/page") == nil)
    }
}
