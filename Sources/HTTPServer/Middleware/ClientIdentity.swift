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
    /// Takes one unit of `client`'s allowance: nil when admitted (or unmetered), else seconds
    /// until it may retry.
    func admit(_ client: IPAddress) -> Double?
    /// Gives back a unit `admit` took for work that turned out to cost nothing.
    func refund(_ client: IPAddress)
}
