import Primitives
import CSystem
import Glibc

/// One client connection: the HTTP/1.1 state machine. Owned and touched only by
/// its event loop's thread.
final class Connection {
    enum Phase {
        case head
        case body(remaining: Int)
        case chunked(ChunkedDecoder)
        case awaitingHandler
    }

    enum DeadlineKind {
        case idle, readingRequest, readingBody, writing, none
    }

    let fd: Int32
    let id: UInt64
    var phase = Phase.head
    var parser: RequestHeadParser
    /// The request being read (already what the server knows of it, filled in at dispatch).
    var current: RequestHead?
    /// The request awaiting its deferred handler. Boxed: an idle connection (most of them)
    /// keeps one reference, not the whole record.
    var handling: AwaitedRequest?
    /// Unparsed bytes kept between reads (empty for idle connections: they own no buffer).
    var pending: [UInt8] = []
    var output = OutputQueue()
    var closeAfterWrite = false
    var peerClosed = false
    var registeredEvents: UInt32 = 0
    var deadline: Double
    var deadlineKind = DeadlineKind.readingRequest
    /// The peer's address as accepted (nil when not IP); formatted only when someone asks.
    var peer: IPAddress?
    /// Responses written; every 16th, the loop checks which CPU the connection's packets arrive on.
    var served = 0
    /// The deferred handler working on the current request; cancelled if the client goes.
    var handler: Task<Void, Never>?
    /// The long-lived answer this connection is sending (it reads no further requests).
    var streamed: StreamedRequest?

    init(fd: Int32, id: UInt64, limits: ParseLimits, now: Double, headerTimeout: Double) {
        self.fd = fd
        self.id = id
        self.parser = RequestHeadParser(limits: limits)
        self.deadline = now + headerTimeout
    }

    var awaiting: Bool {
        if case .awaitingHandler = phase { return true }
        return false
    }

    var unsentBytes: Int { output.pendingBytes }

    var streaming: Bool { streamed != nil }

    /// Between requests with nothing buffered either way: safe to close when draining.
    var isIdle: Bool {
        if case .head = phase, pending.isEmpty, unsentBytes == 0, streamed == nil { return true }
        return false
    }
}

/// A request whose handler works off the loop: what the loop needs of it meanwhile (whom to
/// tell if the client leaves) and after (whether the connection stays open).
final class AwaitedRequest {
    let keepAlive: Bool
    let receivedAt: Double
    let abandoned: @Sendable (RequestOutcome) -> Void

    init(keepAlive: Bool, receivedAt: Double, abandoned: @escaping @Sendable (RequestOutcome) -> Void) {
        self.keepAlive = keepAlive
        self.receivedAt = receivedAt
        self.abandoned = abandoned
    }
}
