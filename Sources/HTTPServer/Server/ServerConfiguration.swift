import Primitives

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
    /// Seconds from the end of a head to the end of its body.
    public var bodyTimeout: Double = 10
    public var idleTimeout: Double = 60
    public var writeTimeout: Double = 30
    public var drainTimeout: Double = 10
    public var maxConnections = 16_384
    public var limits = ParseLimits()
    public var serverName = "FeedProxy"
    /// Unsent response bytes after which a connection stops reading requests.
    public var maxPendingOutputBytes = 1 << 20
    /// A long-lived answer's bytes not yet taken by its client, past which it is closed.
    public var maxStreamBufferedBytes = 256 << 10

    public init() {}

    /// `threads`, with 0 resolved to the number of online cores.
    public var resolvedThreads: Int { threads > 0 ? threads : NativeThread.processorCount }
}
