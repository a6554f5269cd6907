/// How a request ended, for the middleware that see its end (access log, metrics, spans),
/// which get it beside the request's context.
public struct RequestOutcome: Sendable {
    public let status: Int
    public let bodyBytes: Int
    /// From the request's arrival to its end: the answer written, the client gone, or a
    /// stream's connection closed.
    public let durationSeconds: Double
    /// From the request's arrival to its answer's head: the same as `durationSeconds` but for a
    /// stream, whose hours are not a request's latency.
    public let headSeconds: Double
    /// Which event loop (0..<threads) served it, so middleware can keep per-loop state.
    public let loop: Int

    public init(status: Int, bodyBytes: Int, durationSeconds: Double, headSeconds: Double? = nil, loop: Int) {
        self.status = status
        self.bodyBytes = bodyBytes
        self.durationSeconds = durationSeconds
        self.headSeconds = headSeconds ?? durationSeconds
        self.loop = loop
    }
}
