import CSystem
import Glibc
import Primitives
import Synchronization

/// One epoll loop on its own thread, with its own SO_REUSEPORT listener.
/// Connections live and die on this thread; other threads only reach it through
/// `complete(...)` and `wake()`, which go through a mutex and an eventfd.
final class EventLoop: @unchecked Sendable {
    struct Completion: Sendable {
        let fd: Int32
        let connectionID: UInt64
        /// The response, the request it answers, and who is told how the writing ended.
        let answer: DeferredAnswer
    }

    /// A connection another loop hands over: just accepted (to keep the loops balanced),
    /// or idle between requests and following its packets to this loop's CPU.
    enum Adoption: @unchecked Sendable {
        case accepted(fd: Int32, peer: IPAddress?)
        // Touched by one thread at a time: the sender lets go before the inbox lock passes it on.
        case moved(Connection)

        var fd: Int32 {
            switch self {
            case .accepted(let fd, _): fd
            case .moved(let conn): conn.fd
            }
        }
    }

    struct Inbox: Sendable {
        var completions: [Completion] = []
        var adoptions: [Adoption] = []
        /// Streams with bytes to send or ending.
        var streams: [ResponseStream] = []
        /// Set when the loop has exited: a late hand-over is closed by its sender.
        var closed = false
        /// The loop was woken for what is here and has not drained it yet: whoever adds more
        /// needs no wake-up of its own (ten thousand streams' events are one eventfd write).
        var signalled = false

        /// Marks the inbox signalled; true when the caller must wake the loop.
        mutating func signal() -> Bool {
            defer { signalled = true }
            return !signalled
        }
    }

    let epfd: Int32
    /// Connections are registered edge-triggered (`readAndProcess` reads until a short read):
    /// a connection answered in full is not polled again at the next wait.
    static let edgeTriggered = UInt32(EPOLLET.rawValue)
    /// Reads one readiness event may take (256 KiB) before the loop turns to its other
    /// connections: a client that keeps its socket full cannot hold the loop.
    static let readsPerEvent = 4
    let wakeFD: Int32
    var listenFD: Int32
    let context: ServerContext
    let inbox = Locked(Inbox())
    /// Connections this loop owns (read by the other loops when they balance).
    let load = Atomic<Int>(0)
    /// Every loop of the server, this one included; set before the threads start.
    nonisolated(unsafe) var siblings: [EventLoop] = []
    /// Which loop serves connections arriving on each CPU (`CPUPlacement.loopByCPU`; empty:
    /// no steering); set before the threads start.
    nonisolated(unsafe) var loopByCPU: [Int] = []
    /// All the CPUs of the placement (empty without one): the affinity handed back to pool
    /// threads that inherited a loop's single CPU.
    nonisolated(unsafe) var workerCPUs: [Int32] = []
    /// Connections that followed their packets here from another loop.
    let adopted = Atomic<Int>(0)
    // Thread-confined state below.
    var connections = ConnectionTable()
    var nextConnectionID: UInt64 = 0
    var dateCache = HTTPDateCache()
    /// Trace and span ids for this loop's requests (no lock: one loop, one thread).
    var traceIDs = TraceIDs()
    var readBuffer: UnsafeMutableBufferPointer<UInt8>
    var acceptPausedUntil: Double = 0
    /// The monotonic time this wake-up began, read once after `epoll_wait` (as nginx caches
    /// its time per event-loop iteration): deadlines and a request's start are taken from it,
    /// not from a clock read each.
    var wakeTime: Double = 0
    private var draining = false
    private var drainDeadline: Double = 0
    let writer: ResponseWriter
    /// Position among the server's loops (reported in `RequestRecord.loop`).
    let index: Int

    init(index: Int, listenFD: Int32, context: ServerContext) throws(ServerError) {
        self.index = index
        epfd = csys_epoll_create()
        wakeFD = csys_eventfd()
        guard epfd >= 0, wakeFD >= 0 else { throw .system("epoll/eventfd", errno) }
        self.listenFD = listenFD
        self.context = context
        readBuffer = .allocate(capacity: 64 * 1024)
        writer = ResponseWriter(serverName: context.configuration.serverName)
        _ = csys_epoll_add(epfd, wakeFD, UInt32(EPOLLIN.rawValue))
        _ = csys_epoll_add(epfd, listenFD, UInt32(EPOLLIN.rawValue))
    }

    deinit {
        readBuffer.deallocate()
        close(epfd)
        close(wakeFD)
    }

    // MARK: cross-thread entry points

    /// Hands a deferred handler's response back to the loop that owns the connection.
    func complete(fd: Int32, connectionID: UInt64, answer: DeferredAnswer) {
        let wakes = inbox.withLock { box -> Bool in
            box.completions.append(Completion(fd: fd, connectionID: connectionID, answer: answer))
            return box.signal()
        }
        if wakes { wake() }
    }

    func wake() { _ = csys_eventfd_signal(wakeFD) }

