/// Where the answer to one request is written, on its event loop, now: lent to the responder
/// for one call (not copyable, so it cannot be kept for later). Writing returns how the
/// request ended, for the middleware that wait for the end.
public struct ResponseOutput: ~Copyable {
    // Unowned: the loop and the connection outlive the call this is lent for.
    unowned(unsafe) let loop: EventLoop
    unowned(unsafe) let connection: Connection
    let keepAlive: Bool
    /// A refusal: written as it is (no gzip, not cut for HEAD), and the connection closes.
    let refusal: Bool

    init(loop: EventLoop, connection: Connection, keepAlive: Bool, refusal: Bool = false) {
        self.loop = loop
        self.connection = connection
        self.keepAlive = keepAlive
        self.refusal = refusal
    }

    /// Serialises `response` into the connection's output; the outcome says what it carried.
    public func write(_ response: Response, for core: CoreRequestContext) -> RequestOutcome {
        refusal ? loop.writeRefusal(response, for: core, on: connection) : loop.write(response, for: core, keepAlive: keepAlive, on: connection)
    }

    /// Writes a long-lived answer's head and runs `open` on the stream of its body, off the
    /// loop; `ended` hears of its end when the connection's comes (the bytes the body carried).
    public func stream(
        _ head: Response, for core: CoreRequestContext, ended: @escaping @Sendable (RequestOutcome) -> Void,
        open: @escaping @Sendable (ResponseStream) async -> Void
    ) {
        loop.startStream(head, for: core, ended: ended, open: open, on: connection)
    }
}
