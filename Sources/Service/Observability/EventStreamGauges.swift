import Observability
import Primitives
import Push

/// The podcast's push: streams, the feeds they watch, the events and reads that keep them
/// told, pings, and WebSub when it is on.
struct EventStreamGauges: MetricsPart {
    let hub: EpisodeEventHub

    func render(into out: inout String) {
        let c = hub.counters
        MetricsText.single("feedproxy_event_streams", "gauge", "Open /episodes/events streams.", hub.streamCount, into: &out)
        MetricsText.single(
            "feedproxy_watched_feeds", "gauge", "Podcasts the open event streams watch (kept warm by background reads).", hub.watchedCount, into: &out)
        MetricsText.single("feedproxy_events_sent_total", "counter", "Episode events sent to event streams.", c.eventsSent, into: &out)
        MetricsText.single(
            "feedproxy_events_composed_total", "counter",
            "Episode events worked out for streams (an event shared by streams at one position counts once).", c.eventsComposed, into: &out)
        MetricsText.single(
            "feedproxy_shared_tier_emptied_total", "counter",
            "Times this replica saw the shared tier (Redis) come back empty and read its watched feeds again.", c.sharedTierEmptied, into: &out)
        MetricsText.single(
            "feedproxy_watch_refreshes_total", "counter", "Background reads of watched feeds started (WATCH_REFRESHES_PER_MIN at most a minute).",
            c.refreshesStarted, into: &out)
        MetricsText.single("feedproxy_pings_total", "counter", "Publishers' pings (/hub/notify) that started a read.", c.pingsHeard, into: &out)
        guard let websub = hub.websub else { return }
        let w = websub.counters
        MetricsText.single(
            "feedproxy_websub_subscriptions", "gauge", "WebSub subscriptions this replica holds (watched feeds that name a hub).",
            websub.subscriptionCount, into: &out)
        MetricsText.family(
            "feedproxy_websub_requests_total", "counter", "Subscribe and unsubscribe requests sent to WebSub hubs, by how they ended.", into: &out)
        out += "feedproxy_websub_requests_total{result=\"accepted\"} \(w.accepted.current)\n"
        out += "feedproxy_websub_requests_total{result=\"refused\"} \(w.refused.current)\n"
        MetricsText.single(
            "feedproxy_websub_unsubscribes_kept_total", "counter", "Unsubscriptions not sent: another replica still watched the feed.",
            w.keptForOthers.current, into: &out)
        MetricsText.single("feedproxy_websub_denied_total", "counter", "Subscriptions a hub denied (hub.mode=denied).", w.denied.current, into: &out)
        MetricsText.single("feedproxy_websub_verifications_total", "counter", "Hubs' verifications of intent confirmed.", w.verified.current, into: &out)
        MetricsText.family("feedproxy_websub_notifications_total", "counter", "Content notifications from hubs, by their signature.", into: &out)
        out += "feedproxy_websub_notifications_total{signature=\"valid\"} \(w.notifications.current)\n"
        out += "feedproxy_websub_notifications_total{signature=\"invalid\"} \(w.forged.current)\n"
    }
}
