import Observability
/// Client identity and the miss quota.
struct ClientGauges: MetricsPart {
    var tracked = 0
    var untrustedForwarded = 0

    init(tracked: Int = 0, untrustedForwarded: Int = 0) {
        self.tracked = tracked
        self.untrustedForwarded = untrustedForwarded
    }

    init(_ clients: ClientMetering) {
        self.init(tracked: clients.limiter?.trackedClients ?? 0, untrustedForwarded: clients.untrustedForwarding?.count ?? 0)
    }

    func render(into out: inout String) {
        MetricsText.single("feedproxy_clients_tracked", "gauge", "Clients whose miss quota is held in memory.", tracked, into: &out)
        MetricsText.single(
            "feedproxy_untrusted_forwarded_for_total", "counter",
            "Misses carrying X-Forwarded-For from a peer outside TRUSTED_PROXIES while the per-client quota is on (a proxy FeedProxy does not trust).",
            untrustedForwarded, into: &out)
    }
}
