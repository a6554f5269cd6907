/// Routes that share a path prefix and middleware, as Hummingbird 2's `RouterGroup` has them:
/// `add(middleware:)` puts middleware around the routes added after it (the first added is the
/// outermost), `group(_:)` nests a group under a longer prefix inside this one's middleware, and
/// `group(context:)` gives a group's routes a narrower context (`ChildRequestContext`) that a
/// narrowing made from this one, so what it learned is a typed field, not an Optional a route
/// must read as "absent".
///
/// A route's middleware and handler are composed when it is added: a request makes one call
/// per middleware, none for groups that add none.
public struct RouteGroup<Context: RequestContext>: Sendable {
    /// A route as the group hands it out: its full pattern, its handler inside the group's
    /// middleware, and what their ends do (nil: no middleware).
    public struct Route: Sendable {
        public let method: String
        public let pattern: String
        @usableFromInline let respond: Handler<Context>
        @usableFromInline let ended: (@Sendable (Context, RequestOutcome) -> Void)?

        @inlinable init(method: String, pattern: String, respond: @escaping Handler<Context>, ended: (@Sendable (Context, RequestOutcome) -> Void)?) {
            self.method = method
            self.pattern = pattern
            self.respond = respond
            self.ended = ended
        }
    }

    @usableFromInline let prefix: String
    /// The middleware added so far, around a handler (outermost first); nil: none yet.
    @usableFromInline var wrap: (@Sendable (@escaping Handler<Context>) -> Handler<Context>)?
    /// Their ends, the innermost first (as a return unwinds).
    @usableFromInline var ends: (@Sendable (Context, RequestOutcome) -> Void)?
    /// Every route added, nested groups' included, in the order added.
    @usableFromInline var routes: [Route] = []

    @inlinable public init(prefix: String = "") { self.prefix = prefix }

    /// Puts `middleware` around the routes added from now on, inside the middleware added before.
    @inlinable public mutating func add<M: Middleware>(middleware: M) where M.Context == Context {
        let outer = wrap
        let inner: @Sendable (@escaping Handler<Context>) -> Handler<Context> = { handler in
            { context in middleware.handle(&context, next: handler) }
        }
        if let outer {
            wrap = { @Sendable handler in outer(inner(handler)) }
        } else {
            wrap = inner
        }
        let outerEnds = ends
        ends = { context, outcome in
            middleware.ended(context, outcome)
            outerEnds?(context, outcome)
        }
    }

    @inlinable public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler<Context>) {
        routes.append(Route(method: method, pattern: Self.join(prefix, pattern), respond: wrap?(handler) ?? handler, ended: ends))
    }

    @inlinable public mutating func get(_ pattern: String, _ handler: @escaping Handler<Context>) { add("GET", pattern, handler) }
    @inlinable public mutating func post(_ pattern: String, _ handler: @escaping Handler<Context>) { add("POST", pattern, handler) }

    /// Routes added in `body` under `prefix` (joined to this group's), inside this group's
    /// middleware and then their own.
    @inlinable public mutating func group(_ prefix: String, _ body: (inout RouteGroup<Context>) -> Void) {
        var inner = RouteGroup<Context>(prefix: Self.join(self.prefix, prefix))
        body(&inner)
        for route in inner.routes { adopt(route.method, route.pattern, route.respond, route.ended) }
    }

    /// Routes added in `body` over `Child`, a narrower context `narrowing` makes from this
    /// group's (after this group's middleware ran), under the same prefix. What the routes write
    /// into the child's parent reaches the middleware outside the group, deferred work and
    /// streams included.
    @inlinable public mutating func group<Child, Narrowing: ContextNarrowing>(
        context: Child.Type, narrowing: Narrowing, _ body: (inout RouteGroup<Child>) -> Void
    ) where Narrowing.Parent == Context, Narrowing.Child == Child {
        var inner = RouteGroup<Child>(prefix: prefix)
        body(&inner)
        for route in inner.routes {
            let ended = route.ended.map { ended in { @Sendable (context: Context, outcome: RequestOutcome) in ended(narrowing.narrow(context), outcome) } }
            adopt(route.method, route.pattern, Self.widen(route.respond, narrowing), ended)
        }
    }

    /// A route of a nested group, inside this group's middleware (their ends after its own).
    @inlinable mutating func adopt(
        _ method: String, _ pattern: String, _ respond: @escaping Handler<Context>, _ ended: (@Sendable (Context, RequestOutcome) -> Void)?
    ) {
        let outerEnds = ends
        let both: (@Sendable (Context, RequestOutcome) -> Void)?
        switch (ended, outerEnds) {
        case (nil, let only), (let only, nil): both = only
        case (let inner?, let outer?):
            both = { context, outcome in
                inner(context, outcome)
                outer(context, outcome)
            }
        }
        routes.append(Route(method: method, pattern: pattern, respond: wrap?(respond) ?? respond, ended: both))
    }

    /// A child context's handler as a handler of its parent's: the child is made on the loop,
    /// and the parent it carries comes back out of it now, when deferred work ends, and into a
    /// stream's body (which gets the child as the handler left it).
    @inlinable static func widen<Narrowing: ContextNarrowing>(_ handler: @escaping Handler<Narrowing.Child>, _ narrowing: Narrowing) -> Handler<Context>
    where Narrowing.Parent == Context {
        { context in
            var child = narrowing.narrow(consume context)
            let result = handler(&child)
            switch consume result {
            case .response(let response):
                context = child.intoParent()
                return .response(response)
            case .deferred(let work):
                let left = child
                context = child.intoParent()
                return .deferred { parent in
                    var child = left
                    child.parent = parent
                    let response = await work(&child)
                    parent = child.intoParent()
                    return response
                }
            case .stream(let head, let open):
                let left = child
                context = child.intoParent()
                return .stream(head) { stream, parent in
                    var child = left
                    child.parent = parent
                    await open(stream, child)
                }
            }
        }
    }

    /// `prefix` and `pattern` as one path: one slash between, a leading one, none trailing
    /// (`"/members"` + `":id"` is `/members/:id`; an empty pattern is the prefix itself).
    @inlinable static func join(_ prefix: String, _ pattern: String) -> String {
        let parts = (prefix.split(separator: "/") + pattern.split(separator: "/")).map(String.init)
        guard !parts.isEmpty else { return pattern.isEmpty ? (prefix.isEmpty ? "/" : prefix) : pattern }
        return "/" + parts.joined(separator: "/")
    }
}
