import Foundation
import HTTPServer
import Primitives
import Testing
import TestSupport

/// Issue 58: WebSub through the real binary. The fixture feeds name a hub (their `Link`
/// header); this test is the hub: it records what FeedProxy asks of it and calls back as a hub
/// does (verification of intent, signed and forged notifications).
extension LibraryEventsEndToEndTests {
    /// A hub that takes (un)subscription requests and keeps their forms.
    final class FixtureHub: Sendable {
        let server: Server
        private let forms = Locked<[[String: String]]>([])

        init() throws {
            var router = Router<BasicRequestContext>()
            let forms = self.forms
            router.add("POST", "/hub") { context in
                var form: [String: String] = [:]
                for (name, value) in context.request.formItems { form[name] = value }
                forms.withLock { $0.append(form) }
                return .response(Response(status: 202))
            }
            server = try startTestServer(router) { $0.drainTimeout = 0.5 }
        }

        var url: String { "http://127.0.0.1:\(server.port)/hub" }
        func requests(_ mode: String) -> [[String: String]] { forms.withLock { $0.filter { $0["hub.mode"] == mode } } }
    }

    static func formEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    /// A watched feed that names a hub is subscribed to (callback under PUBLIC_BASE_URL, a
    /// secret, the lease); the hub's verification is answered for that topic only; a forged
    /// notification reads nothing, a signed one brings the new episode to the stream at once;
    /// when nobody watches any more, the subscription ends (and its verification is confirmed).
    @Test func aWebSubHubIsSubscribedToAndOnlyItsSignedNotificationsAreHeard() async throws {
        try await offPool {
            let hub = try FixtureHub()
            defer { hub.server.shutdown() }
            let base = "https://feeds.example"
            let h = try Harness(environment: [
                "ALLOW_PRIVATE_FEED_HOSTS": "true", "WEBSUB_KEY": "websub-test-key", "PUBLIC_BASE_URL": base, "WEBSUB_LEASE_S": "60",
            ])
            h.upstream.setWebSubHub(hub.url)
            let id = 1_590_000_021
            let stream = try EventStream(h, "podcasts=\(id)&limit=5")
            #expect(!Self.items(try stream.episodes().json).isEmpty)
            #expect(waitUntil(20) { !hub.requests("subscribe").isEmpty }, "the watched feed's hub is asked")
            let form = hub.requests("subscribe").first ?? [:]
            let topic = form["hub.topic"] ?? "", callback = form["hub.callback"] ?? "", secret = form["hub.secret"] ?? ""
            #expect(topic.hasSuffix("/rss/library-\(id).xml"), "\(form)")
            #expect(callback.hasPrefix(base + "/hub/websub?podcast=\(id)&token="), "\(form)")
            #expect(secret.utf8.count == 64 && form["hub.lease_seconds"] == "60", "\(form)")
            let target = String(callback.dropFirst(base.count))

            // Verification of intent: the challenge for this topic, nothing for another, or for a callback not ours.
            let verify = try h.get(target + "&hub.mode=subscribe&hub.topic=\(Self.formEncoded(topic))&hub.challenge=c-42&hub.lease_seconds=60")
            #expect(verify.status == 200 && verify.text == "c-42", "\(verify.status) \(verify.text)")
            let spaced = try h.get(target + "&hub.mode=subscribe&hub.topic=\(Self.formEncoded(topic))&hub.challenge=a%20b%C3%A9&hub.lease_seconds=60")
            #expect(spaced.status == 200 && spaced.text == "a bé", "any text is echoed as sent")
            #expect(try h.get(target + "&hub.mode=subscribe&hub.topic=http%3A%2F%2Fevil.example%2F&hub.challenge=x").status == 404)
            let forgedToken = "/hub/websub?podcast=\(id)&token=" + String(repeating: "0", count: 32)
            #expect(try h.get(forgedToken + "&hub.mode=subscribe&hub.topic=\(Self.formEncoded(topic))&hub.challenge=x").status == 404)
            #expect(try h.get(target + "&hub.mode=unsubscribe&hub.topic=\(Self.formEncoded(topic))&hub.challenge=x").status == 404, "still watched")
            let oldTopic = Self.formEncoded("https://feeds.example/moved-away.xml")
            #expect(try h.get(target + "&hub.mode=unsubscribe&hub.topic=\(oldTopic)&hub.challenge=old").text == "old", "a topic no longer watched ends")

            // A new episode; a forged notification reads nothing, a signed one reads the feed once.
            let downloads = h.upstream.requestCount(for: "rss")
            #expect(h.upstream.publish(podcast: id, at: Int(Date().timeIntervalSince1970)))
            let body = Array("<rss version=\"2.0\"><channel><title>changed</title></channel></rss>".utf8)
            let forged = try h.post(
                target, body: body, type: "application/rss+xml", headers: ["X-Hub-Signature: sha256=" + String(repeating: "ab", count: 32)])
            #expect(forged.status == 202)
            let unsigned = try h.post(target, body: body, type: "application/rss+xml")
            #expect(unsigned.status == 202)
            #expect(h.upstream.requestCount(for: "rss") == downloads, "a forged or unsigned notification reads nothing")
            let signature = HubSignature.hex(HMACSHA256(key: Array(secret.utf8)).mac(body))
            let signed = try h.post(target, body: body, type: "application/rss+xml", headers: ["X-Hub-Signature: sha256=\(signature)"])
            #expect(signed.status == 202)
            let event = try stream.episodes()
            #expect(Self.items(event.json).count == 1, "\(event.json)")
            #expect(h.upstream.requestCount(for: "rss") == downloads + 1)
            let metrics = try h.get("/metrics").text
            #expect(metrics.contains("feedproxy_websub_notifications_total{signature=\"valid\"} 1"))
            #expect(metrics.contains("feedproxy_websub_notifications_total{signature=\"invalid\"} 2"))
            #expect(metrics.contains("feedproxy_websub_subscriptions 1"))

            // Nobody watches: unsubscribed after the grace (a tenth of the lease), and that is confirmed.
            stream.client.close()
            #expect(waitUntil(30) { !hub.requests("unsubscribe").isEmpty }, "the subscription ends with the last stream")
            #expect(hub.requests("unsubscribe").first?["hub.callback"] == callback)
            let bye = try h.get(target + "&hub.mode=unsubscribe&hub.topic=\(Self.formEncoded(topic))&hub.challenge=bye")
            #expect(bye.status == 200 && bye.text == "bye")
        }
    }
}

