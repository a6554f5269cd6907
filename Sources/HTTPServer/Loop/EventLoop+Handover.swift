import CSystem
import Glibc
import Primitives
import Synchronization

/// Connections changing loops: handed over at accept time to keep the loops balanced, or
/// moved while idle to the loop of the CPU their packets arrive on (see `CPUPlacement`).
extension EventLoop {
    /// The loop that takes a connection this loop just accepted: only steering can pile
    /// connections up, so without it (and while draining) the accepting loop keeps it.
    func acceptingLoop() -> EventLoop {
        guard !loopByCPU.isEmpty, !context.isDraining else { return self }
        let loops = siblings
        return loops[LoopBalance.target(accepting: index, loops: loops.count) { loops[$0].load.load(ordering: .relaxed) }]
    }

    /// Starts serving an accepted connection on this loop.
    func register(_ fd: Int32, peer: IPAddress?, now: Double) {
        nextConnectionID &+= 1
        // Unique across loops (the loop's index on top): a deferred completion is matched by
        // fd + id, and a connection keeps its id when it moves to another loop.
        let conn = Connection(
            fd: fd, id: UInt64(index) << 48 | nextConnectionID, limits: context.configuration.limits, now: now,
            headerTimeout: context.configuration.headerTimeout)
        conn.peer = peer
        connections[fd] = conn
        conn.registeredEvents = Self.edgeTriggered | UInt32(EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
        _ = csys_epoll_add(epfd, fd, conn.registeredEvents)
    }

    /// Takes over a connection from another loop (its `load` already counts it).
    func adopt(_ adoption: Adoption) {
        let (accepted, wakes) = inbox.withLock { box -> (Bool, Bool) in
            guard !box.closed else { return (false, false) }
            box.adoptions.append(adoption)
            return (true, box.signal())
        }
        if wakes { wake() }
        if !accepted { discard(adoption.fd) }
    }

    /// Moves an idle connection to the loop of the CPU its packets now arrive on (the client
    /// thread moved, or steering at accept time had to balance), unless that loop is already
    /// the busier one by more than the balance slack.
    func followIncomingCPU(_ conn: Connection) -> Bool {
        let cpu = Int(csys_incoming_cpu(conn.fd))
        guard cpu >= 0, cpu < loopByCPU.count else { return false }
        let to = loopByCPU[cpu]
        guard to >= 0, to != index, to < siblings.count else { return false }
        let target = siblings[to]
        let mine = load.load(ordering: .relaxed)
        guard LoopBalance.mayMove(from: mine, to: target.load.load(ordering: .relaxed)) else { return false }
        connections[conn.fd] = nil
        _ = csys_epoll_del(epfd, conn.fd)
        load.subtract(1, ordering: .relaxed)
        target.load.add(1, ordering: .relaxed)
        target.adopt(.moved(conn))
        return true
    }

    /// Closes a handed-over connection nobody will serve (its loop is draining or gone).
    func discard(_ fd: Int32) {
        close(fd)
        load.subtract(1, ordering: .relaxed)
        context.statistics.openConnections.subtract(1, ordering: .relaxed)
    }
}
