/// The application's routes over its context type, with the middleware around them: the
/// router's own (`use`: every request, a 404, a 405 or a request that broke the protocol
/// included) and each group's (`group`: only the routes that need them).
///
/// Each route's middleware and handler are composed into one function when it is added, so
/// a request makes a fixed number of calls whatever the middleware. The code here is inlinable:
/// it is compiled, specialised for the context, in the module that names that type (see
/// `RouterResponder` for the server's side).
public struct Router<Context: RootRequestContext>: Sendable {
    /// A route as it runs: its middleware around its handler, and its middleware's ends.
    @usableFromInline struct Route: Sendable {
        @usableFromInline let respond: Handler<Context>
        /// nil outside every group (no call made for nothing).
        @usableFromInline let ended: (@Sendable (Context, RequestOutcome) -> Void)?

        /// A route outside every group: its handler as it is.
        @inlinable init(_ handler: @escaping Handler<Context>) {
            respond = handler
            ended = nil
        }

        /// A group's route: its handler inside the group's middleware, and their ends.
        @inlinable init(respond: @escaping Handler<Context>, ended: (@Sendable (Context, RequestOutcome) -> Void)?) {
            self.respond = respond
            self.ended = ended
        }
    }

    @usableFromInline var table = RouteTable()
    @usableFromInline var routes: [Route] = []
    /// The router's own middleware, around every request.
    @usableFromInline var around: @Sendable (inout Context, (inout Context) -> HandlerResult<Context>) -> HandlerResult<Context> = { context, next in
        next(&context)
    }
    @usableFromInline var aroundEnded: @Sendable (Context, RequestOutcome) -> Void = { _, _ in }
    /// Whether `around` holds middleware yet: the first replaces the pass-through instead of
    /// wrapping it, so no request runs the pass-through (generic code, not specialised).
    @usableFromInline var hasAround = false

    public init() {}

    /// Puts `middleware` around every request, inside what was put there before.
    @inlinable public mutating func use<M: Middleware>(_ middleware: M) where M.Context == Context {
        guard hasAround else {
            hasAround = true
            around = { context, next in middleware.handle(&context, next: next) }
            aroundEnded = { context, outcome in middleware.ended(context, outcome) }
            return
        }
        let outer = around, outerEnded = aroundEnded
        around = { context, next in outer(&context) { middleware.handle(&$0, next: next) } }
        aroundEnded = { context, outcome in
            middleware.ended(context, outcome)
            outerEnded(context, outcome)
        }
    }

    /// The middleware listed, outermost first, around every request.
    @inlinable public mutating func use<M: Middleware>(@MiddlewareBuilder _ middleware: () -> M) where M.Context == Context {
        use(middleware())
    }

    @inlinable public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler<Context>) {
        add(method, pattern, Route(handler))
    }

    @inlinable mutating func add(_ method: String, _ pattern: String, _ route: Route) {
        // The table answers a route by its place here: numbered as it is appended.
        table.add(method, pattern, number: routes.count)
        routes.append(route)
    }

    @inlinable public mutating func get(_ pattern: String, _ handler: @escaping Handler<Context>) { add("GET", pattern, handler) }

    /// Routes added in `body` under `prefix` (Hummingbird's `RouterGroup`): they run inside the
    /// middleware the group is given (and the router's); only they do. Groups nest, add
    /// middleware of their own, and may give their routes a narrower context.
    @inlinable public mutating func group(_ prefix: String = "", _ body: (inout RouteGroup<Context>) -> Void) {
        var group = RouteGroup<Context>(prefix: prefix)
        body(&group)
        for route in group.routes { add(route.method, route.pattern, Route(respond: route.respond, ended: route.ended)) }
    }

    /// The same, with `middleware` (outermost first) around every route of the group.
    @inlinable public mutating func group<M: Middleware>(
        _ prefix: String = "", @MiddlewareBuilder middleware: () -> M, _ body: (inout RouteGroup<Context>) -> Void
    ) where M.Context == Context {
        let middleware = middleware()
        group(prefix) { group in
            group.add(middleware: middleware)
            body(&group)
        }
    }

    /// Routes added in `body` over `Child`, a narrower context `narrowing` makes from the
    /// router's (see `RouteGroup.group(context:narrowing:)`). Composed here, as the router's
    /// own routes are: a closure made in a group's code and stored in another generic container
    /// is called through two reabstraction thunks (~50 instructions a request, callgrind).
    @inlinable public mutating func group<Child, Narrowing: ContextNarrowing>(
        _ prefix: String = "", context: Child.Type, narrowing: Narrowing, _ body: (inout RouteGroup<Child>) -> Void
    ) where Narrowing.Parent == Context, Narrowing.Child == Child {
        var inner = RouteGroup<Child>(prefix: prefix)
        body(&inner)
        for route in inner.routes {
            let ended = route.ended.map { ended in { @Sendable (context: Context, outcome: RequestOutcome) in ended(narrowing.narrow(context), outcome) } }
            add(route.method, route.pattern, Route(respond: Self.widen(route.respond, narrowing), ended: ended))
        }
    }

    /// `RouteGroup.widen` for the router's own context, without copying it: the parent moves
    /// into the child and back (a swap with a context made from the same core, which costs
    /// next to nothing), where a copy out of the child and the child's destruction cost about
    /// 200 instructions a request (callgrind).
    @inlinable static func widen<Narrowing: ContextNarrowing>(_ handler: @escaping Handler<Narrowing.Child>, _ narrowing: Narrowing) -> Handler<Context>
    where Narrowing.Parent == Context {
        { context in
            let core = context.core
            var child = narrowing.narrow(consume context)
            let result = handler(&child)
            context = Context(core: core)
            swap(&context, &child.parent)
            switch consume result {
            case .response(let response):
                return .response(response)
            case .deferred(let work):
                let left = child
                return .deferred { parent in
                    var child = left
                    swap(&child.parent, &parent)
                    let response = await work(&child)
                    swap(&child.parent, &parent)
                    return response
                }
            case .stream(let head, let open):
                let left = child
                return .stream(head) { stream, parent in
                    var child = left
                    child.parent = parent
                    await open(stream, child)
                }
            }
        }
    }
}
