import Primitives
/// The miss path with a shared tier (L2): consult it before the upstream, and let
/// exactly one replica fetch a key while the others serve their stale copy or wait
/// for that replica's result (bounded), then fetch themselves. Any tier failure
/// falls back to this process's own behaviour.
extension ResponseCache {
    /// `own`: this process's entry for the key when the flight started.
    /// `leased`: a background revalidation, one replica at a time (see `revalidate`).
    /// `wanted`: whether another replica's read under way may stand for this one.
    func load(
        _ key: String, _ loader: @escaping RefreshingLoader, consultShared: Bool, leased: Bool = false, wanted: ReadWanted = .anyUnderWay,
        own: CachedResponse?
    ) async -> Outcome {
        guard let shared else { return Outcome(fetched: await loader(own)) }
        guard consultShared else {
            if leased { return await revalidateLeased(key, loader, own: own, wanted: wanted, shared: shared) }
            return await revalidateNow(key, loader, own: own, shared: shared)
        }
        var stale = usableStale(own)
        var sharedCopy: CachedResponse?
        // Refreshing our own stale copy: ask first whether the tier has a fresh one at all,
        // without its body (another replica refreshing it has not finished, most of the time).
        if stale != nil, case .notYet = await shared.probe(key) {
            sharedObserver?(.miss)
            return await fetchOnce(key, loader, stale: stale, previous: own, shared: shared)
        }
        switch await shared.get(key) {
        case .found(let entry, let age):
            let found = entry.restamped(storedAt: clock() - age)
            if age < entry.policy.ttl {
                sharedObserver?(.hit)
                return .loaded(found, .sharedHit)
            }
            sharedCopy = found
            if let candidate = usableStale(found), candidate.storedAt > (stale?.storedAt ?? -.infinity) { stale = candidate }
            sharedObserver?(.miss)
        case .absent:
            sharedObserver?(.miss)
        case .unavailable:
            // Not connected: on our own. Connected but slow: the lock still decides who fetches.
            guard shared.health != .down else {
                sharedObserver?(.fetchedUnlocked)
                return await fetchHere(key, loader, previous: own)
            }
        }
        // The newer of ours and the tier's: a refresh of another replica's entry sends its validators.
        let previous = Self.newer(own, sharedCopy)
        let result = await fetchOnce(key, loader, stale: stale, previous: previous, shared: shared)
        if case .failed = result, let copy = sharedCopy { keepIfUsableAfterError(copy, key) }
        return result
    }

    /// A client's `no-cache`: its own read of the upstream, started now (another replica's
    /// read, begun before it asked, would not answer it). The answer is published for the other
    /// replicas; if the upstream fails, the tier's last good answer still stands
    /// (stale-if-error). Without a copy here, the tier's gives the refresh its validators.
    private func revalidateNow(_ key: String, _ loader: @escaping RefreshingLoader, own: CachedResponse?, shared: any SharedCacheTier) async -> Outcome {
        var tierCopy: CachedResponse?
        if own == nil, case .found(let entry, let age) = await shared.get(key) { tierCopy = entry.restamped(storedAt: clock() - age) }
        let result = await fetchHere(key, loader, previous: own ?? tierCopy)
        if case .failed = result {
            if tierCopy == nil, case .found(let entry, let age) = await shared.get(key) { tierCopy = entry.restamped(storedAt: clock() - age) }
            if let tierCopy { keepIfUsableAfterError(tierCopy, key) }
        }
        return result
    }

