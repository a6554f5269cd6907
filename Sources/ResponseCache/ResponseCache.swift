import Primitives
import Synchronization

/// In-memory response cache: TTL, stale-while-revalidate, stale-if-error,
/// single-flight loads, and a byte budget with LRU eviction.
public final class ResponseCache: Sendable {
    public enum Lookup: Sendable {
        /// Within its TTL.
        case fresh(CachedResponse)
        /// Past its TTL but inside the stale-while-revalidate window: serve it and refresh.
        case stale(CachedResponse)
        /// Nothing usable without going upstream.
        case miss
    }

    /// What the cache answers a request with: an entry it holds (`lookupOrFetch` only), or
    /// what the flight the request joined or started ended with. The one result type from
    /// the cache to the route.
    public enum Outcome: Sendable {
        /// The answer's own entry (cut before from the key's), fresh.
        case answered(CachedResponse)
        /// The key's entry, within its TTL.
        case fresh(CachedResponse)
        /// The key's entry, inside stale-while-revalidate: serve it; the caller starts the refresh.
        case stale(CachedResponse)
        /// Loaded now (or by the flight this call joined), and from where.
        case loaded(CachedResponse, LoadOrigin)
        /// The load failed but a previous good entry is inside its stale-if-error window.
        case staleAfterError(CachedResponse, CacheLoadError)
        case failed(CacheLoadError)

        /// What a loader's result is, fetched here from the upstream.
        init(fetched result: Result<CachedResponse, CacheLoadError>) {
            switch result {
            case .success(let response): self = .loaded(response, .upstream)
            case .failure(let error): self = .failed(error)
            }
        }
    }

    /// A loader given the entry its result replaces (this replica's, or the shared tier's
    /// when newer; nil: none known), so a refresh can be conditional on its validators.
    public typealias RefreshingLoader = @Sendable (CachedResponse?) async -> Result<CachedResponse, CacheLoadError>

    private struct State {
        /// Entries in use order: eviction takes the least recently used in O(1).
        var slots = LRUTable<String, CachedResponse>()
        /// Raw request target → canonical key and where its entry sits in `slots`, so a
        /// repeat hit skips parameter validation and hashes only the (short) raw target.
        var aliases: [String: Alias] = [:]
        var flights: [String: Task<Outcome, Never>] = [:]
        /// Callers waiting on each flight that a caller started (background refreshes are
        /// not counted and never cancelled): when the last one goes, the flight is cancelled.
        var waiters: [String: Int] = [:]
        /// Which flight is current per key (an abandoned one may still finish later).
        var flightNumbers: [String: UInt64] = [:]
        var nextFlight: UInt64 = 0
        var bytes = 0
        /// Counts every change of what is held (a store, a replacement, an eviction).
        var generation: UInt64 = 0
        /// Answers cut from each key's entry (`store(_:for:cutFrom:source:)`), dropped all at
        /// once when that entry gives way to another representation (`insert`).
        var cuts: [String: Set<String>] = [:]
        /// Names in `cuts`, some perhaps evicted since (forgotten by `pruneCuts`).
        var cutNames = 0
    }

    private struct Alias {
        let key: String
        /// The entry's slot when last seen (-1: none yet); checked against `key` on use.
        var slot: Int
    }

    public let maxBytes: Int
    private let state = Locked(State())
    let clock: @Sendable () -> Double
    let shared: (any SharedCacheTier)?
    let sharedPolicy: SharedTierPolicy
    let sharedObserver: SharedTierObserver?
    /// Where a new entry fetched here under `sharedPolicy.announcedKeyPrefix` is announced.
    let changes: (any SharedChangeFeed)?
    /// Where flights wait for other replicas' fetches (with a shared tier).
    let waitRoom: SharedWaitRoom?
    /// Renews the fetch locks this replica holds, all at once.
    let lockKeeper: SharedLockKeeper?
    private let deadlineTimers = Atomic<Int>(0)

