import Push
import Feeds
import HTTPServer
import Primitives

/// `/hub/websub?podcast=&token=`: where WebSub hubs call. A `GET` is a hub verifying intent:
/// the challenge is echoed for a subscription a replica asked for and still wants (the token is
/// the podcast's; another replica's wish is its watch mark in the shared tier) or an
/// unsubscription of a topic no replica watches; anything else is 404. A `POST` is a content notification: its `X-Hub-Signature`
/// (an HMAC of the body under the subscription's secret) is checked, and a valid one reads the
/// feed again at once, as a ping does (the body itself is not used: the feed is read through
/// the same conditional fetch as always). A missing or forged signature changes nothing; it is
/// answered 202 all the same (as WebSub allows), so a forger learns nothing from the answer.
struct WebSubCallbackRoute: Sendable {
    let subscriber: WebSubSubscriber
    let hub: EpisodeEventHub

    /// The route's handler over these services (on only with WebSub: the hub then has its subscriber).
    static func handler(_ s: Services) -> @Sendable (inout MeteredRequestContext) -> MeteredResult {
        guard let subscriber = s.episodeEvents.websub else {
            let off = Response.error(status: 404, code: "not_found", message: "WebSub is off (WEBSUB_KEY and PUBLIC_BASE_URL)")
            return { _ in .response(off) }
        }
        return WebSubCallbackRoute(subscriber: subscriber, hub: s.episodeEvents).handle
    }

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        let request = context.request
        guard let text = request.query("podcast"), text.utf8.count <= 18, let id = Int(text), id > 0, let token = request.query("token"),
            subscriber.validToken(token, for: id)
        else { return .response(.error(status: 404, code: "not_found", message: "no subscription has this callback")) }
        return request.method == "POST" ? notification(request, id: id) : verification(request, id: id)
    }

    private func verification(_ request: Request, id: Int) -> MeteredResult {
        let mode = request.query("hub.mode"), topic = request.query("hub.topic") ?? ""
        if mode == "denied" {
            subscriber.denied(id, now: hub.clock())
            return .response(Self.plain("", status: 200))
        }
        // Echoed as the hub sent it (any text); control characters and a runaway length are not a challenge.
        guard let challenge = request.query("hub.challenge"), !challenge.isEmpty, challenge.utf8.count <= 1024,
            challenge.utf8.allSatisfy({ $0 >= 32 && $0 != 127 })
        else { return .response(.error(status: 400, code: "invalid_parameter", message: "hub.challenge is missing, too long or holds control characters")) }
        let subscriber = self.subscriber, hub = self.hub
        return .deferred { _ in
            let confirmed: Bool
            switch mode {
            case "subscribe":
                // Asked by this replica (held from now for the lease granted), or by another
                // that still watches it (its mark in the shared tier).
                if subscriber.wants(id, topic: topic) {
                    let lease = request.query("hub.lease_seconds").flatMap { $0.utf8.count <= 10 ? Int($0) : nil }
                    subscriber.verified(id, topic: topic, lease: lease, now: hub.clock())
                    confirmed = true
                } else {
                    let wanted = await subscriber.wantedAnywhere(id, topic: topic)
                    confirmed = !topic.isEmpty && wanted
                }
            case "unsubscribe":
                // Not while a stream here, or on another replica, watches the feed at that topic
                // (a feed that moved to another hub or topic has its old subscription ended).
                let here = hub.watches(id) && subscriber.wants(id, topic: topic)
                let elsewhere = await subscriber.watchedElsewhere(id, topic: topic)
                confirmed = !here && !elsewhere
            default:
                return .error(status: 400, code: "invalid_parameter", message: "hub.mode is subscribe, unsubscribe or denied")
            }
            guard confirmed else { return .error(status: 404, code: "not_found", message: "no such subscription is wanted here") }
            subscriber.counters.verified.add()
            return Self.plain(challenge, status: 200)
        }
    }

    private func notification(_ request: Request, id: Int) -> MeteredResult {
        let signed = request.headers["x-hub-signature"].map { HubSignature.valid($0, body: request.body, secret: Array(subscriber.secret(id).utf8)) }
        guard signed == true else {
            subscriber.counters.forged.add()
            return .response(Self.plain("", status: 202))
        }
        subscriber.counters.notifications.add()
        let hub = self.hub
        return .deferred { _ in
            if await hub.knows(id) { _ = hub.ping(id) }
            return Self.plain("", status: 202)
        }
    }

    static func plain(_ text: String, status: Int) -> Response {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/plain; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        headers.add("X-Content-Type-Options", "nosniff")
        return Response(status: status, headers: headers, body: Array(text.utf8))
    }
}
