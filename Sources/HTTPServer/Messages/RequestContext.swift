import Primitives

/// The application's state for one request, of a type it defines (Hummingbird 2's model):
/// the server's part is its `core`; the rest (who the client is, fields for the access log …)
/// is typed fields of the application's own, which its middleware and handlers fill in.
/// Handlers get it `inout`; deferred work gets it back and hands it on, so what the work
/// learned reaches the middleware that see the response's end.
public protocol RequestContext: Sendable {
    /// A context for a request the server has just parsed (or a test made).
    init(core: CoreRequestContext)
    var core: CoreRequestContext { get }
}

// The server's fields, read through the context: inlinable, so reading one costs what a stored
// field does once the application's code is specialized for its context.
extension RequestContext {
    @inlinable public var request: Request { core.request }
    @inlinable public var requestID: String { core.requestID }
    /// Set only in a middleware's `handle`, on the loop (see `CoreRequestContext`).
    @inlinable public var trace: TraceContext {
        get { core.trace }
        nonmutating set { core.trace = newValue }
    }
    @inlinable public var peer: IPAddress? { core.peer }
    @inlinable public var route: String { core.route }
    @inlinable public var pathParameters: [String: String] { core.pathParameters }
    @inlinable public var receivedAt: Double { core.receivedAt }
}

/// A context with nothing of the application's: for servers that keep no state per request
/// (the fixture upstream, tests).
public struct BasicRequestContext: RequestContext {
    public let core: CoreRequestContext
    public init(core: CoreRequestContext) { self.core = core }
}
