/// Work that wraps a route's handler (CORS, client identity, tracing, metrics, the access
/// log), each in its own type, over the application's context. `handle` is the middleware:
/// it may change the context before calling `next` (the middleware inside it, then the
/// handler), answer instead of calling it, and see or change the result after; deferred work
/// is wrapped the same way (`HandlerResult.map`, or a `.deferred` of its own around the work).
/// `ended` is where the response's end reaches it: once the answer is written (the body bytes
/// it sent), or the client left first (`499`), with the context as the handler's work left it,
/// however long after the handler returned that is.
///
/// Middleware attach to a router (every request, a 404 or a request that broke the protocol
/// included) or to a group of routes (only those): work that only some routes need runs only
/// there. Composed by type (`MiddlewareChain`), so a route's chain is specialised into one
/// function: no middleware is called through an existential or a closure per layer.
public protocol Middleware<Context>: Sendable {
    associatedtype Context: RequestContext
    func handle(_ context: inout Context, next: (inout Context) -> HandlerResult<Context>) -> HandlerResult<Context>
    func ended(_ context: Context, _ outcome: RequestOutcome)
}

extension Middleware {
    /// A middleware that only watches the end lets the request through.
    @inlinable public func handle(_ context: inout Context, next: (inout Context) -> HandlerResult<Context>) -> HandlerResult<Context> {
        next(&context)
    }

    @inlinable public func ended(_ context: Context, _ outcome: RequestOutcome) {}
}
