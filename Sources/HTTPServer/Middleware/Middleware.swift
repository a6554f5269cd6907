/// Cross-cutting work the application composes around every request (CORS, client identity
/// and quota, tracing, metrics, the access log), each in its own type. A middleware says
/// which phases it takes part in, so a phase nobody needs costs nothing per request.
/// Class-bound: the chain calls each through a plain reference, with no boxed existential to project.
public protocol Middleware: AnyObject, Sendable {
    var phases: MiddlewarePhases { get }
    /// After routing, before the handler: may fill in the context, or answer instead (the
    /// handler is then not called).
    func prepare(_ context: inout RequestContext) -> Response?
    /// Header lines (`Name: value\r\n` …) to send with the response, rendered once where
    /// they do not vary: the writer appends them as they are.
    func headerLines(for response: Response, in context: RequestContext) -> [UInt8]
    /// Once the response is written, or the client left before it (`499`). The context is
    /// lent, not copied: what the handler and the other middleware left in it.
    func completed(_ context: RequestContext, _ outcome: RequestOutcome)
}

public struct MiddlewarePhases: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let prepare = MiddlewarePhases(rawValue: 1)
    public static let headerLines = MiddlewarePhases(rawValue: 2)
    public static let completed = MiddlewarePhases(rawValue: 4)
}

extension Middleware {
    public func prepare(_ context: inout RequestContext) -> Response? { nil }
    public func headerLines(for response: Response, in context: RequestContext) -> [UInt8] { [] }
    public func completed(_ context: RequestContext, _ outcome: RequestOutcome) {}
}
