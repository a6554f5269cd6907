import Primitives

/// The application's state for one request, of a type it defines (Hummingbird 2's model):
/// the server's part is its `core`; the rest (who the client is, fields for the access log …)
/// is typed fields of the application's own, which its middleware and handlers fill in.
/// Handlers get it `inout`; deferred work gets it back and hands it on, so what the work
/// learned reaches the middleware that see the response's end.
public protocol RequestContext: Sendable {
    var core: CoreRequestContext { get }
}

/// The context a router runs over: the one made for each request the server parsed (or a
/// test made). Groups may narrow it for their routes (`ChildRequestContext`). Its `init` only
/// stores: the router also makes one as a placeholder while a narrower context holds the real
/// one (`Router.widen`).
public protocol RootRequestContext: RequestContext {
    init(core: CoreRequestContext)
}

/// A narrower context a route group gives its routes (`RouteGroup.group(context:)`): its
/// parent's, plus what a narrowing learned, as typed fields that are not optional (who the
/// client is, where a quota applies). It carries its parent and hands it back, with what the
/// routes wrote into it, to the middleware outside the group.
public protocol ChildRequestContext: RequestContext {
    associatedtype Parent: RequestContext
    var parent: Parent { get set }
}

extension ChildRequestContext {
    @inlinable public var core: CoreRequestContext { parent.core }

    /// The parent, with what the routes wrote into it, moved out of a child that is done.
    @inlinable public consuming func intoParent() -> Parent { parent }
}

/// What makes a group's narrower context from its parent's (Hummingbird's
/// `ChildRequestContext.init(context:)`), after the middleware outside the group ran. A type,
/// not a closure, so a route's narrowing is specialised into its call; pure: a child group's
/// middleware see a request's end through the context narrowed again.
public protocol ContextNarrowing<Parent, Child>: Sendable {
    associatedtype Parent: RequestContext
    associatedtype Child: ChildRequestContext where Child.Parent == Parent
    func narrow(_ context: consuming Parent) -> Child
}

// The server's fields, read through the context: inlinable, so reading one costs what a stored
// field does once the application's code is specialized for its context.
extension RequestContext {
    @inlinable public var request: Request { core.request }
    @inlinable public var requestID: String { core.requestID }
    @inlinable public var peer: IPAddress? { core.peer }
    @inlinable public var route: String { core.route }
    @inlinable public var pathParameters: [String: String] { core.pathParameters }
    @inlinable public var receivedAt: Double { core.receivedAt }
}

/// A context with nothing of the application's: for servers that keep no state per request
/// (the fixture upstream, tests).
public struct BasicRequestContext: RootRequestContext {
    public let core: CoreRequestContext
    public init(core: CoreRequestContext) { self.core = core }
}
