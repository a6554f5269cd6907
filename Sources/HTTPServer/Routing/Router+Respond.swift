/// A request through the router: routed, run through its middleware and handler, written, and
/// its end handed to the same middleware.
extension Router {
    /// Routes `context`'s request and runs its middleware and handler, without writing anything
    /// (a test's entry, and the server's through `respond`): the answer, now or deferred.
    @inlinable public func handle(_ context: inout Context) -> HandlerResult<Context> {
        switch table.resolve(context.core) {
        case .route(let index):
            return around(&context, routes[index].respond)
        case .answer(let answer):
            return around(&context) { _ in .response(answer) }
        }
    }

    /// The end of a request `handle` answered: its route's middleware first, then the router's.
    @inlinable public func ended(_ context: Context, _ outcome: RequestOutcome) {
        routeEnded(context.core)?(context, outcome)
        aroundEnded(context, outcome)
    }

    /// What `core`'s route's middleware do at the end (nil: no route, or none around it).
    @inlinable func routeEnded(_ core: CoreRequestContext) -> (@Sendable (Context, RequestOutcome) -> Void)? {
        let index = core.routeIndex
        return index >= 0 && index < routes.count ? routes[index].ended : nil
    }

    /// One request from the server: answered and written now (its middleware told of the
    /// end at once), or deferred work the server runs, writes and ends.
    @inlinable public func respond(to core: CoreRequestContext, output: borrowing ResponseOutput) -> DeferredResponse? {
        var context = Context(core: core)
        let result = handle(&context)
        switch consume result {
        case .response(let response):
            ended(context, output.write(response, for: context.core))
            return nil
        case .deferred(let work):
            return deferring(work, context)
        case .stream(let head, let open):
            let end = ending(context), streaming = context
            output.stream(head, for: context.core, ended: { end(streaming, $0) }) { stream in await open(stream, streaming) }
            return nil
        }
    }

    /// A request the server answers itself (it broke the protocol): the router's middleware run
    /// around that answer (they may add to it, not replace it with work for later).
    @inlinable public func refuse(_ core: CoreRequestContext, with answer: Response, output: borrowing ResponseOutput) {
        var context = Context(core: core)
        var written = answer
        if case .response(let changed) = around(&context, { _ in .response(answer) }) { written = changed }
        aroundEnded(context, output.write(written, for: context.core))
    }

    /// Deferred work as the server runs it: the work gets the context as the handler left it
    /// and hands it to the end; a client that leaves first ends the request with the context
    /// as it was then.
    @inlinable func deferring(_ work: @escaping @Sendable (inout Context) async -> Response, _ context: Context) -> DeferredResponse {
        let end = ending(context)
        return DeferredResponse(
            work: {
                var finished = context
                let response = await work(&finished)
                return DeferredAnswer(response: response, core: finished.core) { [finished] in end(finished, $0) }
            },
            abandoned: { end(context, $0) }, receivedAt: context.core.receivedAt)
    }

    /// What tells `context`'s route's middleware, then the router's, of an end that comes later
    /// (deferred work, a client that left, a stream).
    @inlinable func ending(_ context: Context) -> @Sendable (Context, RequestOutcome) -> Void {
        let routeEnded = routeEnded(context.core), aroundEnded = self.aroundEnded
        return { context, outcome in
            routeEnded?(context, outcome)
            aroundEnded(context, outcome)
        }
    }
}