extension LibraryEventsEndToEndTests {
    /// Behind a balancer the hub's calls land on any replica: one that never watched the feed
    /// confirms the subscription another asked for and refuses its unsubscription while that
    /// one watches (its watch mark in Redis), checks a notification's signature with the same
    /// key, and the feed it reads reaches the stream on the other replica.
    @Test func aHubsCallsAreAnsweredByAnyReplica() async throws {
        try await offPool {
            let hub = try FixtureHub()
            defer { hub.server.shutdown() }
            let redis = try RedisServerProcess()
            let base = "https://feeds.example"
            let shared = [
                "REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "ALLOW_PRIVATE_FEED_HOSTS": "true", "WEBSUB_KEY": "websub-test-key",
                "PUBLIC_BASE_URL": base,
            ]
            let a = try Harness(environment: shared)
            a.upstream.setWebSubHub(hub.url)
            let b = try FeedProxyProcess(
                environment: Harness.upstreamEnvironment(a.upstream).merging(shared.merging(["CLIENT_MISS_RATE_PER_MIN": "0"]) { $1 }) { $1 })
            defer { _ = b.stop() }
            let id = 1_590_000_031
            let stream = try EventStream(a, "podcasts=\(id)&limit=5")
            _ = try stream.episodes()
            #expect(waitUntil { a.sharedStores >= 1 })
            #expect(waitUntil(20) { !hub.requests("subscribe").isEmpty })
            let form = hub.requests("subscribe").first ?? [:]
            let topic = form["hub.topic"] ?? "", secret = form["hub.secret"] ?? ""
            let target = String((form["hub.callback"] ?? "").dropFirst(base.count))

            let verify = try RawClient.get(
                port: b.port, target + "&hub.mode=subscribe&hub.topic=\(Self.formEncoded(topic))&hub.challenge=from-b&hub.lease_seconds=86400")
            #expect(verify.status == 200 && verify.text == "from-b", "\(verify.status) \(verify.text)")
            let unsubscribe = target + "&hub.mode=unsubscribe&hub.topic=\(Self.formEncoded(topic))&hub.challenge=not-yet"
            #expect(try RawClient.get(port: b.port, unsubscribe).status == 404, "replica A still watches it (its mark in Redis)")

            #expect(a.upstream.publish(podcast: id, at: Int(Date().timeIntervalSince1970)))
            let body = Array("<rss/>".utf8)
            let signature = HubSignature.hex(HMACSHA256(key: Array(secret.utf8)).mac(body))
            let c = try RawClient(port: b.port, timeout: 5)
            try c.send(
                "POST \(target) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/rss+xml\r\nContent-Length: \(body.count)\r\n"
                    + "X-Hub-Signature: sha256=\(signature)\r\n\r\n")
            try c.send(body)
            #expect(try c.readResponse().status == 202)
            let event = try stream.episodes()
            #expect(Self.items(event.json).count == 1, "\(event.json)")
        }
    }

