import HTTPServer
import Primitives
@testable import HTTPServer
@testable import Service

extension MeteredRequestContext {
    /// Client identity and the quota as a default configuration has them (no quota, no trusted
    /// proxy): the real metering, for routes driven without a router.
    static let unmetered = ClientMetering(
        resolver: ClientResolver(trusted: Configuration().trustedProxies), limiter: nil, untrustedForwarding: nil, clock: { NativeThread.monotonicSeconds() })

    /// A request built in process for a route an upstream declares, not routed.
    static func make(
        method: String = "GET", target: String, headers: [(String, String)] = [], body: [UInt8] = [], peer: IPAddress? = nil,
        pathParameters: [String: String] = [:]
    ) -> MeteredRequestContext {
        unmetered.narrow(.make(method: method, target: target, headers: headers, body: body, peer: peer, pathParameters: pathParameters))
    }
}

extension DeclaredHandler {
    /// The handler as the router runs it, over the application's context: a metered one inside
    /// the narrowing the router's metered group does.
    func served(_ services: Services) -> AppHandler {
        switch self {
        case .open(let handler): return handler
        case .metered(let handler): return RouteGroup<AppRequestContext>.widen(handler, services.clients)
        }
    }
}
