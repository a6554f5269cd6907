/// How a request ended, for the middleware's `completed` phase (access log, metrics, spans),
/// which gets it beside the request's context.
public struct RequestOutcome: Sendable {
    public let status: Int
    public let bodyBytes: Int
    public let durationSeconds: Double
    /// Which event loop (0..<threads) served it, so middleware can keep per-loop state.
    public let loop: Int
}
