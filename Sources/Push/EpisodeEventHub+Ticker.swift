import EpisodeSync
import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// The ticker: one turn at a time looks at every watched podcast, tells the streams whose
/// podcasts changed, and reads feeds again at their cadence within the ceiling.
extension EpisodeEventHub {
    /// Tells the streams watching `id` at once that its data changed here (a read just ended),
    /// rather than at the next turn of the ticker.
    package func changed(_ id: Int) {
        guard state.withLock({ $0.watchers[id] != nil }) else { return }
        tick()
    }

    /// A library was refreshed (`/episodes`): its feeds are kept warm like watched ones (after
    /// them, within the same ceiling) for `libraryWarmth`, so the app's next refresh finds them
    /// read and an episode's `seenAt` close to its publication. At most `maxLibraryFeeds`.
    package func noteLibrary(_ ids: [Int]) {
        let until = clock() + limits.libraryWarmth
        let added = state.withLock { st -> Bool in
            for id in ids where st.library[id] != nil || st.library.count < limits.maxLibraryFeeds { st.library[id] = until }
            return !st.library.isEmpty
        }
        if added { startTicking() }
    }

    func startTicking() {
        let start = state.withLock { st -> Bool in
            guard !st.ticking else { return false }
            st.ticking = true
            return true
        }
        guard start else { return }
        Task.detached { [weak self] in
            while let hub = self {
                // Only streams need word from the other replicas (a library's warmth does not).
                if hub.streamCount > 0 { await hub.learnFromOtherReplicas() }
                if !hub.tick(), hub.stopsTicking() { break }
                try? await Task.sleep(nanoseconds: 200_000_000)
            }
        }
    }

    /// Whether the ticker may stop: nothing watched, no library kept warm, no WebSub
    /// subscription left to end (decided under the lock a new stream takes to start it).
    private func stopsTicking() -> Bool {
        state.withLock { st in
            guard st.subscribers.isEmpty, st.starting == 0, st.library.isEmpty, (websub?.subscriptionCount ?? 0) == 0 else { return false }
            st.ticking = false
            return true
        }
    }

    /// One look at the watched podcasts (a turn of the ticker, or a read that just ended); one
    /// at a time: asked while one runs, it runs once more after it. False when nothing is
    /// watched.
    @discardableResult
    func tick() -> Bool {
        let enters = state.withLock { st -> Bool in
            if st.inTick {
                st.tickAgain = true
                return false
            }
            st.inTick = true
            return true
        }
        guard enters else { return true }
        var watching = turn()
        while state.withLock({ st -> Bool in
            let again = st.tickAgain
            st.tickAgain = false
            if !again { st.inTick = false }
            return again
        }) {
            watching = turn()
        }
        return watching
    }

    private func turn() -> Bool {
        let now = clock()
        // Read before the look: whatever is stored while it runs is looked at next turn.
        let generation = cache.generation
        let start = state.withLock { beginTurn(&$0, now: now, generation: generation) }
        hearDeferredPings(now: now)
        catchUpAfterAnEmptiedTier(now: now)
        websub?.maintain(watched: Set(start.watched), now: now)
        guard !start.watched.isEmpty || !start.library.isEmpty || start.heartbeat else { return !start.watched.isEmpty || !start.library.isEmpty }
        let look = start.looks ? lookAtTheCache(start, generation: generation) : CacheLook()
        let plan = state.withLock { planReads(&$0, look, budget: start.budget, now: now) }
        scheduleNextReads(plan.read + plan.unscheduled, now: now)
        for id in plan.read {
            counters.refreshes.add(1, ordering: .relaxed)
            refresh(id, .cadence)
        }
        tell(plan.changed, of: plan.changes)
        if start.heartbeat {
            let all = state.withLock { $0.subscribers.all }
            for s in all where !s.stream.send(ServerSentEvent.heartbeat) { remove(s) }
        }
        return true
    }

    /// What a turn looks at, taken under the lock as it starts.
    struct TurnStart {
        let watched: [Int]
        /// The libraries' feeds no stream watches (every 25th turn).
        let library: [Int]
        let heartbeat: Bool
        /// Reads the ceiling allows this turn.
        let budget: Int
        /// Whether the cache is looked at: not when nothing was stored since the last look, no
        /// stream came and no feed's read is due (an idle turn costs no lookups).
        let looks: Bool

        static let idle = TurnStart(watched: [], library: [], heartbeat: false, budget: 0, looks: false)
    }

    private func beginTurn(_ st: inout State, now: Double, generation: UInt64) -> TurnStart {
        st.turn &+= 1
        // Libraries' feeds are looked at every 25th turn (5 s): they are many, and not awaited.
        let libraryTurn = st.turn % 25 == 0
        if libraryTurn {
            st.library = st.library.filter { $0.value > now }
            st.nextRead = st.nextRead.filter { st.watchers[$0.key] != nil || st.library[$0.key] != nil }
        }
        // With no stream and no library left, the ticker goes on only while WebSub subscriptions are to end.
        guard !st.subscribers.isEmpty || !st.library.isEmpty else { return .idle }
        let elapsed = st.lastTick == 0 ? 0 : min(60, now - st.lastTick)
        st.lastTick = now
        st.refreshTokens = min(limits.refreshesPerMinute, st.refreshTokens + elapsed * limits.refreshesPerMinute / 60)
        let beat = now - st.lastHeartbeat >= limits.heartbeat
        if beat { st.lastHeartbeat = now }
        let library = libraryTurn ? st.library.keys.filter { st.watchers[$0] == nil } : []
        let looks = libraryTurn || st.lookedAt != generation || st.nextRead.values.contains { $0 <= now }
        return TurnStart(
            watched: Array(st.watchers.keys), library: library, heartbeat: beat, budget: Int(st.refreshTokens), looks: looks)
    }

