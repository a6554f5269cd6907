import FoundationEssentials

/// Settings for the whole client and per upstream.
public struct UpstreamConfiguration: Sendable {
    public var connectTimeoutMs = 2000
    public var timeoutMs = 8000
    public var maxBodyBytes = 8 << 20
    public var userAgent = "FeedProxy/1.0"
    /// `UPSTREAM_PROXY`: all upstream traffic through this proxy (nil: direct, environment ignored).
    public var proxy: String?
    /// Requests to one host (name and port) at a time; the rest wait in a fair turn.
    public var maxHostConnections = 8
    public var breakerThreshold = 5
    public var breakerCooldownSeconds = 30.0
    /// Requests per minute allowed per upstream name (absent: unlimited).
    public var ratePerMinute: [String: Double] = [:]
    /// Total timeout per upstream name, overriding `timeoutMs`.
    public var timeoutMsByUpstream: [String: Int] = [:]
    /// One budget for all replicas; when it cannot be reached each replica uses a local
    /// bucket at `ratePerMinute / fallbackReplicas`, so a fallback never multiplies the budget.
    public var sharedBudget: (any SharedRateBudget)?
    public var fallbackReplicas = 1
    public var rateObserver: RateDecisionObserver?
    /// Longest a request waits in its upstream's fair queue for a token (0: never waits).
    /// Never past the request's own time budget.
    public var queueWaitMs = 3000
    /// Requests one client may have waiting per upstream.
    public var queuePerClient = 4
    /// Token sources by upstream name, used instead of local buckets from `ratePerMinute` (tests).
    public var tokenSources: [String: any TokenSource] = [:]

    public init() {}
}