    /// A background revalidation (a watched feed's turn, a publisher's ping) asks the upstream
    /// even while a copy is fresh, one replica at a time: the key's fetch lock is its lease.
    /// Held elsewhere, another replica is reading the feed now: its answer, stored about when
    /// this one asked or since, is taken instead of a second download. The answer is published
    /// for the other replicas; if the upstream fails, the tier's last good answer still stands
    /// (stale-if-error). Without a copy here, the tier's gives the refresh its validators.
    private func revalidateLeased(
        _ key: String, _ loader: @escaping RefreshingLoader, own: CachedResponse?, wanted: ReadWanted, shared: any SharedCacheTier
    ) async -> Outcome {
        let asked = clock()
        var pause = sharedPolicy.pollInterval
        var token: String?
        var waited = false
        leasing: while token == nil {
            switch await shared.lock(key, ttl: sharedPolicy.lockTTL) {
            case .acquired(let held):
                token = held
            case .unavailable:
                sharedObserver?(.fetchedUnlocked)
                break leasing
            case .heldElsewhere:
                waited = true
                guard clock() + pause < asked + sharedPolicy.waitLimit else {
                    sharedObserver?(.waitTimedOut)
                    // Still being read elsewhere: that reader tells of what it finds.
                    if let own { return .loaded(own, .staleWhileOtherRefreshes) }
                    break leasing
                }
                try? await Task.sleep(for: .seconds(pause))
                if Task.isCancelled { return Self.leftWhileWaiting }
                pause = min(pause * 2, sharedPolicy.maxPollInterval)
            }
        }
        var tierCopy: CachedResponse?
        if waited || own == nil, case .found(let entry, let age) = await shared.get(key) { tierCopy = entry.restamped(storedAt: clock() - age) }
        // The holder stores its answer before it lets go: one stored about when this one asked
        // (or since) is that read's, and stands for this one unless only a read starting now
        // does (a ping: the holder's read may have asked before the publisher published).
        if waited, case .anyUnderWay = wanted, let token, let copy = tierCopy, copy.status == 200, copy.storedAt >= asked - sharedPolicy.lockTTL {
            await shared.unlock(key, token: token)
            sharedObserver?(.wait)
            return .loaded(copy, .sharedWait)
        }
        let result = await fetchHere(key, loader, previous: Self.newer(own, tierCopy), unlocking: token)
        if case .failed = result {
            if tierCopy == nil, case .found(let entry, let age) = await shared.get(key) { tierCopy = entry.restamped(storedAt: clock() - age) }
            if let tierCopy { keepIfUsableAfterError(tierCopy, key) }
        }
        return result
    }

    /// An answer kept here and offered to the other replicas (the podcast an episodes load
    /// looked up, say: the replica that next loads that podcast's feed finds it there).
    public func share(_ response: CachedResponse, for key: String) {
        store(response, for: key)
        guard shared != nil else { return }
        Task { await offer(response, for: key) }
    }

    /// `share`, awaited: the tier has taken it (or could not) when this returns.
    public func shareAwaited(_ response: CachedResponse, for key: String) async {
        store(response, for: key)
        await offer(response, for: key)
    }

    private func offer(_ response: CachedResponse, for key: String) async {
        guard let shared else { return }
        let policy = sharedPolicy, observer = sharedObserver, age = response.age(at: clock())
        await SharedTierCall.patiently {
            if case .stored = await shared.put(key, response, age: age, fetchSeconds: 0, maxBytes: policy.maxValueBytes) { observer?(.stored) }
        }
    }

    /// The key's entry fresh here, else fresh in the shared tier (then kept here too); nil
    /// when neither has one. For what a load can start from, not for answers (a miss on the
    /// tier costs a round trip).
    public func freshAnywhere(_ key: String) async -> CachedResponse? {
        if case .fresh(let entry) = lookup(key) { return entry }
        guard let shared, case .found(let entry, let age) = await shared.get(key), age < entry.policy.ttl else { return nil }
        let found = entry.restamped(storedAt: clock() - age)
        store(found, for: key)
        return found
    }

    /// The newest copy of the key's entry, here or in the shared tier (a newer shared one is
    /// kept here too): how a replica learns that another has read the feed again.
    public func newestAnywhere(_ key: String) async -> CachedResponse? {
        let own = peek(key)
        guard let shared, case .found(let entry, let age) = await shared.get(key) else { return own }
        let found = entry.restamped(storedAt: clock() - age)
        guard found.storedAt > (own?.storedAt ?? -.infinity) else { return own }
        store(found, for: key)
        return found
    }

    /// The shared tier's copy of the key's entry (kept here too when newer than this replica's);
    /// nil when the tier holds none or did not answer.
    public func sharedCopy(_ key: String) async -> CachedResponse? {
        guard let shared, case .found(let entry, let age) = await shared.get(key) else { return nil }
        let found = entry.restamped(storedAt: clock() - age)
        if found.storedAt > (peek(key)?.storedAt ?? -.infinity) { store(found, for: key) }
        return found
    }

    /// Stale-if-error across replicas: when a fetch fails, another replica's last good
    /// answer (kept in the tier for TTL + the longer stale window) is as good as our own.
    /// Kept here, it is what the failed flight's callers are served, and no negative
    /// entry replaces it.
    private func keepIfUsableAfterError(_ copy: CachedResponse, _ key: String) {
        guard copy.status == 200, copy.age(at: clock()) < copy.policy.ttl + copy.policy.staleIfError,
            (peek(key)?.storedAt ?? -.infinity) < copy.storedAt
        else { return }
        store(copy, for: key)
        sharedObserver?(.staleServed)
    }

