import Primitives

/// How FeedProxy tells clients apart (behind trusted proxies …) and meters each one's work
/// that costs more than a cached answer (an upstream fetch). A middleware puts it on the
/// context of the routes that can cost an upstream; a handler asks it only when such work may
/// follow, so an answer from the hot path never pays for working out who the client is.
protocol ClientIdentity: AnyObject, Sendable {
    /// Who the request's client is; no side effects (asked before it is known whether the
    /// request will cost the upstream).
    func client(of context: AppRequestContext) -> IPAddress?
    /// Once for a request that went to the upstream (started or joined a fetch, or was refused
    /// one): where the application checks how such requests reach it.
    func noteMiss(_ context: AppRequestContext)
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
    func admit(_ client: IPAddress) -> Double? { admit(client, cost: 1) }
    func refund(_ client: IPAddress) { refund(client, cost: 1) }
}
