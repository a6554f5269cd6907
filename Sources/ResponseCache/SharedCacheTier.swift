import Primitives

/// A cache shared by every replica (L2), behind this small protocol so the cache does
/// not know what implements it (Redis in production, nothing by default). Every call
/// may fail; a failure only ever means "behave as if there were no shared tier".
/// Ages, not timestamps, cross this boundary: the tier keeps time on its own clock,
/// so replicas with skewed clocks agree on how old an entry is.
public protocol SharedCacheTier: Sendable {
    /// The entry and its age in seconds on the tier's clock.
    func get(_ key: String) async -> SharedLookup
    /// Stores unless the tier holds an entry whose fetch started later (newer wins, by
    /// fetch start: `age` as of now plus `fetchSeconds`, the time the fetch took), or a good
    /// entry that `entry`, a negative answer, would replace. True when this entry was stored.
    @discardableResult
    func put(_ key: String, _ entry: CachedResponse, age: Double, fetchSeconds: Double) async -> Bool
    /// `put`, when what the tier would keep of `entry` fits `maxBytes` (a tier may keep a
    /// large body compressed: a long feed's data shrinks several times).
    func put(_ key: String, _ entry: CachedResponse, age: Double, fetchSeconds: Double, maxBytes: Int) async -> SharedPut
    /// Takes the key's fetch lock for `ttl` seconds (it expires by itself if its holder dies).
    func lock(_ key: String, ttl: Double) async -> SharedLock
    func unlock(_ key: String, token: String) async
    /// Extends each of the caller's own locks to `ttl` seconds from now, in one round trip:
    /// which were still held; nil: no answer.
    func renew(_ locks: [(key: String, token: String)], ttl: Double) async -> [Bool]?
    /// What a waiter needs to know, without the body: is there a fresh entry, or did the
    /// lock holder's fetch just fail (and how)?
    func probe(_ key: String) async -> SharedProbe
    /// Tells waiters, for `ttl` seconds, that the fetch of `key` failed with `error` (they
    /// answer it instead of taking the lock and fetching in turn: no convoy).
    func markFailed(_ key: String, _ error: SharedFailure, ttl: Double) async
    /// Where each key's fetch stands, for replicas waiting on them, in one round trip: what
    /// `SharedWaitRoom` asks for every key it waits on at once. nil: the tier did not answer.
    func watch(_ keys: [String]) async -> [SharedWatch]?
    /// Whether the tier can be reached, and answers (a slow answer is not a missing tier:
    /// waiters keep waiting for another replica's fetch instead of fetching too).
    var health: SharedTierHealth { get }
}

/// Whether a call to the tier may wait out a busy tier, told to it by a task-local. A request
/// waiting on the answer keeps the tier's own short deadline (REDIS_TIMEOUT_MS) and works
/// around a slow tier; work that can wait (a background refresh, a library batch's loads,
/// which the batch answers without at its deadline, lock renewals, publishing an answer,
/// watching other replicas' fetches) waits for the tier rather than fetching what another
/// replica may be fetching.
public enum SharedTierCall {
    @TaskLocal public static var isPatient = false

    /// Runs `work` as work that may wait out a busy tier.
    public static func patiently<R: Sendable>(_ work: @Sendable () async -> R) async -> R {
        await $isPatient.withValue(true) { await work() }
    }
}

public enum SharedTierHealth: Sendable, Equatable {
    /// Connected, and answered since its last missed deadline (late answers included).
    case answering
    /// Connected, but nothing answered since a command's deadline passed: a stopped server, or
    /// one busy enough to answer later still (`SharedTierPolicy.lateAnswerWait` tells them apart).
    case silent
    /// Not connected.
    case down
}

/// Where another replica's fetch of a key stands.
public enum SharedWatch: Sendable, Equatable {
    /// Its answer (or a negative one) is there, fresh.
    case fresh
    /// It failed (the holder's marker).
    case failed(SharedFailure)
    /// Still fetching: its lock is held.
    case locked
    /// Nobody holds the lock and nothing fresh is there: a waiter takes over.
    case free
}

/// What became of an entry offered to the tier.
public enum SharedPut: Sendable, Equatable {
    case stored
    /// The tier holds a newer entry (or a good one this negative answer must not replace).
    case notStored
    /// Larger than the tier takes: waiters fetch their own.
    case tooLarge
}

