import HTTPServer
import Primitives

/// Client identity (`TRUSTED_PROXIES`) and the miss quota (`CLIENT_MISS_RATE_PER_MIN`): on the
/// routes that can cost an upstream only (the catalog's, a router group over
/// `MeteredRequestContext` that `narrow` makes), asked by the route only when the request is
/// about to cost the upstream. Who the client is then
/// decides its place in the upstream's fair queue and, with the quota on, charges it (starting
/// a fetch; joining one in flight is free). An answer from the hot path never resolves its
/// client, only a miss is checked for untrusted forwarding, and a request no upstream can
/// answer (a 404, `/healthz`) never meets this.
final class ClientMetering: ClientIdentity, ContextNarrowing {
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

    /// The context of a route that can cost an upstream: this metering, always there.
    func narrow(_ context: consuming AppRequestContext) -> MeteredRequestContext { MeteredRequestContext(parent: context, identity: self) }

    func client(of context: AppRequestContext) -> IPAddress? { resolver.client(peer: context.peer, headers: context.request.headers) }

    func noteMiss(_ context: AppRequestContext) {
        untrustedForwarding?.check(peer: context.peer, headers: context.request.headers, trusted: resolver.trusted, now: clock())
    }

    func admit(_ client: IPAddress, cost: Double) -> Double? { limiter?.admit(ClientResolver.key(client), now: clock(), cost: cost) }

    func refund(_ client: IPAddress, cost: Double) { limiter?.refund(ClientResolver.key(client), cost: cost) }

    var allowance: Double? { limiter?.burst }
}
