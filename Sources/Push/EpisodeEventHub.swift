import EpisodeSync
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
        /// The client's position (the last event's id), and whether its first event went:
        /// until it has, the ticker sends it nothing (the first event says where it starts).
        /// Guarded by its stripe of `positionLocks` (`withPosition`), not a mutex of its own.
        private nonisolated(unsafe) var position: (token: SyncToken?, started: Bool)
        /// Its slot in the hub (`SubscriberSlots`), read and written under the hub's lock.
        let slot = Atomic<UInt32>(noSlot)
        static let noSlot = UInt32.max

        package init(stream: ResponseStream, ids: [Int], limit: Int, client: ClientKey?, token: SyncToken?) {
            self.stream = stream
            // Exactly as long as it is (a parsed list keeps its growth's slack): held as long as the stream.
            self.ids = ids.withUnsafeBufferPointer { Array($0) }
            self.limit = limit
            self.client = client
            position = (token, false)
        }

        /// Streams' positions, guarded by stripe: 10,000 streams hold no mutex each.
        static let positionLocks = LockStripes()

        /// Runs `body` on the position, serially per stream (events leave in the order their ids advance).
        func withPosition<R>(_ body: (inout (token: SyncToken?, started: Bool)) -> R) -> R {
            Self.positionLocks.withLock(for: self) { body(&position) }
        }
    }

    package struct Limits: Sendable {
        package var streams = 10_000
        package var streamsPerClient = 256
        /// The HTML standard's advice for Server-Sent Events ("a comment line every 15 seconds
        /// or so"), below the read timeouts proxies keep by default (nginx 60 s, many balancers
        /// 30 s). Each costs a write a stream: at 10,000 streams, most of an idle replica's CPU.
        package var heartbeat = 15.0
        package var refreshBounds: ClosedRange<Double> = 120...1800
        package var refreshesPerMinute = 600.0
        /// A feed's pings are heard at most this often.
        package var pingInterval = 10.0
        /// How long a library refresh keeps its feeds warm (two refreshes of an app that refreshes hourly).
        package var libraryWarmth = 7200.0
        package var maxLibraryFeeds = 50_000

        package init(
            streams: Int = 10_000, streamsPerClient: Int = 256, heartbeat: Double = 15.0, refreshBounds: ClosedRange<Double> = 120...1800,
            refreshesPerMinute: Double = 600.0
        ) {
            self.streams = streams
            self.streamsPerClient = streamsPerClient
            self.heartbeat = heartbeat
            self.refreshBounds = refreshBounds
            self.refreshesPerMinute = refreshesPerMinute
        }
    }

    struct State {
        var subscribers = SubscriberSlots()
        /// Streams admitted whose subscription is not added yet (their places).
        var starting = 0
        /// Each watched podcast's streams, by slot.
        var watchers: [Int: Set<UInt32>] = [:]
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
        var morePages = Set<UInt32>()
        var turn = 0
        /// The cache's generation at the last look at the watched podcasts (nil: look again,
        /// a stream came).
        var lookedAt: UInt64?
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
    let state = Locked(State())
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
    let reader = Locked<(@Sendable (Int, FeedRead) async -> Void)?>(nil)
    /// With a shared tier: accepted pings kept there until a replica has read their feed.
    let pingQueue: (any SharedPingQueue)?
    let readingQueue = Atomic<Bool>(false)
    /// Queued pings this replica waits to read (deferred until their time).
    let deferredEntries = Locked(Set<String>())
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
        if changes != nil { startHearingOtherReplicas() }
    }

    /// Starts a background read of podcast `id`'s feed.
    func refresh(_ id: Int, _ reason: FeedRead) {
        refresher.withLock { $0 }?(id, reason)
    }

    package var streamCount: Int { state.withLock { $0.subscribers.count } }
    package var watchedCount: Int { state.withLock { $0.watchers.count } }

    /// Whether a stream here watches podcast `id`.
    package func watches(_ id: Int) -> Bool { state.withLock { $0.watchers[id] != nil } }
}