/// A failed fetch as waiters are told of it.
public enum SharedFailure: Sendable, Equatable {
    /// The upstream failed: waiters answer this error (or their stale copy).
    case error(ClientError)
    /// The answer was fetched but is too large for the tier: waiters fetch their own, at once.
    case tooLarge
}

public enum SharedProbe: Sendable, Equatable {
    case fresh
    case failed(SharedFailure)
    /// Absent or stale: keep waiting (or take the lock).
    case notYet
    case unavailable
}

public enum SharedLookup: Sendable {
    case found(CachedResponse, age: Double)
    case absent
    case unavailable
}

public enum SharedLock: Sendable, Equatable {
    case acquired(token: String)
    case heldElsewhere
    case unavailable
}

/// How the cache uses a shared tier.
public struct SharedTierPolicy: Sendable {
    /// Longest wait for another replica's fetch while its lock is alive, before fetching here
    /// anyway: a bound for a holder that never finishes (its fetch has a budget of its own).
    public var waitLimit: Double
    /// Entries larger than this (body plus gzip) stay in this process only.
    public var maxValueBytes: Int
    /// First poll interval while waiting; doubles up to `maxPollInterval`.
    public var pollInterval = 0.01
    public var maxPollInterval = 0.05
    /// A fetch lock lives this long unless its holder renews it (every third of it, while
    /// fetching): a holder that died frees the key within this, not within the whole budget.
    public var lockTTL = 1.5
    /// How long waiters are told a fetch failed, so they answer it instead of refetching in turn.
    public var failureTTL = 2.0
    /// How often the keys a replica waits on are asked about (all of them in one round trip).
    public var watchInterval = 0.02
    /// How long a request's flight whose lock (or lookup) was not answered in time waits for the
    /// tier to answer anything: a busy Redis answers late, and the lock is asked again patiently;
    /// a stopped one stays silent, and the flight fetches without it. The service sets one
    /// command deadline (`REDIS_TIMEOUT_MS`): a stopped Redis costs a miss at most three
    /// (make scaleout-test [4]).
    public var lateAnswerWait = 0.025
    /// Keys whose new entries (fetched here, stored in the tier, another ETag than before) are
    /// announced on the change feed, whatever fetched them: a request's load, a refresh, a ping.
    public var announcedKeyPrefix: String?

    public init(waitLimit: Double, maxValueBytes: Int) {
        self.waitLimit = waitLimit
        self.maxValueBytes = maxValueBytes
    }
}

/// Where a loaded entry came from, for `X-Cache`, metrics and the access log.
public enum LoadOrigin: String, Sendable {
    /// Fetched from the upstream by this replica.
    case upstream
    /// Found fresh in the shared tier.
    case sharedHit
    /// Waited for another replica's fetch.
    case sharedWait
    /// Another replica is refreshing: this replica's (or the tier's) stale copy meanwhile.
    case staleWhileOtherRefreshes
}

/// Counts what the shared tier did for the cache (metrics).
public typealias SharedTierObserver = @Sendable (_ event: SharedTierEvent) -> Void
public enum SharedTierEvent: String, Sendable {
    case hit, miss, wait, waitTimedOut, skippedTooLarge, stored, staleServed
    /// Fetched here without the key's lock, because the tier could not be reached (or did not
    /// answer in time, repeatedly): a fetch another replica may be making too.
    case fetchedUnlocked
}

extension SharedTierEvent {
    /// snake_case, as metric labels are written.
    public var metricName: String {
        switch self {
        case .waitTimedOut: return "wait_timed_out"
        case .skippedTooLarge: return "skipped_too_large"
        case .staleServed: return "stale_served"
        case .fetchedUnlocked: return "fetched_unlocked"
        default: return rawValue
        }
    }
}

extension SharedCacheTier {
    /// Kept as it is: body and compressed body count in full.
    public func put(_ key: String, _ entry: CachedResponse, age: Double, fetchSeconds: Double, maxBytes: Int) async -> SharedPut {
        guard entry.body.count + (entry.gzippedBody?.count ?? 0) <= maxBytes else { return .tooLarge }
        return await put(key, entry, age: age, fetchSeconds: fetchSeconds) ? .stored : .notStored
    }

    /// An entry whose fetch took no measurable time (tests, warm-up).
    @discardableResult
    public func put(_ key: String, _ entry: CachedResponse, age: Double) async -> Bool { await put(key, entry, age: age, fetchSeconds: 0) }
}
