import Glibc
import Synchronization
import Primitives

/// The HTTP/1.1 server: N event loops, each with its own SO_REUSEPORT listener,
/// so the kernel spreads connections and no lock sits on the accept path.
public final class Server: Sendable {
    private let context: ServerContext
    private let loops: Locked<[EventLoop]> = Locked([])
    private let finished = Locked<Int>(0)
    private let boundPort = Atomic<Int>(0)
    private let placed = Locked<CPUPlacement?>(nil)

    /// A server answering through `responder` (the application's, see `Responder`).
    public init(
        configuration: ServerConfiguration, responder: any Responder, statistics: ServerStatistics = ServerStatistics(),
        shutdown: ShutdownPhase = ShutdownPhase()
    ) {
        context = ServerContext(configuration: configuration, responder: responder, statistics: statistics, shutdown: shutdown)
    }

    /// A server answering through `router` as it is (`RouterResponder`: its code unspecialised).
    public convenience init<Context: RootRequestContext>(
        configuration: ServerConfiguration, router: Router<Context>, statistics: ServerStatistics = ServerStatistics(),
        shutdown: ShutdownPhase = ShutdownPhase()
    ) {
        self.init(configuration: configuration, responder: RouterResponder(router), statistics: statistics, shutdown: shutdown)
    }

    /// Connection counts, as handed in (or made) at init.
    public var statistics: ServerStatistics { context.statistics }

    /// The port actually bound (useful with port 0).
    public var port: Int { boundPort.load(ordering: .relaxed) }
    public var openConnections: Int { context.statistics.open }
    public var isDraining: Bool { context.isDraining }
    /// The CPU each loop is pinned to, when connections are steered by CPU (nil: kernel hash).
    public var placement: CPUPlacement? { placed.withLock { $0 } }
    /// Idle connections that moved to the loop of the CPU their packets arrive on.
    public var connectionsMoved: Int { context.statistics.moved }
    /// Connections each loop owns now.
    public var connectionsPerLoop: [Int] { context.statistics.perLoop }

    /// Binds the listeners and starts the event-loop threads.
    public func start() throws(ServerError) {
        Self.raiseFileLimit()
        let cfg = context.configuration
        let count = cfg.resolvedThreads
        var port = cfg.port
        // Each loop's listener shares the port (SO_REUSEPORT), and so would a second server
        // started on it by mistake, silently taking part of the connections: refuse instead.
        if port != 0 { try Self.ensurePortIsFree(host: cfg.host, port: port) }
        var created: [EventLoop] = []
        for i in 0..<count {
            let fd = try Self.listen(host: cfg.host, port: port)
            if port == 0 { port = Self.localPort(fd) }
            created.append(try EventLoop(index: i, listenFD: fd, context: context))
        }
        boundPort.store(port, ordering: .relaxed)
        for loop in created { loop.siblings = created }
        var placement = cfg.cpuAffinity ? CPUPlacement.plan(loops: count, allowedCPUs: CPUPlacement.allowedCPUs()) : nil
        // One program serves the whole reuseport group; without it, no pinning either.
        if let plan = placement, !plan.steer(listener: created[0].listenFD) { placement = nil }
        placed.withLock { $0 = placement }
        let table = placement?.loopByCPU ?? []
        for loop in created {
            loop.loopByCPU = table
            loop.workerCPUs = placement?.cpus.map(Int32.init) ?? []
        }
        loops.withLock { $0 = created }
        context.statistics.attach(created)
        for (i, loop) in created.enumerated() {
            let cpu = placement?.cpus[i]
            let started = NativeThread.start(name: "http-loop-\(i)", stackSize: 1 << 20) { [self] in
                if let cpu {
                    NativeThread.pinCurrent(toCPU: cpu)
                    // A pinned loop shares its CPU with whatever else runs there (on loopback, the
                    // clients themselves): woken by each packet it would preempt that thread to
                    // answer one request and sleep again. Batched, it answers what gathered
                    // meanwhile: a fifth of the context switches per request (docs/benchmarks.md).
                    NativeThread.batchScheduling()
                }
                loop.run()
                finished.withLock { $0 += 1 }
            }
            if !started { throw .system("pthread_create", EAGAIN) }
        }
    }

    /// Stops accepting, finishes in-flight requests (up to the drain timeout),
    /// closes idle connections, and returns once every loop has exited.
    public func shutdown() {
        context.shutdown.beginDraining()
        let all = loops.withLock { $0 }
        for loop in all { loop.wake() }
        while finished.withLock({ $0 }) < all.count {
            usleep(5_000)
            for loop in all { loop.wake() }
        }
    }

    /// Binds a socket without SO_REUSEPORT to the address and closes it: that fails only
    /// when something is bound there already (SO_REUSEADDR set, so TIME_WAIT leftovers of a
    /// previous run do not count).
    private static func ensurePortIsFree(host: String, port: Int) throws(ServerError) {
        let probe = try bound(host: host, port: port, reusePort: false)
        close(probe)
    }

    private static func listen(host: String, port: Int) throws(ServerError) -> Int32 {
        let fd = try bound(host: host, port: port, reusePort: true)
        guard Glibc.listen(fd, 4096) == 0 else {
            let e = errno
            close(fd)
            throw .system("listen", e)
        }
        return fd
    }

    private static func bound(host: String, port: Int, reusePort: Bool) throws(ServerError) -> Int32 {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else { throw .invalidAddress(host) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if reusePort { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            if e == EADDRINUSE { throw .addressInUse(host: host, port: port) }
            throw .system("bind \(host):\(port)", e)
        }
        return fd
    }

    private static func localPort(_ fd: Int32) -> Int {
        var addr = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Idle keep-alive connections are file descriptors: lift the soft limit to the hard one.
    private static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
}
