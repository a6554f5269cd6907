import HTTPServer
import Primitives

/// Client identity (`TRUSTED_PROXIES`) and the miss quota (`CLIENT_MISS_RATE_PER_MIN`): put on
/// every request's context, asked by a route only when the request is about to cost the
/// upstream. Who the client is then decides its place in the upstream's fair queue and, with
/// the quota on, charges it (starting a fetch; joining one in flight is free). An answer from
/// the hot path never resolves its client, and only a miss is checked for untrusted forwarding.
final class ClientIdentityMiddleware: Middleware, ClientIdentity {
    let phases: MiddlewarePhases = .prepare
    let resolver: ClientResolver
    /// nil when `CLIENT_MISS_RATE_PER_MIN` is 0.
    let limiter: ClientLimiter?
    /// With the quota on: counts and logs forwarded requests from peers outside `TRUSTED_PROXIES`.
    let untrustedForwarding: UntrustedForwarding?
    private let clock: @Sendable () -> Double

    init(resolver: ClientResolver, limiter: ClientLimiter?, untrustedForwarding: UntrustedForwarding?, clock: @escaping @Sendable () -> Double) {
        self.resolver = resolver
        self.limiter = limiter
        self.untrustedForwarding = untrustedForwarding
        self.clock = clock
    }

    func prepare(_ context: inout RequestContext) -> Response? {
        context.identity = self
        return nil
    }

    func client(of context: RequestContext) -> IPAddress? { resolver.client(peer: context.peer, headers: context.request.headers) }

    func noteMiss(_ context: RequestContext) {
        untrustedForwarding?.check(peer: context.peer, headers: context.request.headers, trusted: resolver.trusted, now: clock())
    }

    func admit(_ client: IPAddress, cost: Double) -> Double? { limiter?.admit(ClientResolver.key(client), now: clock(), cost: cost) }

    func refund(_ client: IPAddress, cost: Double) { limiter?.refund(ClientResolver.key(client), cost: cost) }

    var allowance: Double? { limiter?.burst }
}

extension RequestContext {
    /// Works out who the client is, once (a request about to cost the upstream): the access
    /// log then takes it from here instead of resolving it again.
    mutating func identifyClient() {
        if client == nil, let identity { client = identity.client(of: self) }
    }

    /// This request went to the upstream (a miss): counted where misses are watched
    /// (forwarding from a peer outside `TRUSTED_PROXIES`).
    func noteMiss() { identity?.noteMiss(self) }
}
