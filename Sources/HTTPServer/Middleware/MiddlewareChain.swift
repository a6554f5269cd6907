/// Two middleware as one: `outer` wraps `inner`, which wraps `next`; the end reaches `inner`
/// first, as a return unwinds. Longer chains nest (`MiddlewareBuilder` writes them as a list).
public struct MiddlewareChain<Outer: Middleware, Inner: Middleware>: Middleware where Outer.Context == Inner.Context {
    public typealias Context = Outer.Context
    @usableFromInline let outer: Outer
    @usableFromInline let inner: Inner

    @inlinable public init(_ outer: Outer, _ inner: Inner) {
        self.outer = outer
        self.inner = inner
    }

    @inlinable public func handle(_ context: inout Context, next: (inout Context) -> HandlerResult<Context>) -> HandlerResult<Context> {
        outer.handle(&context) { inner.handle(&$0, next: next) }
    }

    @inlinable public func ended(_ context: Context, _ outcome: RequestOutcome) {
        inner.ended(context, outcome)
        outer.ended(context, outcome)
    }
}

/// A middleware the configuration may leave out (tracing without an exporter): absent, the
/// request passes straight through.
extension Optional: Middleware where Wrapped: Middleware {
    public typealias Context = Wrapped.Context

    @inlinable public func handle(_ context: inout Context, next: (inout Context) -> HandlerResult<Context>) -> HandlerResult<Context> {
        guard let middleware = self else { return next(&context) }
        return middleware.handle(&context, next: next)
    }

    @inlinable public func ended(_ context: Context, _ outcome: RequestOutcome) { self?.ended(context, outcome) }
}

/// Middleware listed outermost first, nested into one type.
@resultBuilder public enum MiddlewareBuilder {
    @inlinable public static func buildPartialBlock<M: Middleware>(first: M) -> M { first }
    @inlinable public static func buildPartialBlock<A: Middleware, B: Middleware>(accumulated: A, next: B) -> MiddlewareChain<A, B> {
        MiddlewareChain(accumulated, next)
    }
}
