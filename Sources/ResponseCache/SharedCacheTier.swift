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
    /// Takes the key's fetch lock for `ttl` seconds (it expires by itself if its holder dies).
    func lock(_ key: String, ttl: Double) async -> SharedLock
    func unlock(_ key: String, token: String) async
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
    /// Longest wait for another replica's fetch before fetching here (the upstream budget).
    public var waitLimit: Double
    /// Entries larger than this (body plus gzip) stay in this process only.
    public var maxValueBytes: Int
    /// First poll interval while waiting; doubles up to `maxPollInterval`.
    public var pollInterval = 0.01
    public var maxPollInterval = 0.05

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
}

extension SharedTierEvent {
    /// snake_case, as metric labels are written.
    public var metricName: String {
        switch self {
        case .waitTimedOut: return "wait_timed_out"
        case .skippedTooLarge: return "skipped_too_large"
        case .staleServed: return "stale_served"
        default: return rawValue
        }
    }
}

extension SharedCacheTier {
    /// An entry whose fetch took no measurable time (tests, warm-up).
    @discardableResult
    public func put(_ key: String, _ entry: CachedResponse, age: Double) async -> Bool { await put(key, entry, age: age, fetchSeconds: 0) }
}