    /// `shared`: the L2 tier consulted on a miss before the loader runs (nil: this process only).
    public init(
        maxBytes: Int, clock: @escaping @Sendable () -> Double, shared: (any SharedCacheTier)? = nil,
        sharedPolicy: SharedTierPolicy = SharedTierPolicy(waitLimit: 8, maxValueBytes: 1 << 20), sharedObserver: SharedTierObserver? = nil,
        changes: (any SharedChangeFeed)? = nil
    ) {
        self.changes = changes
        self.maxBytes = maxBytes
        self.clock = clock
        self.shared = shared
        self.sharedPolicy = sharedPolicy
        self.sharedObserver = sharedObserver
        waitRoom = shared.map { SharedWaitRoom(tier: $0, interval: sharedPolicy.watchInterval, clock: clock) }
        lockKeeper = shared.map { SharedLockKeeper(tier: $0, ttl: sharedPolicy.lockTTL) }
    }

    /// Flights waiting for another replica's fetch now.
    public var sharedWaiting: Int { waitRoom?.waiting ?? 0 }

    public var now: Double { clock() }

    public var byteCount: Int { state.withLock { $0.bytes } }
    public var entryCount: Int { state.withLock { $0.slots.count } }

    /// Changes whenever an entry is stored, replaced or evicted: one who looked at entries can
    /// tell that nothing changed since without looking at each again. Time alone (an entry
    /// going stale) does not change it.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// Most raw targets remembered; past this the table starts over (it is only a shortcut).
    static let maxAliases = 16_384
    /// Longer targets are not remembered, so the table stays within a few MiB
    /// (16,384 × 512 B) whatever clients send.
    static let maxAliasLength = 512

    /// A raw target seen before as `key`, whose entry is stale or gone: what a lookup by key
    /// would say, so the miss path (once the request is validated) need not ask again.
    public struct KnownAlias: Sendable {
        public let key: String
        public let lookup: Lookup
    }

    /// The hot path: a raw target seen before, resolved and looked up under one lock, at a
    /// time the caller read (`now`, so that a hit reads the clock once). Only a fresh entry is
    /// returned; a target seen before is otherwise put in `known` (an out parameter, so that a
    /// hit returns one pointer: a returned enum costs every hit about 50 instructions).
    public func lookup(alias: String, now: Double, known: inout KnownAlias?) -> CachedResponse? {
        state.withLock { s in
            // Touching a stale entry too is harmless: it is about to be used either way.
            guard let target = s.aliases[alias] else { return nil }
            if let response = s.slots.touch(target.key, at: target.slot) {
                if response.isFresh(at: now) { return response }
                known = KnownAlias(key: target.key, lookup: Self.classify(response, at: now))
                return nil
            }
            // Stored since the alias was made, or moved: find it by key once, remember where.
            guard let slot = s.slots.slot(of: target.key), let response = s.slots.touch(target.key, at: slot) else {
                known = KnownAlias(key: target.key, lookup: .miss)
                return nil
            }
            s.aliases[alias]?.slot = slot
            if response.isFresh(at: now) { return response }
            known = KnownAlias(key: target.key, lookup: Self.classify(response, at: now))
            return nil
        }
    }

    /// Fresh, stale (inside stale-while-revalidate) or as good as missing, at `now`.
    private static func classify(_ response: CachedResponse, at now: Double) -> Lookup {
        let age = response.age(at: now)
        let policy = response.policy
        if age < policy.ttl { return .fresh(response) }
        if age < policy.ttl + policy.staleWhileRevalidate { return .stale(response) }
        return .miss
    }

    /// Lookup by canonical key: fresh, stale (inside stale-while-revalidate) or miss.
    public func lookup(_ key: String) -> Lookup {
        let now = clock()
        return state.withLock { s in Self.lookup(key, alias: nil, at: now, in: &s) }
    }

    /// The same, remembering that `alias` (a raw target) means `key` (tests; routes remember
    /// an alias in `lookupOrFetch`).
    func lookup(_ key: String, alias: String) -> Lookup {
        let now = clock()
        let alias = alias.utf8.count <= Self.maxAliasLength ? alias : nil
        return state.withLock { s in Self.lookup(key, alias: alias, at: now, in: &s) }
    }