    /// One replica at a time fetches: take the lock, or serve stale, or wait in the wait room
    /// for the holder's result; a holder's failure is answered by its waiters, not refetched in
    /// turn. Only a tier that cannot be reached (or keeps not answering) makes this replica
    /// fetch without the lock (counted as `fetchedUnlocked`).
    private func fetchOnce(
        _ key: String, _ loader: @escaping RefreshingLoader, stale: CachedResponse?, previous: CachedResponse?, shared: any SharedCacheTier
    ) async -> Outcome {
        let deadline = clock() + sharedPolicy.waitLimit
        let ttl = sharedPolicy.lockTTL
        var unanswered = 0
        // Once the tier has answered late (busy, not stopped), this flight's calls wait for its
        // replies (up to the stall timeout) rather than fetch what another replica is fetching.
        var patient = SharedTierCall.isPatient
        func ask<R: Sendable>(_ call: @Sendable () async -> R, timedOut: (R) -> Bool = { _ in false }) async -> R {
            if patient { return await SharedTierCall.patiently(call) }
            let answer = await call()
            guard timedOut(answer), await answersLate(shared) else { return answer }
            patient = true
            return await SharedTierCall.patiently(call)
        }
        while true {
            // (With a usable stale copy, an unanswered lock is not waited for: the copy is served.)
            switch await ask({ await shared.lock(key, ttl: ttl) }, timedOut: { (lock: SharedLock) in lock == .unavailable && stale == nil }) {
            case .acquired(let token):
                // The previous holder may have stored its answer (or failed) and let go between
                // our lookup and this lock: look once more before spending an upstream request.
                switch await ask({ await shared.probe(key) }, timedOut: { (probe: SharedProbe) in probe == .unavailable }) {
                case .fresh:
                    let found = await ask({ await shared.get(key) }) { (lookup: SharedLookup) -> Bool in
                        if case .unavailable = lookup { return true }
                        return false
                    }
                    if case .found(let entry, let age) = found, age < entry.policy.ttl {
                        await shared.unlock(key, token: token)
                        sharedObserver?(.wait)
                        return .loaded(entry.restamped(storedAt: clock() - age), .sharedWait)
                    }
                case .failed(.error(let error)):
                    await shared.unlock(key, token: token)
                    sharedObserver?(.wait)
                    return .failed(CacheLoadError(error, sharedWithWaiters: false))
                case .failed(.tooLarge), .notYet, .unavailable:
                    break
                }
                // Stale-while-revalidate across replicas: a usable stale answer (ours or the
                // tier's) is served now, and this replica refreshes in the background, under the lock.
                if let stale {
                    Task { [self] in
                        await SharedTierCall.patiently {
                            if case .loaded(let fresh, _) = await fetchHere(key, loader, previous: previous, unlocking: token) { store(fresh, for: key) }
                        }
                    }
                    sharedObserver?(.staleServed)
                    return .loaded(stale, .staleWhileOtherRefreshes)
                }
                return await fetchHere(key, loader, previous: previous, unlocking: token)
            case .unavailable:
                // No answer about the lock. Connected, with a usable stale copy: serve it (the next
                // request refreshes). Slow (a busy Redis, a busy replica): ask again a few times.
                // Down, or silent even after `lateAnswerWait` (`ask`): on our own, counted; another
                // replica may fetch it too.
                unanswered += 1
                let health = shared.health
                if health != .down, let stale {
                    sharedObserver?(.staleServed)
                    return .loaded(stale, .staleWhileOtherRefreshes)
                }
                guard health == .answering, unanswered < Self.unansweredLocksBeforeFetching, clock() < deadline else {
                    sharedObserver?(.fetchedUnlocked)
                    return await fetchHere(key, loader, previous: previous)
                }
                try? await Task.sleep(for: .seconds(sharedPolicy.watchInterval))
                if Task.isCancelled { return Self.leftWhileWaiting }
            case .heldElsewhere:
                if let stale {
                    sharedObserver?(.staleServed)
                    return .loaded(stale, .staleWhileOtherRefreshes)
                }
                guard let room = waitRoom else { return await fetchHere(key, loader, previous: previous) }
                switch await room.wait(key, until: deadline) {
                case .settled(.fresh):
                    if case .found(let entry, let age) = await ask({ await shared.get(key) }), age < entry.policy.ttl {
                        sharedObserver?(.wait)
                        return .loaded(entry.restamped(storedAt: clock() - age), .sharedWait)
                    }
                case .settled(.failed(.error(let error))):
                    sharedObserver?(.wait)
                    return .failed(CacheLoadError(error, sharedWithWaiters: false))
                case .settled(.failed(.tooLarge)):
                    return await fetchHere(key, loader, previous: previous)  // it cannot come through the tier: fetch now
                case .settled(.free), .settled(.locked):
                    break  // the holder let go without an answer (or died): take the lock
                case .timedOut:
                    sharedObserver?(.waitTimedOut)
                    return await fetchHere(key, loader, previous: previous)
                case .unreachable:
                    sharedObserver?(.fetchedUnlocked)
                    return await fetchHere(key, loader, previous: previous)
                case .cancelled:
                    return Self.leftWhileWaiting
                }
            }
        }
    }

