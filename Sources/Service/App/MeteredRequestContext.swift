import HTTPServer
import Primitives

/// The context of the routes an upstream declares, the only ones that can cost one: the
/// application's (`parent`), plus how clients are told apart and their costly work metered,
/// which is always there (the router's metered group makes it: `ClientMetering.narrow`).
/// A route outside that group has no identity to read, so none can run a quota-less miss.
struct MeteredRequestContext: ChildRequestContext {
    var parent: AppRequestContext
    let identity: any ClientIdentity

    /// The client once worked out (`identifyClient`); nil before, or in process (no peer).
    var client: IPAddress? { parent.client }
    var logFields: [(String, String)] {
        get { parent.logFields }
        _modify { yield &parent.logFields }
    }
    /// The request's trace and span, sampled as decided.
    var trace: TraceContext { parent.trace }
    var deadline: Double? {
        get { parent.deadline }
        _modify { yield &parent.deadline }
    }

    /// Works out who the client is, once (a request about to cost the upstream); the access
    /// log and the span read it from the parent.
    mutating func identifyClient() {
        if parent.client == nil { parent.client = identity.client(of: parent) }
    }

    /// This request went to the upstream (a miss): counted where misses are watched
    /// (forwarding from a peer outside `TRUSTED_PROXIES`).
    func noteMiss() { identity.noteMiss(parent) }
}

/// The handlers of the routes upstreams declare.
typealias MeteredHandler = Handler<MeteredRequestContext>
typealias MeteredResult = HandlerResult<MeteredRequestContext>
