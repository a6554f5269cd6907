import CSystem
import Glibc
import Primitives
import Synchronization

/// Per-connection I/O on the loop thread: read, parse, dispatch, write, close.
extension EventLoop {
    func handle(_ conn: Connection, events: UInt32) {
        // Reset or fully closed: nothing can be answered, and epoll would keep reporting
        // it (HUP/ERR ignore the interest mask), so drop the connection now.
        if events & UInt32(EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            closeConnection(conn)
            return
        }
        if events & UInt32(EPOLLOUT.rawValue) != 0 {
            flush(conn)
            guard connections[conn.fd] === conn else { return }
        }
        // The client hung up while its handler works (an app aborting the previous keystroke's search,
        // a proxy aborting): nobody will read the answer, so the work is cancelled.
        if (conn.awaiting || conn.streaming) && events & UInt32(EPOLLRDHUP.rawValue) != 0 {
            closeConnection(conn)
            return
        }
        if events & UInt32(EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 {
            readAndProcess(conn, hangUp: events & UInt32(EPOLLRDHUP.rawValue) != 0)
        }
    }

    /// Reads what the socket holds and answers it. Connections are edge-triggered, as nginx's:
    /// epoll reports new bytes once, so a read that fills the buffer reads on, and one that
    /// comes back short has emptied the socket (the next bytes raise a new edge).
    private func readAndProcess(_ conn: Connection, hangUp: Bool) {
        var fullReads = 0
        while true {
            guard wantsRead(conn) else {
                updateInterest(conn)
                return
            }
            let n = recv(conn.fd, readBuffer.baseAddress, readBuffer.count, 0)
            if n == 0 {
                conn.peerClosed = true
                if (conn.awaiting || conn.unsentBytes > 0) && !conn.streaming { updateInterest(conn) } else { closeConnection(conn) }
                return
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN { closeConnection(conn) }
                return
            }
            if conn.deadlineKind == .idle {
                conn.deadlineKind = .readingRequest
                conn.deadline = wakeTime + context.configuration.headerTimeout
            }
            if conn.pending.isEmpty {
                // Common case: parse straight from the loop's shared buffer; keep only leftovers.
                let bytes = UnsafeBufferPointer(rebasing: readBuffer[0..<n])
                let used = process(conn, bytes)
                if used < n && !conn.closeAfterWrite { conn.pending.append(contentsOf: bytes[used...]) }
            } else {
                conn.pending.append(contentsOf: UnsafeBufferPointer(rebasing: readBuffer[0..<n]))
                resumePending(conn)
            }
            guard connections[conn.fd] === conn else { return }
            flush(conn)
            // Short: the socket is empty, unless the peer's FIN waits behind these bytes; then
            // read on to its 0 (when reading is due again), as the next level-triggered wait did.
            guard n == readBuffer.count || hangUp, connections[conn.fd] === conn else { return }
            fullReads += 1
            if fullReads == Self.readsPerEvent {
                // Still more queued: serve the loop's other connections first, and have epoll
                // report this one again at the next wait (a MOD re-polls it).
                _ = csys_epoll_mod(epfd, conn.fd, conn.registeredEvents)
                return
            }
        }
    }

    /// Parses what is buffered in `pending` (after more bytes came, or a handler finished).
    func resumePending(_ conn: Connection) {
        guard !conn.pending.isEmpty, !conn.closeAfterWrite else { return }
        // Moved out (no copy), and moved back when nothing was used: a head arriving a byte
        // at a time is not copied whole on every read.
        var all = conn.pending
        conn.pending = []
        let used = all.withUnsafeBufferPointer { process(conn, $0) }
        guard used < all.count, !conn.closeAfterWrite else { return }
        if used > 0 { all.removeSubrange(0..<used) }
        if conn.pending.isEmpty { conn.pending = all } else { conn.pending.append(contentsOf: all) }
    }

    func wantsRead(_ conn: Connection) -> Bool {
        !conn.awaiting && !conn.streaming && !conn.closeAfterWrite && !conn.peerClosed
            && conn.unsentBytes < context.configuration.maxPendingOutputBytes
    }

    /// Parses and answers as many complete requests as `bytes` holds; returns the bytes used.
    private func process(_ conn: Connection, _ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 0
        while offset < bytes.count && !conn.awaiting && !conn.streaming && !conn.closeAfterWrite
            && conn.unsentBytes < context.configuration.maxPendingOutputBytes
        {
            let rest = UnsafeBufferPointer(rebasing: bytes[offset...])
            switch conn.phase {
            case .head:
                // Consumed, so the parsed head moves into the connection instead of being copied.
                let parsed = conn.parser.parse(rest)
                switch consume parsed {
                case .needMore:
                    if conn.deadlineKind != .readingRequest {
                        conn.deadlineKind = .readingRequest
                        conn.deadline = wakeTime + context.configuration.headerTimeout
                    }
                    return offset
                case .failure(let error):
                    reject(conn, error)
                    return bytes.count
                case .head(let head, let consumed):
                    offset += consumed
                    conn.parser.reset()
                    let (expectContinue, framing) = (head.expectContinue, head.framing)
                    conn.current = consume head
                    conn.current?.core.receivedAt = wakeTime  // when the loop learned of it: queueing in this wake-up counts
                    if expectContinue { conn.output.append(literal: "HTTP/1.1 100 Continue\r\n\r\n") }
                    switch framing {
                    case .none: dispatch(conn)
                    case .length(let n):
                        conn.phase = .body(remaining: n)
                        startBodyDeadline(conn)
                    case .chunked:
                        let limits = context.configuration.limits
                        conn.phase = .chunked(ChunkedDecoder(maxBody: limits.maxBodyBytes, maxTrailerBytes: limits.maxHeaderBytes))
                        startBodyDeadline(conn)
                    }
                }
            case .body(let remaining):
                let take = min(remaining, rest.count)
                conn.current?.core.request.body.append(contentsOf: UnsafeBufferPointer(rebasing: rest[0..<take]))
                offset += take
                if take == remaining { dispatch(conn) } else { conn.phase = .body(remaining: remaining - take) }
            case .chunked(var decoder):
                // Decoded into the request's own buffer, in place: copying the body out and
                // back on every read made a body trickled in small segments cost O(n²).
                guard let (used, outcome) = conn.current?.appendingBody({ decoder.decode(rest, into: &$0) }) else { return bytes.count }
                offset += used
                switch outcome {
                case .needMore: conn.phase = .chunked(decoder)
                case .done: dispatch(conn)
                case .failure(let error):
                    reject(conn, error)
                    return bytes.count
                }
            case .awaitingHandler:
                return offset
            }
        }
        return offset
    }

    /// The body has its own deadline from the end of the head, whatever it sends meanwhile:
    /// a body trickled a byte at a time cannot hold a connection and its buffer for ever.
    private func startBodyDeadline(_ conn: Connection) {
        conn.deadlineKind = .readingBody
        conn.deadline = wakeTime + context.configuration.bodyTimeout
    }

    /// A request that broke the protocol: answer its error, then close (the framing can't be trusted).
    func reject(_ conn: Connection, _ error: ClientError) {
        // The client's own id when a head was parsed (a body that failed), else a new one.
        let core: CoreRequestContext
        if let parsed = conn.current.take()?.core {
            core = parsed
            core.route = "(invalid)"
            introduce(core, from: conn)
        } else {
            core = .unparsed(requestID: context.generatedRequestID())
            introduce(core, from: conn)
        }
        conn.phase = .head
        // The application's middleware see it (its header lines, its record); the writing is the server's.
        context.responder.refuse(core, with: Response.error(error), output: ResponseOutput(loop: self, connection: conn, keepAlive: false, refusal: true))
    }

    /// A refusal as it is: no gzip, the whole body whatever the method, then close (the framing can't be trusted).
    func writeRefusal(_ response: Response, for core: CoreRequestContext, on conn: Connection) -> RequestOutcome {
        let sent = writer.append(
            response, to: core, gzip: false, headOnly: false, keepAlive: false, version: core.request.version, date: dateCache.current(),
            into: &conn.output)
        conn.closeAfterWrite = true
        return RequestOutcome(status: response.status, bodyBytes: sent, durationSeconds: 0, loop: index)
    }

    /// What the server tells the application of a request besides what was parsed: its id
    /// (the client's when valid, else a new one), its trace (the client's continued, else a new
    /// one) and its peer. Refusals too: their middleware see a valid trace and the peer.
    /// Inlined: as a call it cost the hit path ~70 instructions (callgrind).
    @inline(__always) private func introduce(_ core: CoreRequestContext, from conn: Connection) {
        if core.generatedID == 0 { context.assignRequestID(core) }
        core.continuedTrace = TraceContext.continuing(
            traceparent: core.request.headers.single("traceparent"), tracestate: core.request.headers["tracestate"], ids: &traceIDs)
        core.peer = conn.peer
    }

    private func dispatch(_ conn: Connection) {
        // Filled in, then handed to the responder (one reference).
        guard let head = conn.current.take() else { return }
        let keepAlive = head.keepAlive && !context.isDraining
        let core = head.core
        introduce(core, from: conn)
        // An answer given now is written inside this call (and its end told there); the phase
        // is set first, as the writing may read it.
        conn.phase = .head
        guard let deferred = context.responder.respond(to: core, output: ResponseOutput(loop: self, connection: conn, keepAlive: keepAlive))
        else { return }
        conn.handling = AwaitedRequest(keepAlive: keepAlive, receivedAt: deferred.receivedAt, abandoned: deferred.abandoned)
        conn.phase = .awaitingHandler
        conn.deadlineKind = .none
        let fd = conn.fd, id = conn.id, workerCPUs = self.workerCPUs
        let work = deferred.work
        context.statistics.runningHandlers.add(1, ordering: .relaxed)
        conn.handler = Task { [self] in
            // A pool thread started from a pinned loop inherits its single CPU: give it back all of them.
            if !workerCPUs.isEmpty { NativeThread.allowOnce(cpus: workerCPUs) }
            let answer = await work()
            context.statistics.runningHandlers.subtract(1, ordering: .relaxed)
            complete(fd: fd, connectionID: id, answer: answer)
        }
    }

    /// Serialises a handler's response into the output buffer; returns how the request ended.
    func write(_ response: Response, for core: CoreRequestContext, keepAlive requested: Bool, on conn: Connection) -> RequestOutcome {
        let keepAlive = requested && !context.isDraining
        conn.served &+= 1
        let sent = writer.append(
            response, to: core, gzip: core.request.acceptsGzip, headOnly: core.request.isHead, keepAlive: keepAlive,
            version: core.request.version, date: dateCache.current(), into: &conn.output)
        if !keepAlive { conn.closeAfterWrite = true }
        let duration = NativeThread.monotonicSeconds() - core.receivedAt
        return RequestOutcome(status: response.status, bodyBytes: sent, durationSeconds: duration, loop: index)
    }

    /// Sends buffered output; on a partial write waits for EPOLLOUT (the connection stops reading meanwhile).
    func flush(_ conn: Connection) {
        let before = conn.unsentBytes
        switch conn.output.send(to: conn.fd) {
        case .failed:
            closeConnection(conn)
            return
        case .wouldBlock:
            // The write timeout measures a stall, so any progress restarts it.
            if conn.deadlineKind != .writing || conn.unsentBytes < before {
                conn.deadlineKind = .writing
                conn.deadline = NativeThread.monotonicSeconds() + context.configuration.writeTimeout
            }
        case .done:
            if conn.closeAfterWrite || (conn.peerClosed && !conn.awaiting) || (context.isDraining && conn.isIdle) {
                closeConnection(conn)
                return
            }
            // A stream that caught up waits for its next event with no deadline (heartbeats keep it alive).
            if conn.streaming { conn.deadlineKind = .none }
            if case .head = conn.phase, conn.pending.isEmpty, !conn.streaming {
                conn.deadlineKind = .idle
                conn.deadline = wakeTime + context.configuration.idleTimeout
                if !loopByCPU.isEmpty && conn.served & 15 == 1 && conn.isIdle && followIncomingCPU(conn) { return }
            }
            // Back-pressure released: parse pipelined requests that were waiting.
            if !conn.pending.isEmpty && wantsRead(conn) && !conn.awaiting {
                resumePending(conn)
                if conn.unsentBytes > 0 { return flush(conn) }
            }
        }
        updateInterest(conn)
    }

    func updateInterest(_ conn: Connection, adding: Bool = false) {
        var events = Self.edgeTriggered
        if wantsRead(conn) { events |= UInt32(EPOLLIN.rawValue | EPOLLRDHUP.rawValue) }
        // Awaiting a handler or streaming: not reading (pipelined requests wait), but told of a hang-up.
        if (conn.awaiting || conn.streaming) && !conn.peerClosed { events |= UInt32(EPOLLRDHUP.rawValue) }
        if conn.unsentBytes > 0 { events |= UInt32(EPOLLOUT.rawValue) }
        if adding {
            conn.registeredEvents = events
            _ = csys_epoll_add(epfd, conn.fd, events)
        } else if events != conn.registeredEvents {
            conn.registeredEvents = events
            _ = csys_epoll_mod(epfd, conn.fd, events)
        }
    }

    func closeConnection(_ conn: Connection) {
        guard connections[conn.fd] === conn else { return }
        if conn.awaiting, let handling = conn.handling { abandon(conn, handling) }
        if let streamed = conn.streamed { streamEnded(conn, streamed) }
        connections[conn.fd] = nil
        _ = csys_epoll_del(epfd, conn.fd)
        close(conn.fd)
        load.subtract(1, ordering: .relaxed)
        context.statistics.openConnections.subtract(1, ordering: .relaxed)
    }

    /// A request whose client left before its answer: the handler is cancelled and the
    /// request recorded as nginx does, `499` (client closed request).
    private func abandon(_ conn: Connection, _ handling: AwaitedRequest) {
        conn.handler?.cancel()
        conn.handler = nil
        conn.handling = nil
        handling.abandoned(
            RequestOutcome(status: 499, bodyBytes: 0, durationSeconds: NativeThread.monotonicSeconds() - handling.receivedAt, loop: index))
    }

    /// Drops connections past their deadline: slowloris heads, idle keep-alives, stalled readers.
    func sweep(now: Double) {
        if listenFD >= 0 && acceptPausedUntil > 0 && now >= acceptPausedUntil {
            acceptPausedUntil = 0
            _ = csys_epoll_add(epfd, listenFD, UInt32(EPOLLIN.rawValue))
        }
        for conn in connections.filter({ $0.deadlineKind != .none && now >= $0.deadline }) {
            if conn.deadlineKind == .readingBody {
                // The head came but its body did not in time: say so (408), then close.
                reject(conn, .requestTimeout)
                flush(conn)
            } else {
                closeConnection(conn)
            }
        }
    }
}
