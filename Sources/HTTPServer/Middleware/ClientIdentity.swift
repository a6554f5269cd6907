import Primitives

/// How the application tells clients apart (behind trusted proxies …) and meters each one's
/// work that costs more than a cached answer (an upstream fetch). A middleware puts it on the
/// context; a handler asks it only when such work may follow, so an answer from the hot path
/// never pays for working out who the client is.
public protocol ClientIdentity: Sendable {
    /// Who the request's client is; no side effects (asked before it is known whether the
    /// request will cost the upstream).
    func client(of context: RequestContext) -> IPAddress?
    /// Once for a request that went to the upstream (started or joined a fetch, or was refused
    /// one): where the application checks how such requests reach it.
    func noteMiss(_ context: RequestContext)
    /// Takes `cost` units of `client`'s allowance: nil when admitted (or unmetered), else
    /// seconds until it may retry.
    func admit(_ client: IPAddress, cost: Double) -> Double?
    /// Gives back what `admit` took for work that turned out to cost nothing.
    func refund(_ client: IPAddress, cost: Double)
    /// The units a client may spend at once (a full allowance); nil: unmetered.
    var allowance: Double? { get }
}

extension ClientIdentity {
    /// One unit: one request's upstream fetch.
    public func admit(_ client: IPAddress) -> Double? { admit(client, cost: 1) }
    public func refund(_ client: IPAddress) { refund(client, cost: 1) }
}
