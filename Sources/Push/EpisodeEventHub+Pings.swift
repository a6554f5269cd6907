import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// Publishers' pings: heard here or read from the shared queue, deferred when too soon.
extension EpisodeEventHub {
    /// The podcasts a feed URL names: its feed id, any watched podcast whose feed it is, and
    /// every podcast recorded as reading it (directory ids too, read on any replica).
    package func podcasts(namedBy url: String) async -> [Int] {
        let watched = state.withLock { $0.byURL[url] ?? [] }
        let recorded = await records?.podcasts(reading: url) ?? []
        return Array(watched.union(recorded).union([FeedID.id(ofNormalised: url)])).sorted()
    }

    package enum Ping { case refreshing, tooSoon(Double) }

    /// Whether this replica, or another through the shared tier, reads podcast `id`'s feed
    /// (an error answer cached for it is not a feed to read), or a record says one did: a
    /// ping's promise holds after a restart or a shared tier that came back empty.
    package func knows(_ id: Int) async -> Bool {
        let key = EpisodesAdapter.dataKey(id)
        switch cache.lookup(key) {
        case .fresh(let entry), .stale(let entry): return entry.status == 200
        case .miss:
            if await cache.newestAnywhere(key)?.status == 200 { return true }
            return await records?.url(of: id) != nil
        }
    }

    /// A publisher's (or anyone's) word that a feed changed: read it again now, if it was not
    /// pinged within `pingInterval` (the caller has checked it `knows` the feed).
    package func ping(_ id: Int) -> Ping {
        let now = clock()
        let soon = state.withLock { st -> (wait: Double, handOver: Bool)? in
            if let last = st.lastPing[id], now - last < limits.pingInterval {
                let due = last + limits.pingInterval
                // With a shared queue the deferred read is kept there (a replica that dies or is
                // deployed meanwhile does not take it along); once per interval a feed.
                var handOver = false
                if pingQueue != nil {
                    // One handed over is forgotten once due (another replica may have read it).
                    if st.queuedDeferrals.count >= 10_000 { st.queuedDeferrals = st.queuedDeferrals.filter { $0.value > now } }
                    if st.queuedDeferrals[id].map({ $0 <= now }) ?? true, st.queuedDeferrals.count < 10_000 {
                        st.queuedDeferrals[id] = due
                        handOver = true
                    }
                } else if st.deferredPings.count < 10_000 {
                    st.deferredPings[id] = due
                }
                return (due - now, handOver)
            }
            if st.lastPing.count >= 100_000 { st.lastPing = st.lastPing.filter { now - $0.value < limits.pingInterval } }
            st.lastPing[id] = now
            return nil
        }
        if let soon {
            if soon.handOver, let pingQueue {
                let notBefore = Int64(Timestamp.now() + Int(soon.wait.rounded(.up))) * 1000
                Task.detached { [self] in
                    guard await !pingQueue.enqueue(id, notBefore: notBefore) else { return }
                    // The tier did not take it: read here once the interval has passed.
                    state.withLock { st in
                        st.queuedDeferrals[id] = nil
                        if st.deferredPings.count < 10_000 { st.deferredPings[id] = now + soon.wait }
                    }
                }
            }
            return .tooSoon(soon.wait)
        }
        counters.pings.add(1, ordering: .relaxed)
        if let pingQueue {
            // Kept in the shared tier before it is read: another replica reads it if this one
            // dies first. This replica takes it at once (most likely its own entry).
            Task.detached { [self] in
                if await pingQueue.enqueue(id, notBefore: 0) { await readQueuedPings() } else { refresh(id, .ping) }
            }
        } else {
            refresh(id, .ping)
        }
        return .refreshing
    }

    /// Reads the feeds of the pings this replica takes from the shared queue (new ones, and
    /// ones a dead replica took and left for 20 s), acknowledging each once read. One pass at a
    /// time on a replica.
    func readQueuedPings() async {
        guard let pingQueue, let read = reader.withLock({ $0 }),
            readingQueue.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        defer { readingQueue.store(false, ordering: .releasing) }
        while let taken = await pingQueue.take(max: 20, stalled: 20), !taken.isEmpty {
            await withTaskGroup(of: Void.self) { group in
                for ping in taken {
                    // A deferred ping waits for its time (at most an interval: a time not ours is
                    // no reason to wait longer), pending under this replica meanwhile.
                    let wait = min(Double(ping.notBefore - Int64(Timestamp.now()) * 1000) / 1000, limits.pingInterval)
                    guard wait > 0 else {
                        // One this replica already waits on (taken over from itself): left to that wait.
                        if deferredEntries.withLock({ $0.contains(ping.entry) }) { continue }
                        group.addTask {
                            await read(ping.id, .ping)
                            await pingQueue.done(ping.entry)
                        }
                        continue
                    }
                    // Pending under this replica while it waits: not taken over by this replica's own
                    // XAUTOCLAIM when its wait and read outlast the stall time.
                    guard deferredEntries.withLock({ $0.insert(ping.entry).inserted }) else { continue }
                    Task.detached { [self] in
                        defer { deferredEntries.withLock { _ = $0.remove(ping.entry) } }
                        try? await Task.sleep(for: .seconds(wait))
                        let now = clock()
                        state.withLock { st in
                            st.lastPing[ping.id] = now
                            st.queuedDeferrals[ping.id] = nil
                        }
                        counters.pings.add(1, ordering: .relaxed)
                        await read(ping.id, .ping)
                        await pingQueue.done(ping.entry)
                    }
                }
            }
        }
    }

    /// Every second, the pings nobody here took yet: another replica's, or a dead one's.
    func startReadingPings() {
        Task.detached { [weak self] in
            while let hub = self {
                await hub.readQueuedPings()
                try? await Task.sleep(nanoseconds: 1_000_000_000)
            }
        }
    }

    /// The pings deferred until their feed's interval passed, read now as pings.
    func hearDeferredPings(now: Double) {
        let due = state.withLock { st -> [Int] in
            guard !st.deferredPings.isEmpty else { return [] }
            let due = st.deferredPings.filter { $0.value <= now }.map(\.key)
            for id in due {
                st.deferredPings[id] = nil
                st.lastPing[id] = now
            }
            return due
        }
        for id in due {
            counters.pings.add(1, ordering: .relaxed)
            refresh(id, .ping)
        }
    }
}