    /// Lock attempts the tier may leave unanswered in a row (reachable, but slow) before this
    /// replica fetches without it.
    static let unansweredLocksBeforeFetching = 5

    /// After a call the tier did not answer in time: whether it answers anything within
    /// `lateAnswerWait`. A busy Redis's late reply comes; a stopped Redis stays silent (the wait
    /// is shorter than a deadline, so it costs a miss under two), a down one costs nothing.
    private func answersLate(_ shared: any SharedCacheTier) async -> Bool {
        let until = clock() + sharedPolicy.lateAnswerWait
        while shared.health == .silent, clock() < until, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(2))
        }
        return shared.health == .answering
    }

    /// Left while another replica fetched: nothing was asked of the upstream, and this says
    /// nothing about it to anyone else waiting.
    static var leftWhileWaiting: Outcome {
        let error = ClientError(status: 502, code: "upstream_cancelled", message: "cancelled")
        return .failed(CacheLoadError(error, sharedWithWaiters: false, refusedBeforeSending: true))
    }

    /// Fetches from the upstream here; the result (or a negative entry, or a failure marker
    /// for the waiters) is published to the tier and the lock released afterwards, off the
    /// request's path, in that order so a waiter sees the outcome before the lock disappears.
    /// The lock is renewed while the fetch runs (every upstream call of it).
    private func fetchHere(_ key: String, _ loader: RefreshingLoader, previous: CachedResponse?, unlocking token: String? = nil) async -> Outcome {
        let started = clock()
        // The lock lives while the fetch runs (renewed with every other lock this replica holds).
        let held = token.flatMap { token in lockKeeper?.hold(key, token: token) }
        let result = await loader(previous)
        if let held { lockKeeper?.release(held) }
        let fetchSeconds = clock() - started
        let publish: CachedResponse?
        var failure: SharedFailure?
        switch result {
        case .success(let response): publish = response
        case .failure(let error):
            publish = error.negativeEntry
            if publish == nil, error.sharedWithWaiters { failure = .error(error.error) }
        }
        if let shared, publish != nil || token != nil {
            let policy = sharedPolicy, observer = sharedObserver, clock = self.clock, failed = failure, publish = publish
            // What other replicas' streams wait to hear of: a new entry of an announced key.
            let announce = publish.flatMap { entry -> (any SharedChangeFeed)? in
                guard entry.status == 200, entry.etag != previous?.etag, let prefix = policy.announcedKeyPrefix, key.hasPrefix(prefix) else { return nil }
                return changes
            }
            Task {
                await SharedTierCall.patiently {
                    var failure = failed
                    if let entry = publish {
                        // Its age as of the put (a busy machine may start this task late: an age taken
                        // before would make the entry look fresher to the other replicas).
                        switch await shared.put(key, entry, age: entry.age(at: clock()), fetchSeconds: fetchSeconds, maxBytes: policy.maxValueBytes) {
                        case .stored:
                            observer?(.stored)
                            await announce?.announce(key, etag: entry.etag)
                        case .notStored: break
                        case .tooLarge:
                            observer?(.skippedTooLarge)
                            failure = .tooLarge
                        }
                    }
                    // Only the lock holder speaks for the key: its waiters answer its failure.
                    if let token {
                        if let failure { await shared.markFailed(key, failure, ttl: policy.failureTTL) }
                        await shared.unlock(key, token: token)
                    }
                }
            }
        }
        return Outcome(fetched: result)
    }

    /// A good entry still inside its stale-while-revalidate window.
    private func usableStale(_ entry: CachedResponse?) -> CachedResponse? {
        guard let entry, entry.status == 200 else { return nil }
        let age = entry.age(at: clock())
        return age < entry.policy.ttl + entry.policy.staleWhileRevalidate ? entry : nil
    }

    /// The more recently stored of two copies of an entry.
    static func newer(_ a: CachedResponse?, _ b: CachedResponse?) -> CachedResponse? {
        guard let a else { return b }
        guard let b else { return a }
        return b.storedAt > a.storedAt ? b : a
    }
}