    private static func lookup(_ key: String, alias: String?, at now: Double, in s: inout State) -> Lookup {
        if let alias {
            if s.aliases.count >= maxAliases { s.aliases.removeAll(keepingCapacity: true) }
            s.aliases[alias] = Alias(key: key, slot: s.slots.slot(of: key) ?? -1)
        }
        guard let response = s.slots.touch(key) else { return .miss }
        return classify(response, at: now)
    }

    /// Loads through a single flight per key: concurrent callers share one upstream fetch,
    /// and `loader` is told which entry it refreshes. A new upstream fetch starts only if
    /// `admit()` allows it; it is asked under the same lock that finds a running flight, so
    /// joining one (which costs the upstream nothing) is never charged, however many callers
    /// race. nil: not admitted. On failure, a previous good entry inside its stale-if-error
    /// window is offered. `revalidate` (a client's `no-cache`): a flight this call starts
    /// skips the shared tier and asks the upstream; it still joins a flight already running.
    /// (Tests; routes enter through `lookupOrFetch`.)
    func fetch(_ key: String, revalidate: Bool = false, admit: () -> Bool, refreshing loader: @escaping RefreshingLoader) async -> Outcome? {
        let task = state.withLock { s in enter(key, revalidate: revalidate, admit: admit, loader: loader, in: &s) }
        guard let task else { return nil }
        return await outcome(of: task, key: key)
    }

    /// A miss's one visit before its flight ends: under one lock, `answer`'s own entry (an
    /// answer cut from `key`'s entry and kept under its own key) when fresh; else `key`'s,
    /// fresh or stale; else the flight joined or started (see `fetch`). `alias`: the raw target
    /// that led here, remembered as meaning `answer` (or `key`), so its next request takes the
    /// hot path. `revalidate` skips the entries (the alias is still remembered). nil: a new
    /// fetch was not admitted.
    /// `waitUntil`: the caller's own deadline (the clock's seconds): a flight that has not ended
    /// by then (one another request started with a longer budget, say) is left to go on, and
    /// the caller gets `upstream_timeout`.
    public func lookupOrFetch(
        _ key: String, answer: String? = nil, alias: String? = nil, revalidate: Bool = false, waitUntil deadline: Double? = nil, admit: () -> Bool,
        refreshing loader: @escaping RefreshingLoader
    ) async -> Outcome? {
        let now = clock()
        let alias = alias.flatMap { $0.utf8.count <= Self.maxAliasLength ? $0 : nil }
        let answer = answer == key ? nil : answer
        var found: Outcome?
        let flight = state.withLock { s -> Task<Outcome, Never>? in
            if let answer, case .fresh(let entry) = Self.lookup(answer, alias: alias, at: now, in: &s), !revalidate {
                found = .answered(entry)
                return nil
            }
            switch Self.lookup(key, alias: answer == nil ? alias : nil, at: now, in: &s) {
            case .fresh(let entry) where !revalidate: found = .fresh(entry)
            case .stale(let entry) where !revalidate: found = .stale(entry)
            default: return enter(key, revalidate: revalidate, admit: admit, loader: loader, in: &s)
            }
            return nil
        }
        guard let flight else { return found }
        guard let deadline else { return await outcome(of: flight, key: key) }
        return await outcome(of: flight, key: key, until: deadline)
    }

