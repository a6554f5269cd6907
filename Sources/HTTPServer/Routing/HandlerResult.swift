/// A handler's answer: ready now (a cache hit stays on the event loop, no Task), or later
/// (awaiting an upstream, off the loop), given the request's context back to fill in, or a stream.
public enum HandlerResult<Context: RequestContext>: Sendable {
    case response(Response)
    case deferred(@Sendable (inout Context) async -> Response)
    /// A long-lived answer (Server-Sent Events): the head now (no length: chunked), then a body
    /// the application writes to the stream it is handed, off the loop, until either side ends
    /// it. Its middleware see its end when the connection's does. The request's body is let go
    /// as the stream starts (the handler reads what it needs of it first).
    case stream(Response, @Sendable (ResponseStream, Context) async -> Void)

    /// The same answer with its response passed through `transform`: now (with `context`, the
    /// caller's), or when the deferred work returns (with the context the work left), so a
    /// middleware changes a later answer as it changes one given now.
    @inlinable public func map(now context: Context, _ transform: @escaping @Sendable (Response, Context) -> Response) -> HandlerResult {
        switch self {
        case .response(let response): return .response(transform(response, context))
        case .deferred(let work): return .deferred { context in transform(await work(&context), context) }
        case .stream(let head, let open): return .stream(transform(head, context), open)
        }
    }
}

/// What a route runs: on the event loop, answering now or handing back deferred work.
public typealias Handler<Context: RequestContext> = @Sendable (inout Context) -> HandlerResult<Context>