    /// A stream of this loop's has bytes to send, or ends.
    func streamReady(_ stream: ResponseStream) {
        let (accepted, wakes) = inbox.withLock { box -> (Bool, Bool) in
            guard !box.closed else { return (false, false) }
            box.streams.append(stream)
            return (true, box.signal())
        }
        if wakes { wake() }
        if !accepted { stream.closed() }
    }

    // MARK: the loop

    func run() {
        var events = [csys_event](repeating: csys_event(), count: 256)
        var lastSweep = NativeThread.monotonicSeconds()
        while true {
            let n = events.withUnsafeMutableBufferPointer { csys_epoll_wait(epfd, $0.baseAddress, Int32($0.count), 250) }
            if n < 0 && errno != EINTR { break }
            wakeTime = NativeThread.monotonicSeconds()
            for i in 0..<max(Int(n), 0) {
                let ev = events[i]
                if ev.fd == wakeFD {
                    _ = csys_eventfd_drain(wakeFD)
                    drainInbox()
                } else if ev.fd == listenFD {
                    acceptConnections()
                } else if let conn = connections[ev.fd] {
                    handle(conn, events: ev.events)
                }
            }
            let now = NativeThread.monotonicSeconds()
            if now - lastSweep >= 0.25 {
                lastSweep = now
                sweep(now: now)
            }
            if context.isDraining && !draining { beginDrain(now: now) }
            if draining && (connections.isEmpty || now >= drainDeadline) { break }
        }
        for conn in connections.values { closeConnection(conn) }
        if listenFD >= 0 { close(listenFD) }
        let late = inbox.withLock { box -> [Adoption] in
            box.closed = true
            return box.adoptions
        }
        for item in late { discard(item.fd) }
        siblings = []  // the loops reference each other; let them go
    }

    private func beginDrain(now: Double) {
        draining = true
        drainDeadline = now + context.configuration.drainTimeout
        if listenFD >= 0 {
            _ = csys_epoll_del(epfd, listenFD)
            close(listenFD)
            listenFD = -1
        }
        for conn in connections.values where conn.isIdle { closeConnection(conn) }
        // Streams end (their clients reconnect, to another replica): they would hold the drain.
        for conn in connections.values where conn.streaming { endStream(conn) }
    }

    private func drainInbox() {
        let (items, adoptions, streams) = inbox.withLock { box -> ([Completion], [Adoption], [ResponseStream]) in
            let taken = (box.completions, box.adoptions, box.streams)
            box.completions.removeAll()
            box.adoptions.removeAll()
            box.streams.removeAll()
            // Taken whole: the next arrival wakes the loop again.
            box.signalled = false
            return taken
        }
        for stream in streams { sendStreamed(stream) }
        for adoption in adoptions {
            switch adoption {
            case _ where draining:
                discard(adoption.fd)
            case .moved(let conn):
                adopted.add(1, ordering: .relaxed)
                connections[conn.fd] = conn
                updateInterest(conn, adding: true)
            case .accepted(let fd, let peer):
                register(fd, peer: peer, now: NativeThread.monotonicSeconds())
            }
        }
        for item in items {
            guard let conn = connections[item.fd], conn.id == item.connectionID, conn.awaiting, let awaited = conn.handling else { continue }
            conn.phase = .head
            conn.handling = nil
            conn.handler = nil
            item.answer.ended(write(item.answer.response, for: item.answer.core, keepAlive: awaited.keepAlive, on: conn))
            resumePending(conn)
            flush(conn)
        }
    }

    // MARK: accepting

    private func acceptConnections() {
        let now = NativeThread.monotonicSeconds()
        guard now >= acceptPausedUntil else { return }
        for _ in 0..<64 {
            var peerHigh: UInt64 = 0
            var peerLow: UInt64 = 0
            let fd = csys_accept_peer(listenFD, &peerHigh, &peerLow)
            if fd < 0 {
                if errno == EMFILE || errno == ENFILE {
                    // Out of descriptors: stop polling the listener briefly instead of spinning.
                    acceptPausedUntil = now + 0.1
                    _ = csys_epoll_del(epfd, listenFD)
                }
                return
            }
            if context.statistics.openConnections.load(ordering: .relaxed) >= context.configuration.maxConnections {
                refuse(fd)
                continue
            }
            context.statistics.openConnections.add(1, ordering: .relaxed)
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let peer = peerHigh != 0 || peerLow != 0 ? IPAddress(high: peerHigh, low: peerLow) : nil
            let target = acceptingLoop()
            target.load.add(1, ordering: .relaxed)
            if target === self { register(fd, peer: peer, now: now) } else { target.adopt(.accepted(fd: fd, peer: peer)) }
        }
    }

    /// Past the connection limit: the one JSON error shape (request id, `no-store`,
    /// `Retry-After`), sent once without waiting, then close: never a crash or a hang.
    private func refuse(_ fd: Int32) {
        var out = OutputQueue()
        _ = writer.append(
            .error(.tooManyConnections), to: .unparsed(requestID: context.generatedRequestID()), gzip: false, headOnly: false, keepAlive: false,
            version: .http11,
            date: dateCache.current(), into: &out)
        _ = out.send(to: fd)
        close(fd)
    }
}
