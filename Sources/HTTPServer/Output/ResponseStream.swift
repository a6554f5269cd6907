import Primitives

/// The body of a long-lived response (Server-Sent Events): written by the application from any
/// thread, sent by the connection's loop as chunks, in order. Bounded: bytes the client has not
/// taken yet, here and in the connection's buffer, are at most `maxBufferedBytes`; a reader
/// that falls further behind is closed (never a buffer that grows; one event larger than the
/// bound goes to a reader that has taken everything before it), as is one whose socket
/// stalls past the server's write timeout.
public final class ResponseStream: Sendable {
    struct State {
        var queued: [UInt8] = []
        /// Handed to the loop and not yet taken: one wake-up per batch of sends.
        var scheduled = false
        var finishing = false
        /// Fell behind: closed at once, what is queued dropped (the client resumes from its last id).
        var behind = false
        var closed = false
        /// Who to tell when it ends: one closure, the later ones chained after the first (a
        /// stream has one listener, and an array of one is an allocation held as long as it).
        var onClose: (@Sendable () -> Void)?
    }

    let fd: Int32
    let connectionID: UInt64
    /// Chunked transfer coding (HTTP/1.1); an HTTP/1.0 client's body ends with the connection.
    let chunked: Bool
    public let maxBufferedBytes: Int
    private let loop: EventLoop
    /// Guarded by its stripe of `locks` (`withState`): thousands of open streams hold no mutex
    /// and no heap block for one each.
    private nonisolated(unsafe) var state = State()
    private static let locks = LockStripes()

    init(fd: Int32, connectionID: UInt64, chunked: Bool, maxBufferedBytes: Int, loop: EventLoop) {
        self.fd = fd
        self.connectionID = connectionID
        self.chunked = chunked
        self.maxBufferedBytes = maxBufferedBytes
        self.loop = loop
    }

    /// Queues `bytes` for the client; false when the stream is closed, or when the client is
    /// too far behind (the stream is then ended).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return !isClosed }
        let (accepted, wake) = withState { s -> (Bool, Bool) in
            guard !s.closed, !s.finishing else { return (false, false) }
            // An empty queue takes one event of any size (a page of long show notes): the bound
            // is on what a reader leaves behind, not on what one event weighs.
            guard s.queued.isEmpty || s.queued.count + bytes.count <= maxBufferedBytes else {
                s.finishing = true
                s.behind = true
                let wake = !s.scheduled
                s.scheduled = true
                return (false, wake)
            }
            if chunked {
                s.queued += String(bytes.count, radix: 16).utf8
                s.queued += [13, 10]
                s.queued += bytes
                s.queued += [13, 10]
            } else {
                s.queued += bytes
            }
            let wake = !s.scheduled
            s.scheduled = true
            return (true, wake)
        }
        if wake { loop.streamReady(self) }
        return accepted
    }

    /// Ends the body once what is queued is sent; the connection then closes.
    public func finish() {
        let wake = withState { s -> Bool in
            guard !s.closed, !s.finishing else { return false }
            s.finishing = true
            let wake = !s.scheduled
            s.scheduled = true
            return wake
        }
        if wake { loop.streamReady(self) }
    }

    /// Runs `handler` once when the stream ends (the client left, it was finished, or it fell
    /// behind); at once when it has already ended.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let now = withState { s -> Bool in
            if s.closed { return true }
            if let earlier = s.onClose {
                s.onClose = {
                    earlier()
                    handler()
                }
            } else {
                s.onClose = handler
            }
            return false
        }
        if now { handler() }
    }

    public var isClosed: Bool { withState { $0.closed } }

    /// Whether everything sent so far has been handed to the connection (an application sending
    /// a long backlog a part at a time sends the next once this holds).
    public var isIdle: Bool { withState { $0.queued.isEmpty && !$0.scheduled } }

    private func withState<R>(_ body: (inout State) -> R) -> R {
        Self.locks.withLock(for: self) { body(&state) }
    }

    // MARK: the loop's side

    /// What to send now, and whether the body ends after it (the loop's thread).
    func take() -> (bytes: [UInt8], ending: Bool, behind: Bool) {
        withState { s in
            let bytes = s.queued
            s.queued = []
            s.scheduled = false
            return (bytes, s.finishing, s.behind)
        }
    }

    /// The connection is gone: later sends are refused, and whoever listens is told.
    func closed() {
        let handler = withState { s -> (@Sendable () -> Void)? in
            guard !s.closed else { return nil }
            s.closed = true
            s.queued = []
            defer { s.onClose = nil }
            return s.onClose
        }
        handler?()
    }
}

/// A request answered by a stream: what the loop needs of it while it lasts.
final class StreamedRequest {
    let stream: ResponseStream
    let status: Int
    /// When the request came and when its head was written (monotonic seconds).
    let receivedAt: Double
    let headAt: Double
    /// Body bytes handed to the connection so far (chunk framing included).
    var sent = 0
    /// The application's middleware, told once when the connection ends.
    let ended: @Sendable (RequestOutcome) -> Void

    init(stream: ResponseStream, status: Int, receivedAt: Double, headAt: Double, ended: @escaping @Sendable (RequestOutcome) -> Void) {
        self.stream = stream
        self.status = status
        self.receivedAt = receivedAt
        self.headAt = headAt
        self.ended = ended
    }
}