    /// What the cache holds of the turn's podcasts, looked at outside the lock.
    struct CacheLook {
        /// Each watched podcast's data as held (its ETag).
        var current: [Int: String] = [:]
        /// Watched podcasts stale or missing: read as soon as their time allows.
        var due: [(id: Int, at: Double)] = []
        /// The libraries' feeds held and read well (one evicted, or whose read failed, is left out).
        var libraryHeld: [Int] = []
        /// The cache's generation the look started from (nil: no look this turn).
        var generation: UInt64?
    }

    private func lookAtTheCache(_ start: TurnStart, generation: UInt64) -> CacheLook {
        counters.cacheLooks.add(1, ordering: .relaxed)
        var look = CacheLook(generation: generation)
        for id in start.watched {
            switch cache.lookup(EpisodesAdapter.dataKey(id)) {
            case .fresh(let entry):
                look.current[id] = entry.etag
            case .stale(let entry):
                look.current[id] = entry.etag
                look.due.append((id, 0))
            case .miss:
                look.due.append((id, 0))
            }
        }
        // A library's feed is read again at its cadence (the first time one interval after the
        // refresh that named it, which read it).
        look.libraryHeld = start.library.filter { id in
            switch cache.lookup(EpisodesAdapter.dataKey(id)) {
            case .fresh(let entry), .stale(let entry): entry.status == 200
            case .miss: false
            }
        }
        return look
    }

    /// What a turn does, decided under the lock: the streams to tell and of what, the feeds to read.
    struct TurnPlan {
        let changed: [Subscriber]
        let changes: [Int: EpisodeChangeFragments.Change]
        /// Read now, within the ceiling.
        let read: [Int]
        /// Feeds without a next time yet (a hundred a turn).
        let unscheduled: [Int]
    }

    private func planReads(_ st: inout State, _ look: CacheLook, budget: Int, now: Double) -> TurnPlan {
        // A stale or missing feed is read as soon as its time allows (not again while it is read).
        var due = look.due.filter { (st.nextRead[$0.id] ?? 0) <= now }
        var affected = Set<UInt32>()
        var changes: [Int: EpisodeChangeFragments.Change] = [:]
        for (id, etag) in look.current where st.told[id] != etag {
            st.told[id] = etag
            changes[id] = st.toldVersion[id].map { .from($0) } ?? .unknown
            affected.formUnion(st.watchers[id] ?? [])
        }
        // Streams with more of a backlog to send, whose last page has left.
        for key in st.morePages where st.subscribers[key]?.stream.isIdle == true { affected.insert(key) }
        for (id, at) in st.nextRead where at <= now && look.current[id] != nil { due.append((id, at)) }
        // The longest waiting first, within the ceiling.
        due.sort { $0.at < $1.at }
        var read = Array(Set(due.prefix(budget).map(\.id)))
        // Then the libraries' feeds, within what is left.
        let libraryDue = look.libraryHeld.filter { (st.nextRead[$0] ?? .infinity) <= now }.sorted { st.nextRead[$0] ?? 0 < st.nextRead[$1] ?? 0 }
        read += libraryDue.prefix(max(0, budget - read.count))
        st.refreshTokens -= Double(read.count)
        // Not read again before its next time is set (`scheduleNextReads`, outside the lock).
        for id in read { st.nextRead[id] = .infinity }
        let unscheduled = (Array(look.current.keys) + look.libraryHeld).filter { st.nextRead[$0] == nil }.prefix(100)
        // A hundred more may wait for their next time: looked at again next turn.
        if let generation = look.generation { st.lookedAt = unscheduled.count < 100 ? generation : nil }
        return TurnPlan(changed: affected.compactMap { st.subscribers[$0] }, changes: changes, read: read, unscheduled: Array(unscheduled))
    }

    /// Each feed's next time from its own data, worked out outside the lock.
    private func scheduleNextReads(_ ids: [Int], now: Double) {
        let times = Set(ids).map { id in (id, now + interval(id, now: now)) }
        state.withLock { st in
            for (id, at) in times where st.watchers[id] != nil || st.library[id] != nil { st.nextRead[id] = at }
        }
    }

    /// Tells the streams whose podcasts changed, each change worked out once for all of them,
    /// then notes the version they were told of (the next change starts from it).
    private func tell(_ changed: [Subscriber], of changes: [Int: EpisodeChangeFragments.Change]) {
        let memo = EventMemo(changes: changes, read: { [self] id in status(of: id) })
        for s in changed { deliver(s, memo: memo) }
        guard !changes.isEmpty else { return }
        let versions = changes.keys.compactMap { id -> (Int, EpisodeChangeLog.Version)? in
            guard case .ok(let data) = memo.status(id) else { return nil }
            return (id, data.changes.current)
        }
        state.withLock { st in
            for (id, version) in versions where st.watchers[id] != nil { st.toldVersion[id] = version }
        }
    }

    package func interval(_ id: Int, now: Double) -> Double {
        guard case .fresh(let entry) = cache.lookup(EpisodesAdapter.dataKey(id)), let data = EpisodeFeedData(entry.body) else {
            return limits.refreshBounds.lowerBound
        }
        let own = EpisodeCadence.refreshInterval(data, now: Double(Timestamp.now()), within: limits.refreshBounds)
        // A hub tells of its changes: polling is only the safety net, at the longest interval.
        return websub?.holds(id, now: now) == true ? max(own, limits.refreshBounds.upperBound) : own
    }
}
