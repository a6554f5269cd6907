import Primitives
import Synchronization

/// What the server reports about its connections. Made before the server (the routes
/// that report it are built first) and handed to it, so nothing reaches back into the
/// server; readable from any thread.
public final class ServerStatistics: Sendable {
    let openConnections = Atomic<Int>(0)
    let runningHandlers = Atomic<Int>(0)
    private let loops = Locked<[EventLoop]>([])

    public init() {}

    /// Client connections open now.
    public var open: Int { openConnections.load(ordering: .relaxed) }
    /// Requests whose handler runs now (answers not given on the loop: misses, batches).
    public var inFlight: Int { runningHandlers.load(ordering: .relaxed) }
    /// Connections each event loop owns now.
    public var perLoop: [Int] { loops.withLock { $0.map { $0.load.load(ordering: .relaxed) } } }
    /// Idle connections that moved to the loop of the CPU their packets arrive on.
    public var moved: Int { loops.withLock { $0.reduce(0) { $0 + $1.adopted.load(ordering: .relaxed) } } }

    func attach(_ started: [EventLoop]) { loops.withLock { $0 = started } }
}