    /// The flight's outcome, or at `deadline` (the clock's seconds) a timeout: the caller
    /// leaves the flight then, as when it is cancelled, and the flight goes on for the others.
    /// Whichever ends the wait first cancels the deadline's timer: a timer left sleeping would
    /// keep its task, the flight and the flight's answer alive until the deadline (every miss
    /// held its response for the rest of its budget: hundreds of MB under a burst of misses).
    private func outcome(of task: Task<Outcome, Never>, key: String, until deadline: Double) async -> Outcome {
        let once = OnceOutcome()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                once.wait(continuation)
                deadlineTimers.add(1, ordering: .relaxed)
                let timer = Task { [clock] in
                    defer { self.deadlineTimers.subtract(1, ordering: .relaxed) }
                    let left = deadline - clock()
                    if left > 0 { try? await Task.sleep(for: .milliseconds(Saturating.int((left * 1000).rounded(.up), in: 1...Int(Int32.max)))) }
                    guard !Task.isCancelled else { return }
                    if once.resume(.failed(Self.waitedPastDeadline)) { self.leave(key, task) }
                }
                once.keep(timer: timer)
                Task { once.resume(await task.value) }
            }
        } onCancel: {
            if once.resume(.failed(Self.waitedPastDeadline)) { leave(key, task) }
        }
    }

    /// Deadline timers alive: callers waiting on a flight with a deadline (0 when idle; one
    /// that stays up after its callers left is a leak).
    public var waitingWithDeadline: Int { deadlineTimers.load(ordering: .relaxed) }

    /// The caller's deadline came before the flight's end (the flight goes on for others).
    static let waitedPastDeadline = CacheLoadError(
        ClientError(status: 504, code: "upstream_timeout", message: "the upstream did not answer in time"), sharedWithWaiters: false)

    /// Joins the key's running flight, or starts one if `admit()` allows it (nil: not admitted).
    private func enter(
        _ key: String, revalidate: Bool, admit: () -> Bool, loader: @escaping RefreshingLoader, in s: inout State
    ) -> Task<Outcome, Never>? {
        if let running = s.flights[key] { return join(key, running, in: &s) }
        guard admit() else { return nil }
        return join(key, startFlight(key, revalidate: revalidate, loader: loader, in: &s), in: &s)
    }

    /// Counts a caller on the flight. A flight with no count (a background refresh) gets
    /// none here either: only flights callers started can lose all their callers.
    private func join(_ key: String, _ task: Task<Outcome, Never>, in s: inout State) -> Task<Outcome, Never> {
        if let n = s.waiters[key] { s.waiters[key] = n + 1 }
        return task
    }

    /// A caller that went away (its client disconnected). When it was the flight's last
    /// caller, the flight is cancelled: a fetch still waiting for its upstream turn leaves
    /// the queue without spending a token. What already left completes (see the loader).
    private func leave(_ key: String, _ task: Task<Outcome, Never>) {
        let abandon = state.withLock { s -> Bool in
            guard s.flights[key] == task, let n = s.waiters[key] else { return false }
            s.waiters[key] = n - 1
            guard n - 1 == 0 else { return false }
            // Gone from the table at once: the next caller starts afresh instead of joining a
            // cancelled flight. If this one still finishes (its request had left), it is stored.
            s.flights[key] = nil
            s.waiters[key] = nil
            s.flightNumbers[key] = nil
            return true
        }
        if abandon { task.cancel() }
    }

    private func outcome(of task: Task<Outcome, Never>, key: String) async -> Outcome {
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            leave(key, task)
        }
    }

    /// Starts a refresh unless one is already running for the key (stale-while-revalidate);
    /// `revalidating`: from the upstream, whatever the shared tier holds (a publisher's ping).
    public func refreshInBackground(_ key: String, revalidating: Bool = false, refreshing loader: @escaping RefreshingLoader) {
        _ = flight(for: key, revalidate: revalidating, loader: loader)
    }

    /// Whose read a refresh may take for its own.
    public enum ReadWanted: Sendable {
        /// Any read of the key under way, here or at another replica (a feed's cadence: one
        /// read a round for all of them).
        case anyUnderWay
        /// Only one that starts after the call: a publisher's ping tells of what it published
        /// after a read already under way asked (that read answers with the feed before it).
        case startingNow
    }

    /// A refresh (joined when one is running, as `wanted` allows), awaited: what it loaded.
    public func refresh(
        _ key: String, revalidating: Bool, wanted: ReadWanted = .anyUnderWay, refreshing loader: @escaping RefreshingLoader
    ) async -> Outcome {
        if case .startingNow = wanted, let running = state.withLock({ $0.flights[key] }) { _ = await running.value }
        return await flight(for: key, revalidate: revalidating, wanted: wanted, loader: loader).value
    }

    func isRefreshing(_ key: String) -> Bool { state.withLock { $0.flights[key] != nil } }

    /// Callers counted on the key's flight (nil: none running, or a background refresh).
    func callers(of key: String) -> Int? { state.withLock { $0.waiters[key] } }

    private func flight(for key: String, revalidate: Bool = false, wanted: ReadWanted = .anyUnderWay, loader: @escaping RefreshingLoader) -> Task<
        Outcome, Never
    > {
        state.withLock { s in
            if let running = s.flights[key] { return running }
            return startFlight(key, revalidate: revalidate, wanted: wanted, loader: loader, counted: false, in: &s)
        }
    }

    private func startFlight(
        _ key: String, revalidate: Bool, wanted: ReadWanted = .anyUnderWay, loader: @escaping RefreshingLoader, counted: Bool = true,
        in s: inout State
    ) -> Task<Outcome, Never> {
        s.nextFlight &+= 1
        let number = s.nextFlight
        // The entry it replaces, read under the lock that starts it: no second visit.
        let own = s.slots.peek(key)
        // A background revalidation is leased (one replica at a time); a client's no-cache reads now.
        let leased = revalidate && !counted
        let run: @Sendable () async -> Outcome = { [self] in
            finish(key, number, await load(key, loader, consultShared: !revalidate, leased: leased, wanted: wanted, own: own))
        }
        // A caller's flight inherits the caller's task-locals (its upstream deadline, fair-queue
        // turn, trace). A background refresh belongs to no request, wherever it was started from.
        let task = counted ? Task(operation: run) : Task.detached { await SharedTierCall.patiently(run) }
        s.flights[key] = task
        s.flightNumbers[key] = number
        s.waiters[key] = counted ? 0 : nil
        return task
    }

    /// Stores the result and ends the flight under one lock, so a caller arriving
    /// right after sees the new entry rather than starting another fetch. A failure is
    /// answered, under the same lock, by the previous good entry while inside its
    /// stale-if-error window (the shared tier's copy, when the load kept one, included).
    private func finish(_ key: String, _ number: UInt64, _ loaded: Outcome) -> Outcome {
        let now: Double
        if case .failed = loaded { now = clock() } else { now = 0 }
        return state.withLock { s in
            // An abandoned flight that finished anyway ends no newer flight of the same key.
            if s.flightNumbers[key] == number {
                s.flights[key] = nil
                s.waiters[key] = nil
                s.flightNumbers[key] = nil
            }
            switch loaded {
            case .loaded(let response, _):
                // A negative entry (found in the shared tier) never replaces a good one.
                if response.status == 200 || s.slots.peek(key)?.status != 200 { insert(response, for: key, into: &s) }
            case .failed(let error):
                let previous = s.slots.peek(key)
                if let previous, previous.status == 200 {
                    // Never replaced by a negative entry: still useful for stale-if-error.
                    let policy = previous.policy
                    if previous.age(at: now) < policy.ttl + policy.staleIfError { return .staleAfterError(previous, error) }
                } else if let negative = error.negativeEntry {
                    insert(negative, for: key, into: &s)
                }
            case .answered, .fresh, .stale, .staleAfterError:
                break  // a load ends loaded or failed
            }
            return loaded
        }
    }

    /// This process's copy, without counting as a use.
    public func peek(_ key: String) -> CachedResponse? { state.withLock { $0.slots.peek(key) } }

    /// Stores an entry directly (tests, warm-up).
    public func store(_ response: CachedResponse, for key: String) {
        state.withLock { insert(response, for: key, into: &$0) }
    }

    /// Keeps `answer` under `key` as an answer cut from `source`, the entry `dataKey` held when
    /// it was cut. It lives no longer than that entry: when `dataKey`'s entry gives way to
    /// another representation (a refresh brought new data, here or from another replica),
    /// every answer cut from it goes at once, so the next request cuts it from the new data. A
    /// cut of data replaced meanwhile (or no longer held) is not kept at all.
    public func store(_ answer: CachedResponse, for key: String, cutFrom dataKey: String, source: CachedResponse) {
        state.withLock { s in
            guard key != dataKey, let current = s.slots.peek(dataKey), current.etag == source.etag else { return }
            insert(answer, for: key, into: &s)
            guard s.slots.slot(of: key) != nil else { return }  // too large to keep
            if s.cuts[dataKey, default: []].insert(key).inserted { s.cutNames += 1 }
            if s.cutNames > 2 * s.slots.count + Self.minCutNames { Self.pruneCuts(&s) }
        }
    }

    /// Names of cut answers remembered before evicted ones are forgotten (past twice the entries).
    static let minCutNames = 4096

    /// Forgets cut answers no longer held (evicted), and data keys with none left: after it, no
    /// more names than entries, so its cost is spread over the stores that come before the next.
    private static func pruneCuts(_ s: inout State) {
        var cuts: [String: Set<String>] = [:]
        var count = 0
        for (dataKey, names) in s.cuts {
            let held = names.filter { s.slots.slot(of: $0) != nil }
            guard !held.isEmpty else { continue }
            cuts[dataKey] = held
            count += held.count
        }
        s.cuts = cuts
        s.cutNames = count
    }

    /// Every answer cut from `key`'s entry, gone: that entry is giving way to another.
    private static func dropCuts(of key: String, in s: inout State) {
        guard let names = s.cuts.removeValue(forKey: key) else { return }
        s.cutNames -= names.count
        for name in names {
            if let gone = s.slots.removeValue(forKey: name) { s.bytes -= gone.cost + name.utf8.count }
        }
    }

    private func insert(_ response: CachedResponse, for key: String, into s: inout State) {
        s.generation &+= 1
        // Data answers were cut from, replaced by another representation (not the same one
        // renewed by a 304 or read back from the shared tier): those answers go with it.
        if s.cuts[key] != nil, s.slots.peek(key)?.etag != response.etag { Self.dropCuts(of: key, in: &s) }
        let cost = response.cost + key.utf8.count
        // One oversized entry (past a quarter of the budget) must not flush everything else:
        // it is simply not kept.
        guard cost <= maxBytes / 4 else {
            if let old = s.slots.removeValue(forKey: key) { s.bytes -= old.cost + key.utf8.count }
            return
        }
        if let old = s.slots.set(key, response) { s.bytes -= old.cost + key.utf8.count }
        s.bytes += cost
        while s.bytes > maxBytes, let victim = s.slots.removeOldest() {
            s.bytes -= victim.value.cost + victim.key.utf8.count
        }
    }
}

