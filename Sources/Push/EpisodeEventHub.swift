import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// This replica's `/episodes/events` streams and what keeps them told. A ticker looks at the
/// episode data of every watched podcast (the entries `/episodes` is cut from): when one
/// changed (read by this replica, or taken from the shared tier), each stream watching it gets
/// the episodes it has not seen, as `/episodes` with its sync token would answer — so a client
/// that resumes from its last event's id misses nothing and gets nothing twice. The ticker also
/// keeps watched feeds warm: each is read again (conditionally, single-flight across replicas
/// through the shared tier's lock) at its own cadence, within a ceiling of reads a minute.
package final class EpisodeEventHub: Sendable {
    package final class Subscriber: Sendable {
        let stream: ResponseStream
        let ids: [Int]
        let limit: Int
        let client: ClientKey?
        /// The client's position: the last event's id.
        /// The client's position (the last event's id), and whether its first event went:
        /// until it has, the ticker sends it nothing (the first event says where it starts).
        let position: Locked<(token: SyncToken?, started: Bool)>

        package init(stream: ResponseStream, ids: [Int], limit: Int, client: ClientKey?, token: SyncToken?) {
            self.stream = stream
            self.ids = ids
            self.limit = limit
            self.client = client
            position = Locked((token, false))
        }
    }

    package struct Limits: Sendable {
        package var streams = 10_000
        package var streamsPerClient = 256
        /// Below the read timeouts proxies keep by default (nginx 60 s, many balancers 30 s).
        package var heartbeat = 10.0
        package var refreshBounds: ClosedRange<Double> = 120...1800
        package var refreshesPerMinute = 600.0
        /// A feed's pings are heard at most this often.
        package var pingInterval = 10.0
        /// How long a library refresh keeps its feeds warm (two refreshes of an app that refreshes hourly).
        package var libraryWarmth = 7200.0
        package var maxLibraryFeeds = 50_000

        package init(
            streams: Int = 10_000, streamsPerClient: Int = 256, heartbeat: Double = 10.0, refreshBounds: ClosedRange<Double> = 120...1800,
            refreshesPerMinute: Double = 600.0
        ) {
            self.streams = streams
            self.streamsPerClient = streamsPerClient
            self.heartbeat = heartbeat
            self.refreshBounds = refreshBounds
            self.refreshesPerMinute = refreshesPerMinute
        }
    }

    private struct State {
        var subscribers: [ObjectIdentifier: Subscriber] = [:]
        /// Streams admitted whose subscription is not added yet (their places).
        var starting = 0
        var watchers: [Int: Set<ObjectIdentifier>] = [:]
        var perClient: [ClientKey?: Int] = [:]
        /// Each watched podcast's data as last told (its ETag, its version), and when it is next read.
        var told: [Int: String] = [:]
        var toldVersion: [Int: EpisodeChangeLog.Version] = [:]
        var nextRead: [Int: Double] = [:]
        var lastPing: [Int: Double] = [:]
        /// Pings that came within `pingInterval` of the last one: read when it has passed (a
        /// publisher that updates twice in ten seconds is heard twice, a flood still once).
        var deferredPings: [Int: Double] = [:]
        /// The same, handed to the shared ping queue (read by whichever replica takes them), by
        /// when they are due: one a feed per interval.
        var queuedDeferrals: [Int: Double] = [:]
        /// Watched podcasts by their feed's normalised URL (a ping names a feed by its URL).
        var byURL: [String: Set<Int>] = [:]
        var urlOf: [Int: String] = [:]
        /// What another replica announced of a watched podcast (its data's ETag), and how many
        /// more looks at the shared tier it gets while the tier does not hold it yet.
        var announced: [Int: (etag: String, tries: Int)] = [:]
        var changeCursor: String?
        /// The shared tier's epoch as last seen (nil: not yet), and when it is next looked at.
        var tierEpoch: String?
        var nextEpochLook = 0.0
        /// Looks in a row the tier did not answer.
        var tierSilentLooks = 0
        /// Watched podcasts to read again because the shared tier came back empty, and when
        /// (spread at the refresh ceiling's pace, not all at once).
        var catchUp: [Int: Double] = [:]
        var refreshTokens = 0.0
        var lastTick = 0.0
        var lastHeartbeat = 0.0
        var ticking = false
        /// A tick runs (one at a time), and another was asked for meanwhile.
        var inTick = false
        var tickAgain = false
        /// Streams with more pages to send than their last event carried: one page a turn, each
        /// once the one before has left.
        var morePages = Set<ObjectIdentifier>()
        var turn = 0
        /// Podcasts of recent library refreshes (`/episodes`), until when they are kept warm.
        var library: [Int: Double] = [:]
    }

    let cache: ResponseCache
    /// Word between replicas (Redis): nil, each replica hears of a change at its own reads.
    let changes: (any SharedChangeFeed)?
    let limits: Limits
    /// WebSub subscriptions of watched feeds that name a hub (nil: WebSub off).
    package let websub: WebSubSubscriber?
    package let clock: @Sendable () -> Double
    private let state = Locked(State())
    /// Why a watched feed is read again.
    package enum FeedRead: Sendable {
        /// A publisher's word (a ping, a WebSub notification): read now.
        case ping
        /// Its own cadence: unless another replica read it within its interval.
        case cadence
        /// The shared tier came back empty (what it held, pings and announcements, is lost):
        /// unless another replica read it since.
        case sharedTierEmptied
    }

    /// Starts a background read of a podcast's feed (set by the route that owns the loader).
    private let refresher = Locked<(@Sendable (Int, FeedRead) -> Void)?>(nil)
    /// The same read, awaited: the ping queue's reader acknowledges a ping after it.
    private let reader = Locked<(@Sendable (Int, FeedRead) async -> Void)?>(nil)
    /// With a shared tier: accepted pings kept there until a replica has read their feed.
    let pingQueue: (any SharedPingQueue)?
    private let readingQueue = Atomic<Bool>(false)
    /// Queued pings this replica waits to read (deferred until their time).
    private let deferredEntries = Locked(Set<String>())
    package let counters = EventCounters()

    /// Which feed each podcast reads, kept for good: a ping finds its podcasts here when no
    /// cache (this replica's, or a shared tier restarted empty) holds them.
    let records: (any FeedRecords)?
    /// Libraries under short names, for `EventSource` (`/episodes/events?library=`).
    package let libraries: LibraryHandles

    package init(
        cache: ResponseCache, changes: (any SharedChangeFeed)? = nil, limits: Limits, websub: WebSubSubscriber? = nil,
        records: (any FeedRecords)? = nil, pings: (any SharedPingQueue)? = nil,
        clock: @escaping @Sendable () -> Double = { NativeThread.monotonicSeconds() }
    ) {
        self.records = records
        libraries = LibraryHandles(records: records)
        pingQueue = pings
        self.cache = cache
        self.changes = changes
        self.limits = limits
        self.websub = websub
        self.clock = clock
    }

    /// `start(id, reason)` starts a background read of podcast `id`'s feed; `read` is the same
    /// read, awaited (the ping queue acknowledges after it; nil: `start`'s, acknowledged as it
    /// starts).
    package func setRefresher(_ start: @escaping @Sendable (Int, FeedRead) -> Void, reading read: (@Sendable (Int, FeedRead) async -> Void)? = nil) {
        refresher.withLock { $0 = start }
        reader.withLock { $0 = read ?? { id, reason in start(id, reason) } }
        if pingQueue != nil { startReadingPings() }
    }

    /// Starts a background read of podcast `id`'s feed.
    private func refresh(_ id: Int, _ reason: FeedRead) {
        refresher.withLock { $0 }?(id, reason)
    }

    package var streamCount: Int { state.withLock { $0.subscribers.count } }
    package var watchedCount: Int { state.withLock { $0.watchers.count } }

    // MARK: streams

    /// Whether `client` may open another stream here now.
    /// A stream's place, taken when its request is admitted (before its head is sent), so
    /// admission counts streams still starting; given back if the stream never starts.
    package final class Place: Sendable {
        let client: ClientKey?
        fileprivate let hub: EpisodeEventHub
        fileprivate let taken = Atomic<Bool>(false)

        fileprivate init(client: ClientKey?, hub: EpisodeEventHub) {
            self.client = client
            self.hub = hub
        }

        deinit { if !taken.load(ordering: .acquiring) { hub.giveBack(client) } }
    }

    /// A place for `client`'s stream; nil when this replica, or this address under pressure,
    /// holds all the streams it may.
    package func reserve(client: ClientKey?) -> Place? {
        let admitted = state.withLock { st -> Bool in
            guard admits(client, in: st) else { return false }
            st.starting += 1
            st.perClient[client, default: 0] += 1
            return true
        }
        return admitted ? Place(client: client, hub: self) : nil
    }

    private func giveBack(_ client: ClientKey?) {
        state.withLock { st in
            st.starting -= 1
            st.perClient[client, default: 1] -= 1
            if st.perClient[client] == 0 { st.perClient[client] = nil }
        }
    }

    /// An address is not a person (a carrier NAT puts thousands behind one): while the replica
    /// holds less than half of its streams, every stream is taken; past that, an address
    /// holding `streamsPerClient` gets no more, so one address's flood cannot take the rest.
    private func admits(_ client: ClientKey?, in st: State) -> Bool {
        let held = st.subscribers.count + st.starting
        guard held < limits.streams else { return false }
        return held < limits.streams / 2 || st.perClient[client, default: 0] < limits.streamsPerClient
    }

    /// Adds a stream in the place its request was given.
    package func add(_ s: Subscriber, in place: Place) {
        let urls = s.ids.map { id -> (Int, String?) in (id, feedURL(of: id)) }
        place.taken.store(true, ordering: .releasing)
        state.withLock { st in
            st.starting -= 1
            let key = ObjectIdentifier(s)
            st.subscribers[key] = s
            for id in s.ids { st.watchers[id, default: []].insert(key) }
            for case (let id, let url?) in urls where st.urlOf[id] == nil {
                st.urlOf[id] = url
                st.byURL[url, default: []].insert(id)
            }
        }
        s.stream.onClose { [weak self] in self?.remove(s) }
        startTicking()
    }

    func remove(_ s: Subscriber) {
        state.withLock { st in
            let key = ObjectIdentifier(s)
            guard st.subscribers.removeValue(forKey: key) != nil else { return }
            st.morePages.remove(key)
            st.perClient[s.client, default: 1] -= 1
            if st.perClient[s.client] == 0 { st.perClient[s.client] = nil }
            for id in s.ids {
                st.watchers[id]?.remove(key)
                if st.watchers[id]?.isEmpty == true {
                    st.watchers[id] = nil
                    st.told[id] = nil
                    st.toldVersion[id] = nil
                    st.nextRead[id] = nil
                    st.catchUp[id] = nil
                    if let url = st.urlOf.removeValue(forKey: id) {
                        st.byURL[url]?.remove(id)
                        if st.byURL[url]?.isEmpty == true { st.byURL[url] = nil }
                    }
                }
            }
        }
    }

    /// Sends `s` what it has not seen (the first event always: it names the client's position).
    /// Serial per stream (its token's lock): events leave in the order their ids advance.
    /// `memo`: events already made this turn, by what they are made of (streams of one library
    /// at one position get the same bytes: made once, not once per stream).
    package func deliver(_ s: Subscriber, first: Bool = false, memo: EventMemo? = nil) {
        s.position.withLock { position in
            guard first || position.started else { return }
            position.started = true
            // A long backlog goes as several events, a page each: the rest a page a turn.
            let token = position.token
            // Up to date with what it was last told: this turn's changes, worked out once for all.
            if !first, let token, let fragments = memo?.fragments, !fragments.isEmpty,
                !state.withLock({ $0.morePages.contains(ObjectIdentifier(s)) })
            {
                switch fragments.event(ids: s.ids, token: token, limit: s.limit, maxItemBytes: Self.eventItemBytes) {
                case .nothing: return
                case .event(let bytes, let next):
                    guard s.stream.send(bytes) else { return }
                    counters.events.add(1, ordering: .relaxed)
                    position.token = next
                    return
                case .general: break
                }
            }
            let key = memo.map { _ in "\(s.limit)|\(token?.encoded ?? "-")|" + s.ids.map(String.init).joined(separator: ",") }
            let made: EventMemo.Made
            if let key, let known = memo?.made(key) {
                made = known
            } else {
                made = makeEvent(s, after: token, first: first, memo: memo)
                if let key, let memo { memo.keep(made, as: key) }
            }
            guard case .event(let event) = made else {
                // Nothing more for it: not looked at again until its podcasts change.
                state.withLock { _ = $0.morePages.remove(ObjectIdentifier(s)) }
                return
            }
            guard s.stream.send(event.bytes) else { return }
            counters.events.add(1, ordering: .relaxed)
            position.token = event.token
            let id = ObjectIdentifier(s)
            state.withLock { st in
                if event.more, st.subscribers[id] != nil { st.morePages.insert(id) } else { st.morePages.remove(id) }
            }
        }
    }

    /// Episode JSON one event holds at most: a quarter of the stream's bound (256 KiB), so a
    /// reader on a slow network always takes a whole event before it falls a bound behind (a
    /// page of 100 episodes with long notes passed it, and the reader was closed inside it on
    /// every reconnect). The rest follows page by page, resumed from the token.
    static let eventItemBytes = 64 << 10

    /// The event that brings a stream from `token` on (`.nothing` when nothing is new, unless
    /// `first`). `memo`: the turn's podcasts, each read from its data once for every stream.
    private func makeEvent(_ s: Subscriber, after token: SyncToken?, first: Bool, memo: EventMemo?) -> EventMemo.Made {
        counters.composed.add(1, ordering: .relaxed)
        let statuses = s.ids.map { id -> EpisodeBatch.Status in memo?.status(id) { status(of: id) } ?? status(of: id) }
        let batch = EpisodeBatch(ids: s.ids, limit: s.limit, sync: token, maxItemBytes: Self.eventItemBytes)
        let selection = batch.select(statuses)
        let news = !selection.items.isEmpty || selection.resync.contains(true) || selection.token != token
        guard news || first else { return .nothing }
        let body = batch.render(statuses, selection).body
        // Without a position the stream starts at the newest `limit`: older pages are not its to send.
        return .event(
            EventMemo.Event(
                bytes: ServerSentEvent.encode(id: selection.token?.encoded, event: "episodes", data: body), token: selection.token,
                more: token != nil && selection.next != nil))
    }

    /// Podcast `id` as this replica's cache holds it now.
    private func status(of id: Int) -> EpisodeBatch.Status {
        switch cache.lookup(EpisodesAdapter.dataKey(id)) {
        case .fresh(let entry), .stale(let entry): EpisodeBatch.Status(cached: entry.status, body: entry.body)
        case .miss: .pending
        }
    }

    /// Tells the streams watching `id` at once that its data changed here (a read just ended),
    /// rather than at the next turn of the ticker.
    package func changed(_ id: Int) {
        guard state.withLock({ $0.watchers[id] != nil }) else { return }
        tick()
    }

    /// A podcast's feed URL, normalised: a feed id's is its registry answer's, a directory
    /// podcast's its lookup answer's (as cached).
    private func feedURL(of id: Int) -> String? {
        switch cache.lookup(PodcastAdapter.cacheKey(id)) {
        case .fresh(let entry), .stale(let entry):
            guard case .feed(let url, _)? = EpisodesAdapter.listed(fromPodcastAnswer: entry.body) else { return nil }
            return FeedID.normalised(url)
        case .miss:
            return nil
        }
    }

    /// The podcasts a feed URL names: its feed id, any watched podcast whose feed it is, and
    /// every podcast recorded as reading it (directory ids too, read on any replica).
    package func podcasts(namedBy url: String) async -> [Int] {
        let watched = state.withLock { $0.byURL[url] ?? [] }
        let recorded = await records?.podcasts(reading: url) ?? []
        return Array(watched.union(recorded).union([FeedID.id(ofNormalised: url)])).sorted()
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

    /// Whether a stream here watches podcast `id`.
    package func watches(_ id: Int) -> Bool { state.withLock { $0.watchers[id] != nil } }

    // MARK: pings

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
    private func startReadingPings() {
        Task.detached { [weak self] in
            while let hub = self {
                await hub.readQueuedPings()
                try? await Task.sleep(nanoseconds: 1_000_000_000)
            }
        }
    }

    // MARK: the ticker

    private func startTicking() {
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

    /// What the other replicas announced: a watched podcast whose data changed there is taken
    /// from the shared tier (the tick then tells its streams). The tier may not hold it yet
    /// when the word comes: it is looked for again on the next few turns.
    func learnFromOtherReplicas() async {
        guard let changes else { return }
        await noticeAnEmptiedTier(changes)
        let cursor = state.withLock { $0.changeCursor }
        if let (next, heard) = await changes.changes(after: cursor) {
            let unwatched = state.withLock { st -> [String] in
                st.changeCursor = next
                var unwatched: [String] = []
                for (key, etag) in heard {
                    guard let id = Self.podcastID(ofDataKey: key) else { continue }
                    guard st.watchers[id] != nil else {
                        unwatched.append(key)
                        continue
                    }
                    if st.told[id] != etag { st.announced[id] = (etag, 10) }
                }
                return unwatched
            }
            // A podcast no stream here watches but this replica holds: its copy is taken too, or a
            // stream that comes to watch it later (an app reconnecting from a replica that went
            // away) would start from the stale copy and hear of nothing until the next read.
            for key in unwatched where cache.peek(key) != nil { _ = await cache.newestAnywhere(key) }
        }
        let wanted = state.withLock { st -> [(Int, String)] in
            var wanted: [(Int, String)] = []
            for (id, want) in st.announced {
                if want.tries <= 0 || st.told[id] == want.etag {
                    st.announced[id] = nil
                } else {
                    st.announced[id] = (want.etag, want.tries - 1)
                    wanted.append((id, want.etag))
                }
            }
            return wanted
        }
        for (id, _) in wanted { _ = await cache.newestAnywhere(EpisodesAdapter.dataKey(id)) }
    }

    /// Every second, the shared tier's epoch: changed, the tier came back empty (a Redis
    /// restarted without persistence, or flushed) and lost what it held: pings accepted and
    /// not yet read, announcements not yet heard, records. Back after two looks unanswered, the
    /// announcements made meanwhile were lost. Either way every watched feed is read again,
    /// spread at the refresh ceiling's pace (the first replica to read one stores it, the others
    /// take that copy: `FeedRead.sharedTierEmptied`), and the records this replica can rebuild
    /// are written again.
    private func noticeAnEmptiedTier(_ changes: any SharedChangeFeed) async {
        let now = clock()
        let look = state.withLock { st -> Bool in
            guard now >= st.nextEpochLook else { return false }
            st.nextEpochLook = now + 1
            return true
        }
        guard look else { return }
        guard let epoch = await changes.epoch(proposing: String(UInt64.random(in: 1...UInt64.max), radix: 16)) else {
            // Unreachable two looks in a row (not one slow answer): what is announced meanwhile is lost.
            state.withLock { st in st.tierSilentLooks = min(st.tierSilentLooks + 1, 1_000) }
            return
        }
        let found = state.withLock { st -> (watched: [Int], emptied: Bool)? in
            defer {
                st.tierEpoch = epoch
                st.tierSilentLooks = 0
            }
            guard let seen = st.tierEpoch, seen != epoch || st.tierSilentLooks >= 2 else { return nil }
            let ids = st.watchers.keys.shuffled()
            let window = max(5, Double(ids.count) * 60 / max(1, limits.refreshesPerMinute))
            for (i, id) in ids.enumerated() { st.catchUp[id] = now + window * Double(i) / Double(ids.count) }
            return (ids, seen != epoch)
        }
        guard let (watched, emptied) = found, emptied else { return }
        counters.tierEmptied.add(1, ordering: .relaxed)
        // The records it may have lost, written again from what this replica holds, at once:
        // a stream reconnecting to a replica without the data finds its podcast's history.
        records?.storeEmptied()
        for id in watched {
            guard let records, let entry = cache.peek(EpisodesAdapter.dataKey(id)), entry.status == 200,
                let history = EpisodeFeedData(entry.body).map(EpisodeHistory.init)
            else { continue }
            records.keepHistory(id, seq: history.log.current.seq, history.encoded)
        }
    }

    static func podcastID(ofDataKey key: String) -> Int? {
        let prefix = EpisodesAdapter.dataKey(0).dropLast()
        guard key.hasPrefix(prefix), key.utf8.count <= prefix.utf8.count + 18 else { return nil }
        return Int(key.dropFirst(prefix.count)).flatMap { $0 > 0 ? $0 : nil }
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
        let (watched, library, heartbeat, budget) = state.withLock { st -> ([Int], [Int], Bool, Int) in
            st.turn &+= 1
            // Libraries' feeds are looked at every 25th turn (5 s): they are many, and not awaited.
            let libraryTurn = st.turn % 25 == 0
            if libraryTurn {
                st.library = st.library.filter { $0.value > now }
                st.nextRead = st.nextRead.filter { st.watchers[$0.key] != nil || st.library[$0.key] != nil }
            }
            // With no stream and no library left, the ticker goes on only while WebSub subscriptions are to end.
            guard !st.subscribers.isEmpty || !st.library.isEmpty else { return ([], [], false, 0) }
            let elapsed = st.lastTick == 0 ? 0 : min(60, now - st.lastTick)
            st.lastTick = now
            st.refreshTokens = min(limits.refreshesPerMinute, st.refreshTokens + elapsed * limits.refreshesPerMinute / 60)
            let beat = now - st.lastHeartbeat >= limits.heartbeat
            if beat { st.lastHeartbeat = now }
            let library = libraryTurn ? st.library.keys.filter { st.watchers[$0] == nil } : []
            return (Array(st.watchers.keys), library, beat, Int(st.refreshTokens))
        }
        hearDeferredPings(now: now)
        catchUpAfterAnEmptiedTier(now: now)
        websub?.maintain(watched: Set(watched), now: now)
        guard !watched.isEmpty || !library.isEmpty || heartbeat else { return !watched.isEmpty || !library.isEmpty }
        var current: [Int: String] = [:]
        var due: [(id: Int, at: Double)] = []
        for id in watched {
            switch cache.lookup(EpisodesAdapter.dataKey(id)) {
            case .fresh(let entry):
                current[id] = entry.etag
            case .stale(let entry):
                current[id] = entry.etag
                due.append((id, 0))
            case .miss:
                due.append((id, 0))
            }
        }
        // A library's feed is read again at its cadence (the first time one interval after the
        // refresh that named it, which read it); one evicted, or whose read failed, is left out.
        let libraryHeld = library.filter { id in
            switch cache.lookup(EpisodesAdapter.dataKey(id)) {
            case .fresh(let entry), .stale(let entry): entry.status == 200
            case .miss: false
            }
        }
        let (changed, changes, read, unscheduled) = state.withLock { st -> ([Subscriber], [Int: EpisodeChangeFragments.Change], [Int], [Int]) in
            // A stale or missing feed is read as soon as its time allows (not again while it is read).
            due = due.filter { (st.nextRead[$0.id] ?? 0) <= now }
            var affected = Set<ObjectIdentifier>()
            var changes: [Int: EpisodeChangeFragments.Change] = [:]
            for (id, etag) in current where st.told[id] != etag {
                st.told[id] = etag
                changes[id] = st.toldVersion[id].map { .from($0) } ?? .unknown
                affected.formUnion(st.watchers[id] ?? [])
            }
            // Streams with more of a backlog to send, whose last page has left.
            for key in st.morePages where st.subscribers[key]?.stream.isIdle == true { affected.insert(key) }
            for (id, at) in st.nextRead where at <= now && current[id] != nil { due.append((id, at)) }
            // The longest waiting first, within the ceiling.
            due.sort { $0.at < $1.at }
            var read = Array(Set(due.prefix(budget).map(\.id)))
            // Then the libraries' feeds, within what is left.
            let libraryDue = libraryHeld.filter { (st.nextRead[$0] ?? .infinity) <= now }.sorted { st.nextRead[$0] ?? 0 < st.nextRead[$1] ?? 0 }
            read += libraryDue.prefix(max(0, budget - read.count))
            st.refreshTokens -= Double(read.count)
            // Not read again before its next time is set (below, outside the lock).
            for id in read { st.nextRead[id] = .infinity }
            // Feeds without a time yet: a hundred a turn (each time is read from the feed's data).
            let unscheduled = (Array(current.keys) + libraryHeld).filter { st.nextRead[$0] == nil }.prefix(100)
            return (affected.compactMap { st.subscribers[$0] }, changes, read, Array(unscheduled))
        }
        // Each feed's next time from its own data, worked out outside the lock.
        let times = Set(read + unscheduled).map { id in (id, now + interval(id, now: now)) }
        state.withLock { st in
            for (id, at) in times where st.watchers[id] != nil || st.library[id] != nil { st.nextRead[id] = at }
        }
        for id in read {
            counters.refreshes.add(1, ordering: .relaxed)
            refresh(id, .cadence)
        }
        let memo = EventMemo()
        let podcast: @Sendable (Int) -> EpisodeBatch.Status = { [self] id in memo.status(id) { status(of: id) } }
        memo.fragments = EpisodeChangeFragments(changes: changes, status: podcast)
        for s in changed { deliver(s, memo: memo) }
        // What the streams were told of each changed podcast: the version the next change starts from.
        if !changes.isEmpty {
            let versions = changes.keys.compactMap { id -> (Int, EpisodeChangeLog.Version)? in
                guard case .ok(let data) = podcast(id) else { return nil }
                return (id, data.changes.current)
            }
            state.withLock { st in
                for (id, version) in versions where st.watchers[id] != nil { st.toldVersion[id] = version }
            }
        }
        if heartbeat {
            let all = state.withLock { Array($0.subscribers.values) }
            for s in all where !s.stream.send(ServerSentEvent.heartbeat) { remove(s) }
        }
        return true
    }

    /// The watched feeds whose turn to be read again (the shared tier came back empty) has come.
    private func catchUpAfterAnEmptiedTier(now: Double) {
        let due = state.withLock { st -> [Int] in
            guard !st.catchUp.isEmpty else { return [] }
            let due = st.catchUp.filter { $0.value <= now }.map(\.key)
            for id in due { st.catchUp[id] = nil }
            return due.filter { st.watchers[$0] != nil }
        }
        for id in due {
            counters.refreshes.add(1, ordering: .relaxed)
            refresh(id, .sharedTierEmptied)
        }
    }

    /// The pings deferred until their feed's interval passed, read now as pings.
    private func hearDeferredPings(now: Double) {
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

    package func interval(_ id: Int, now: Double) -> Double {
        guard case .fresh(let entry) = cache.lookup(EpisodesAdapter.dataKey(id)), let data = EpisodeFeedData(entry.body) else {
            return limits.refreshBounds.lowerBound
        }
        let own = EpisodeCadence.refreshInterval(data, now: Double(Timestamp.now()), within: limits.refreshBounds)
        // A hub tells of its changes: polling is only the safety net, at the longest interval.
        return websub?.holds(id, now: now) == true ? max(own, limits.refreshBounds.upperBound) : own
    }
}

/// Events made in one turn of the ticker, by what they are made of.
package final class EventMemo: Sendable {
    struct Event: Sendable {
        let bytes: [UInt8]
        let token: SyncToken?
        let more: Bool
    }

    /// What a turn made for one position.
    enum Made: Sendable {
        /// Nothing new for it.
        case nothing
        case event(Event)
    }

    private let made = Locked<(events: [String: Made], bytes: Int)>(([:], 0))
    /// Each podcast of the turn read from its data once (a thousand streams following one
    /// podcast do not each parse its data).
    private let statuses = Locked<[Int: EpisodeBatch.Status]>([:])
    /// This turn's changes, a fragment each (set once, before any stream is told).
    private let changeFragments = Locked<EpisodeChangeFragments?>(nil)
    var fragments: EpisodeChangeFragments? {
        get { changeFragments.withLock { $0 } }
        set { changeFragments.withLock { $0 = newValue } }
    }

    /// Kept for the turn at most: past these, events are made for each stream (as without a memo).
    static let maxEvents = 10_000, maxBytes = 32 << 20

    /// What was made for `key` this turn; nil when nothing was yet.
    func made(_ key: String) -> Made? { made.withLock { $0.events[key] } }
    func keep(_ result: Made, as key: String) {
        var size = key.utf8.count
        if case .event(let event) = result { size += event.bytes.count }
        made.withLock { m in
            guard m.events.count < Self.maxEvents, m.bytes + size <= Self.maxBytes else { return }
            m.events[key] = result
            m.bytes += size
        }
    }

    /// Podcast `id`'s status this turn, read by `read` the first time.
    func status(_ id: Int, _ read: () -> EpisodeBatch.Status) -> EpisodeBatch.Status {
        if let known = statuses.withLock({ $0[id] }) { return known }
        let status = read()
        statuses.withLock { $0[id] = status }
        return status
    }
}

/// What `/metrics` counts of the event streams.
package final class EventCounters: Sendable {
    let events = Atomic<Int>(0)
    let refreshes = Atomic<Int>(0)
    let pings = Atomic<Int>(0)
    let composed = Atomic<Int>(0)
    let tierEmptied = Atomic<Int>(0)

    package var sharedTierEmptied: Int { tierEmptied.load(ordering: .relaxed) }

    package var eventsComposed: Int { composed.load(ordering: .relaxed) }
    package var eventsSent: Int { events.load(ordering: .relaxed) }
    package var refreshesStarted: Int { refreshes.load(ordering: .relaxed) }
    package var pingsHeard: Int { pings.load(ordering: .relaxed) }
}
