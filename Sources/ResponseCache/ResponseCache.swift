import Primitives

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

    public enum FetchOutcome: Sendable {
        /// Loaded now (or by the flight this call joined), and from where.
        case loaded(CachedResponse, LoadOrigin)
        /// The load failed but a previous good entry is inside its stale-if-error window.
        case staleAfterError(CachedResponse, CacheLoadError)
        case failed(CacheLoadError)
    }

    /// A loader given the entry its result replaces (this replica's, or the shared tier's
    /// when newer; nil: none known), so a refresh can be conditional on its validators.
    public typealias RefreshingLoader = @Sendable (CachedResponse?) async -> Result<CachedResponse, CacheLoadError>
    typealias FlightResult = Result<(CachedResponse, LoadOrigin), CacheLoadError>

    private struct State {
        /// Entries in use order: eviction takes the least recently used in O(1).
        var slots = LRUTable<String, CachedResponse>()
        /// Raw request target → canonical key and where its entry sits in `slots`, so a
        /// repeat hit skips parameter validation and hashes only the (short) raw target.
        var aliases: [String: Alias] = [:]
        var flights: [String: Task<FlightResult, Never>] = [:]
        /// Callers waiting on each flight that a caller started (background refreshes are
        /// not counted and never cancelled): when the last one goes, the flight is cancelled.
        var waiters: [String: Int] = [:]
        /// Which flight is current per key (an abandoned one may still finish later).
        var flightNumbers: [String: UInt64] = [:]
        var nextFlight: UInt64 = 0
        var bytes = 0
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

    /// `shared`: the L2 tier consulted on a miss before the loader runs (nil: this process only).
    public init(
        maxBytes: Int, clock: @escaping @Sendable () -> Double, shared: (any SharedCacheTier)? = nil,
        sharedPolicy: SharedTierPolicy = SharedTierPolicy(waitLimit: 8, maxValueBytes: 1 << 20), sharedObserver: SharedTierObserver? = nil
    ) {
        self.maxBytes = maxBytes
        self.clock = clock
        self.shared = shared
        self.sharedPolicy = sharedPolicy
        self.sharedObserver = sharedObserver
    }

    public var now: Double { clock() }

    public var byteCount: Int { state.withLock { $0.bytes } }
    public var entryCount: Int { state.withLock { $0.slots.count } }

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

    /// Lookup by canonical key: fresh, stale (inside stale-while-revalidate) or miss. With an
    /// `alias` (the raw target that led here), remembers it means `key`, under the same lock:
    /// the next request for that target takes the hot path.
    public func lookup(_ key: String, alias: String? = nil) -> Lookup {
        let now = clock()
        let alias = alias.flatMap { $0.utf8.count <= Self.maxAliasLength ? $0 : nil }
        return state.withLock { s in
            if let alias {
                if s.aliases.count >= Self.maxAliases { s.aliases.removeAll(keepingCapacity: true) }
                s.aliases[alias] = Alias(key: key, slot: s.slots.slot(of: key) ?? -1)
            }
            guard let response = s.slots.touch(key) else { return .miss }
            return Self.classify(response, at: now)
        }
    }

    /// Loads through a single flight per key: concurrent callers share one upstream fetch,
    /// and `loader` is told which entry it refreshes. A new upstream fetch starts only if
    /// `admit()` allows it; it is asked under the same lock that finds a running flight, so
    /// joining one (which costs the upstream nothing) is never charged, however many callers
    /// race. nil: not admitted. On failure, a previous good entry inside its stale-if-error
    /// window is offered. `revalidate` (a client's `no-cache`): a flight this call starts
    /// skips the shared tier and asks the upstream; it still joins a flight already running.
    public func fetch(_ key: String, revalidate: Bool = false, admit: () -> Bool, refreshing loader: @escaping RefreshingLoader) async -> FetchOutcome? {
        let task = state.withLock { s -> Task<FlightResult, Never>? in
            if let running = s.flights[key] { return join(key, running, in: &s) }
            guard admit() else { return nil }
            return join(key, startFlight(key, revalidate: revalidate, loader: loader, in: &s), in: &s)
        }
        guard let task else { return nil }
        return await outcome(of: task, key: key)
    }

    /// Counts a caller on the flight. A flight with no count (a background refresh) gets
    /// none here either: only flights callers started can lose all their callers.
    private func join(_ key: String, _ task: Task<FlightResult, Never>, in s: inout State) -> Task<FlightResult, Never> {
        if let n = s.waiters[key] { s.waiters[key] = n + 1 }
        return task
    }

    /// A caller that went away (its client disconnected). When it was the flight's last
    /// caller, the flight is cancelled: a fetch still waiting for its upstream turn leaves
    /// the queue without spending a token. What already left completes (see the loader).
    private func leave(_ key: String, _ task: Task<FlightResult, Never>) {
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

    private func outcome(of task: Task<FlightResult, Never>, key: String) async -> FetchOutcome {
        let result = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            leave(key, task)
        }
        switch result {
        case .success(let (response, origin)):
            return .loaded(response, origin)
        case .failure(let error):
            let now = clock()
            let previous = state.withLock { $0.slots.peek(key) }
            if let previous, previous.status == 200,
                previous.age(at: now) < previous.policy.ttl + previous.policy.staleIfError
            {
                return .staleAfterError(previous, error)
            }
            return .failed(error)
        }
    }

    /// Starts a refresh unless one is already running for the key (stale-while-revalidate).
    public func refreshInBackground(_ key: String, refreshing loader: @escaping RefreshingLoader) {
        _ = flight(for: key, loader: loader)
    }

    func isRefreshing(_ key: String) -> Bool { state.withLock { $0.flights[key] != nil } }

    /// Callers counted on the key's flight (nil: none running, or a background refresh).
    func callers(of key: String) -> Int? { state.withLock { $0.waiters[key] } }

    private func flight(for key: String, revalidate: Bool = false, loader: @escaping RefreshingLoader) -> Task<FlightResult, Never> {
        state.withLock { s in
            if let running = s.flights[key] { return running }
            return startFlight(key, revalidate: revalidate, loader: loader, counted: false, in: &s)
        }
    }

    private func startFlight(
        _ key: String, revalidate: Bool, loader: @escaping RefreshingLoader, counted: Bool = true, in s: inout State
    ) -> Task<FlightResult, Never> {
        s.nextFlight &+= 1
        let number = s.nextFlight
        // The entry it replaces, read under the lock that starts it: no second visit.
        let own = s.slots.peek(key)
        let task = Task<FlightResult, Never> { [self] in
            let result = await load(key, loader, consultShared: !revalidate, own: own)
            finish(key, number, result.map { $0.0 })
            return result
        }
        s.flights[key] = task
        s.flightNumbers[key] = number
        s.waiters[key] = counted ? 0 : nil
        return task
    }

    /// Stores the result and ends the flight under one lock, so a caller arriving
    /// right after sees the new entry rather than starting another fetch.
    private func finish(_ key: String, _ number: UInt64, _ result: Result<CachedResponse, CacheLoadError>) {
        state.withLock { s in
            // An abandoned flight that finished anyway ends no newer flight of the same key.
            if s.flightNumbers[key] == number {
                s.flights[key] = nil
                s.waiters[key] = nil
                s.flightNumbers[key] = nil
            }
            switch result {
            case .success(let response):
                // A negative entry (found in the shared tier) never replaces a good one.
                if response.status == 200 || s.slots.peek(key)?.status != 200 { insert(response, for: key, into: &s) }
            case .failure(let error):
                if let negative = error.negativeEntry {
                    // Never replace a good entry (still useful for stale-if-error) with a negative one.
                    if s.slots.peek(key)?.status != 200 { insert(negative, for: key, into: &s) }
                }
            }
        }
    }

    /// This process's copy, without counting as a use.
    func peek(_ key: String) -> CachedResponse? { state.withLock { $0.slots.peek(key) } }

    /// Stores an entry directly (tests, warm-up).
    public func store(_ response: CachedResponse, for key: String) {
        state.withLock { insert(response, for: key, into: &$0) }
    }

    private func insert(_ response: CachedResponse, for key: String, into s: inout State) {
        let cost = response.cost + key.utf8.count
        // One oversized entry must not flush everything else: it is simply not kept.
        guard cost <= maxBytes / 8 else {
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