/// One caller's wait on a flight, ended once: by the flight, its deadline or its cancellation.
private final class OnceOutcome: Sendable {
    private let state = Locked<(continuation: CheckedContinuation<ResponseCache.Outcome, Never>?, result: ResponseCache.Outcome?, done: Bool)>(
        (nil, nil, false))

    private let timerBox = Locked<Task<Void, Never>?>(nil)

    /// Holds the deadline's timer, cancelled when the wait ends (at once if it already has).
    func keep(timer: Task<Void, Never>) {
        timerBox.withLock { $0 = timer }
        if state.withLock({ $0.done }) { timer.cancel() }
    }

    func wait(_ continuation: CheckedContinuation<ResponseCache.Outcome, Never>) {
        let ready = state.withLock { s -> ResponseCache.Outcome? in
            if let result = s.result { return result }
            s.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// True when this ended the wait.
    @discardableResult
    func resume(_ outcome: ResponseCache.Outcome) -> Bool {
        let (ended, continuation) = state.withLock { s -> (Bool, CheckedContinuation<ResponseCache.Outcome, Never>?) in
            guard !s.done else { return (false, nil) }
            s.done = true
            defer { s.continuation = nil }
            if s.continuation == nil { s.result = outcome }
            return (true, s.continuation)
        }
        if ended { timerBox.withLock { $0 }?.cancel() }
        continuation?.resume(returning: outcome)
        return ended
    }
}
