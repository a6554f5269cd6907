import Locking

/// Everything an operator can tune about the HTTP server.
public struct ServerConfiguration: Sendable {
    public var host = "0.0.0.0"
    public var port = 8080
    /// Event-loop threads; 0 means one per core.
    public var threads = 0
    /// With one loop per allowed CPU: pin each loop to its CPU and accept a connection on
    /// the loop of the CPU its SYN arrived on (see `CPUPlacement`).
    public var cpuAffinity = true
    public var headerTimeout: Double = 10
    public var idleTimeout: Double = 60
    public var writeTimeout: Double = 30
    public var drainTimeout: Double = 10
    public var maxConnections = 16_384
    public var limits = ParseLimits()
    /// `Access-Control-Allow-Origin` value; nil sends none.
    public var corsOrigin: String? = "*"
    public var serverName = "FeedProxy"
    /// Unsent response bytes after which a connection stops reading requests.
    public var maxPendingOutputBytes = 1 << 20

    public init() {}

    /// `threads`, with 0 resolved to the number of online cores.
    public var resolvedThreads: Int { threads > 0 ? threads : NativeThread.processorCount }
}

/// One finished request, for access logs and metrics.
public struct RequestRecord: Sendable {
    public let method: String
    public let target: String
    /// The matched route pattern (`/podcasts/:id/episodes`), or a fixed label for unmatched ones.
    public let route: String
    public let status: Int
    public let bodyBytes: Int
    public let durationSeconds: Double
    public let requestID: String
    public let logFields: [(String, String)]
    /// Which event loop (0..<threads) served it, so observers can keep per-loop state.
    public let loop: Int
    /// The connection's peer (nil when unknown); the access log formats it.
    public var peer: IPAddress? = nil
    /// The request's header fields (shared, not copied), for observers that need one.
    public var requestHeaders = HTTPHeaders()
    /// The request's trace (all zero for a request that could not be parsed).
    public var trace = TraceContext(traceHigh: 0, traceLow: 0, spanID: 0)
}

/// Receives events from the server; called on event-loop threads, so keep it cheap.
public protocol ServerObserver: Sendable {
    func requestCompleted(_ record: RequestRecord)
}

/// An observer that ignores everything.
public struct NoObserver: ServerObserver {
    public init() {}
    public func requestCompleted(_ record: RequestRecord) {}
}
