import Primitives

/// Long-lived answers (Server-Sent Events) on the loop's thread: the head written at once,
/// the body sent as the application queues it, the connection's end told to the application.
extension EventLoop {
    func startStream(
        _ response: Response, for core: CoreRequestContext, ended: @escaping @Sendable (RequestOutcome) -> Void,
        open: @escaping @Sendable (ResponseStream) async -> Void, on conn: Connection
    ) {
        let http11 = core.request.version != .http10
        conn.served &+= 1
        _ = writer.append(
            response, to: core, gzip: false, headOnly: core.request.isHead, keepAlive: http11 && !context.isDraining,
            version: core.request.version, date: dateCache.current(), into: &conn.output, streaming: true)
        conn.phase = .head
        conn.deadlineKind = .none
        conn.output.keepsStorage = false
        let stream = ResponseStream(
            fd: conn.fd, connectionID: conn.id, chunked: http11, maxBufferedBytes: context.configuration.maxStreamBufferedBytes, loop: self)
        conn.streamed = StreamedRequest(
            stream: stream, status: response.status, receivedAt: core.receivedAt, headAt: NativeThread.monotonicSeconds(), ended: ended)
        guard !core.request.isHead, !context.isDraining else {
            endStream(conn)
            return
        }
        // A stream lasts: its request is not kept whole for as long (`Request.keepForStream`).
        // The handler has read it (and resolved its client); the stream's body and its end see
        // what is kept.
        core.request.keepForStream()
        let workerCPUs = self.workerCPUs
        Task {
            if !workerCPUs.isEmpty { NativeThread.allowOnce(cpus: workerCPUs) }
            await open(stream)
        }
    }

    /// Moves what the application queued into the connection's output, and sends it.
    func sendStreamed(_ stream: ResponseStream) {
        guard let conn = connections[stream.fd], conn.id == stream.connectionID, let streamed = conn.streamed, streamed.stream === stream else {
            stream.closed()
            return
        }
        let (bytes, ending, behind) = stream.take()
        let caughtUp = conn.unsentBytes == 0
        if !bytes.isEmpty {
            conn.output.appendBody(bytes)
            streamed.sent &+= bytes.count
        }
        // A reader that does not take what is sent is closed: its buffer never grows past the
        // bound (one that had taken everything may be handed one event larger than it).
        if behind || (!caughtUp && conn.unsentBytes > stream.maxBufferedBytes) {
            closeConnection(conn)
            return
        }
        if ending {
            endStream(conn)
        } else {
            flush(conn)
        }
    }

    /// Ends a stream's body (the last chunk) and closes the connection once it is sent.
    func endStream(_ conn: Connection) {
        guard let streamed = conn.streamed else { return }
        if streamed.stream.chunked { conn.output.append(literal: "0\r\n\r\n") }
        conn.closeAfterWrite = true
        flush(conn)
    }

    /// The connection of a stream is gone: the application is told.
    func streamEnded(_ conn: Connection, _ streamed: StreamedRequest) {
        conn.streamed = nil
        streamed.stream.closed()
        let now = NativeThread.monotonicSeconds()
        streamed.ended(
            RequestOutcome(
                status: streamed.status, bodyBytes: streamed.sent, durationSeconds: now - streamed.receivedAt,
                headSeconds: streamed.headAt - streamed.receivedAt, loop: index))
    }
}
