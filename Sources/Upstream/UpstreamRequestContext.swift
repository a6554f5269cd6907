import Primitives

/// What a request carries upstream, in one value: who it is for, its trace, when its whole
/// answer is due, and whether a transfer once sent completes without its caller. One
/// task-local (in the style of swift-distributed-tracing's `ServiceContext`): set by the
/// route around the work done for a request, read by `UpstreamClient.send`.
public struct UpstreamRequestContext: Sendable {
    /// The client whose upstream waits are queued fairly under this key (nil: background
    /// work, which never waits).
    public var requester: ClientKey?
    /// The W3C trace the request belongs to: every attempt carries its trace id with a new
    /// parent id. nil (background refresh): each attempt starts a trace.
    public var trace: TraceContext?
    /// When the answer is due (the client's monotonic clock): every call made for it, queue
    /// waits included, fits before it. nil: each call has its own full budget.
    public var deadline: Double?
    /// For answers that are shared and cached: once a request has left (its token spent), it
    /// completes even if the caller is cancelled, so the answer is kept. Cancellation still
    /// takes it out of the queue before that. Off: cancellation aborts.
    public var completesOnceSent: Bool

    public init(requester: ClientKey? = nil, trace: TraceContext? = nil, deadline: Double? = nil, completesOnceSent: Bool = false) {
        self.requester = requester
        self.trace = trace
        self.deadline = deadline
        self.completesOnceSent = completesOnceSent
    }

    @TaskLocal public static var current = UpstreamRequestContext()

    /// Runs `work` with the current context changed by `change`.
    public static func with<R>(_ change: (inout UpstreamRequestContext) -> Void, _ work: () async throws -> R) async rethrows -> R {
        var context = current
        change(&context)
        return try await $current.withValue(context) { try await work() }
    }
}
