/// One finished request, for the middleware's `completed` phase (access log, metrics, spans).
public struct RequestRecord: Sendable {
    /// The request and everything learned of it, log fields and client included.
    public let context: RequestContext
    public let status: Int
    public let bodyBytes: Int
    public let durationSeconds: Double
    /// Which event loop (0..<threads) served it, so middleware can keep per-loop state.
    public let loop: Int
}
