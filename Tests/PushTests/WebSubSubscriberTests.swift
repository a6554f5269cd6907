import Feeds
import Glibc
import HTTPServer
import Primitives
import ResponseCache
import Testing
import TestSupport
import Upstream

@testable import Push

/// Issue 58: the life of a WebSub subscription, against a loopback hub and a clock the test
/// moves: asked once, renewed at four fifths of the lease, asked again after a refusal only
/// once the retry time passed, moved when the feed names another hub, ended a grace period
/// after nobody watches.
@Suite(.offPool) struct WebSubSubscriberTests {
    final class Hub: Sendable {
        let server: Server
        let forms = Locked<[(path: String, form: [String: String])]>([])
        let status = Locked(202)

        init() throws {
            var router = Router<BasicRequestContext>()
            let forms = self.forms, status = self.status
            for path in ["/hub", "/other-hub"] {
                router.add("POST", path) { context in
                    var form: [String: String] = [:]
                    for (name, value) in context.request.formItems { form[name] = value }
                    forms.withLock { $0.append((path, form)) }
                    return .response(Response(status: status.withLock { $0 }))
                }
            }
            // A hub that moved: its new address in a 308 (relative, as Location may be).
            router.add("POST", "/moved-hub") { context in
                forms.withLock { $0.append(("/moved-hub", [:])) }
                var response = Response(status: 308)
                response.headers.add("Location", "/hub")
                return .response(response)
            }
            server = try startTestServer(router) { $0.drainTimeout = 0.5 }
        }

        func url(_ path: String = "/hub") -> String { "http://127.0.0.1:\(server.port)\(path)" }
        var count: Int { forms.withLock { $0.count } }
        func last(_ n: Int) -> [(path: String, form: [String: String])] { forms.withLock { Array($0.suffix(n)) } }
    }

    static func store(_ cache: ResponseCache, id: Int, hub: String, at time: Double) throws {
        let xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Show</title><item><guid>a</guid></item></channel></rss>"#
        let blob = try EpisodeFeedData.build(
            feed: Array(xml.utf8), contentType: nil, lookupTitle: nil, base: nil, maxBytes: 1 << 20,
            hints: PublisherHints(hub: hub, topic: "https://feeds.example/\(id).xml"))
        cache.store(
            CachedResponse(Representation(blob), storedAt: time, policy: FreshnessPolicy(ttl: 1e7, staleWhileRevalidate: 0, staleIfError: 0)),
            for: EpisodesAdapter.dataKey(id))
    }

    /// A hub that answers 307/308 is asked again at its new address, once, with the same form.
    @Test func aMovedHubIsAskedAtItsNewAddress() async throws {
        try await offPool {
            let hub = try Hub()
            defer { hub.server.shutdown() }
            let cache = ResponseCache(maxBytes: 16 << 20, clock: { 1000 })
            try Self.store(cache, id: 9, hub: hub.url("/moved-hub"), at: 1000)
            let subscriber = WebSubSubscriber(
                settings: WebSubSubscriber.Settings(publicBaseURL: "https://fp.example/", key: "k", lease: 1000, allowPrivateHosts: true),
                upstream: try UpstreamClient(configuration: UpstreamConfiguration()), cache: cache)
            subscriber.maintain(watched: [9], now: 1000)
            #expect(waitUntil { subscriber.counters.accepted.current == 1 })
            #expect(hub.last(2).map(\.path) == ["/moved-hub", "/hub"])
            #expect(hub.last(1).first?.form["hub.mode"] == "subscribe" && subscriber.counters.refused.current == 0)
        }
    }

    @Test func aSubscriptionIsRenewedRetriedMovedAndEnded() async throws {
        try await offPool {
            let hub = try Hub()
            defer { hub.server.shutdown() }
            let now = Locked(1000.0)
            let cache = ResponseCache(maxBytes: 16 << 20, clock: { now.withLock { $0 } })
            try Self.store(cache, id: 7, hub: hub.url(), at: 1000)
            let subscriber = WebSubSubscriber(
                settings: WebSubSubscriber.Settings(publicBaseURL: "https://fp.example/", key: "k", lease: 1000, allowPrivateHosts: true),
                upstream: try UpstreamClient(configuration: UpstreamConfiguration()), cache: cache)
            func pass(at t: Double, watching: Set<Int> = [7]) { subscriber.maintain(watched: watching, now: t) }

            pass(at: 1000)
            #expect(waitUntil { hub.count == 1 })
            let asked = hub.last(1).first?.form ?? [:]
            #expect(asked["hub.mode"] == "subscribe" && asked["hub.topic"] == "https://feeds.example/7.xml" && asked["hub.lease_seconds"] == "1000")
            #expect(asked["hub.callback"] == "https://fp.example/hub/websub?podcast=7&token=\(subscriber.token(7))")
            #expect(asked["hub.secret"] == subscriber.secret(7) && subscriber.secret(7) != subscriber.secret(8))
            usleep(100_000)
            #expect(!subscriber.holds(7, now: 1000), "the hub's 202 only says it will verify")
            // The hub verifies, granting less than was asked: held for that, renewed before it ends.
            subscriber.verified(7, topic: "https://feeds.example/7.xml", lease: 500, now: 1000)
            #expect(subscriber.holds(7, now: 1000), "verified: polling only backs it up")
            #expect(!subscriber.holds(7, now: 1501), "past the lease granted")
            pass(at: 1300)
            pass(at: 1390)
            usleep(100_000)
            #expect(hub.count == 1, "not again before four fifths of the lease granted")
            pass(at: 1401)
            #expect(waitUntil { hub.count == 2 }, "renewed")

            // The hub refuses: asked again only after a tenth of the lease.
            hub.status.withLock { $0 = 503 }
            pass(at: 2602)
            #expect(waitUntil { hub.count == 3 && subscriber.counters.refused.current == 1 })
            #expect(!subscriber.holds(7, now: 2602))
            pass(at: 2605)
            pass(at: 2690)
            usleep(100_000)
            #expect(hub.count == 3, "not before the retry time")
            hub.status.withLock { $0 = 202 }
            pass(at: 2703)
            #expect(waitUntil { hub.count == 4 })

            // The feed names another hub: unsubscribed from the old one, subscribed at the new one.
            try Self.store(cache, id: 7, hub: hub.url("/other-hub"), at: 2710)
            pass(at: 2710)
            #expect(waitUntil { hub.count == 6 })
            let moved = hub.last(2).map { "\($0.path) \($0.form["hub.mode"] ?? "")" }.sorted()
            #expect(moved == ["/hub unsubscribe", "/other-hub subscribe"], "\(moved)")

            // Nobody watches: ended after the grace (a tenth of the lease), not before.
            pass(at: 2720, watching: [])
            pass(at: 2800, watching: [])
            usleep(100_000)
            #expect(hub.count == 6)
            pass(at: 2821, watching: [])
            #expect(waitUntil { hub.count == 7 })
            #expect(hub.last(1).first.map { "\($0.path) \($0.form["hub.mode"] ?? "")" } == "/other-hub unsubscribe")
            #expect(subscriber.subscriptionCount == 0)
        }
    }
}