    /// Issue 67: one replica stopping to watch a feed does not end the subscription another
    /// still relies on (they share one callback): it keeps it (its unsubscription is not sent)
    /// while the other's watch mark lives; the last replica to stop ends it, once.
    @Test func aSubscriptionAnotherReplicaReliesOnIsNotEnded() async throws {
        try await offPool {
            let hub = try FixtureHub()
            defer { hub.server.shutdown() }
            let redis = try RedisServerProcess()
            // A one-minute lease: a 6 s grace after the last stream, watch marks of 3 s.
            let shared = [
                "REDIS_URL": redis.url, "REDIS_TIMEOUT_MS": "2000", "ALLOW_PRIVATE_FEED_HOSTS": "true", "WEBSUB_KEY": "websub-test-key",
                "PUBLIC_BASE_URL": "https://feeds.example", "WEBSUB_LEASE_S": "60",
            ]
            let a = try Harness(environment: shared)
            a.upstream.setWebSubHub(hub.url)
            let b = try FeedProxyProcess(
                environment: Harness.upstreamEnvironment(a.upstream).merging(shared.merging(["CLIENT_MISS_RATE_PER_MIN": "0"]) { $1 }) { $1 })
            defer { _ = b.stop() }
            let id = 1_590_000_034
            let onA = try EventStream(a, "podcasts=\(id)&limit=5")
            _ = try onA.episodes()
            let onB = try EventStream(port: b.port, "podcasts=\(id)&limit=5")
            _ = try onB.episodes()
            #expect(waitUntil(20) { hub.requests("subscribe").count >= 2 }, "each replica watching it asks (a renewal for the hub)")
            func kept() -> Int {
                let text = (try? RawClient.get(port: b.port, "/metrics").text) ?? ""
                let line = text.split(separator: "\n").first { $0.hasPrefix("feedproxy_websub_unsubscribes_kept_total ") }
                return Int(line?.split(separator: " ").last ?? "") ?? -1
            }
            // B's stream goes: past its grace, B keeps the subscription for A instead of ending it.
            onB.client.close()
            #expect(waitUntil(30) { kept() >= 1 }, "B let the subscription go without asking the hub to end it")
            #expect(hub.requests("unsubscribe").isEmpty, "A still relies on it: \(hub.requests("unsubscribe"))")
            // A's goes too: A, the last, ends it.
            onA.client.close()
            #expect(waitUntil(30) { !hub.requests("unsubscribe").isEmpty }, "the subscription ends with the last replica's stream")
            usleep(500_000)
            #expect(hub.requests("unsubscribe").count == 1)
        }
    }
}
