import FeedFormats
import Feeds
import Primitives
import ResponseCache
import Upstream

/// WebSub (W3C) for the feeds event streams watch: a watched feed that names a hub (and its
/// own URL, the topic) is subscribed to with a callback under `PUBLIC_BASE_URL`, renewed before
/// its lease ends, and unsubscribed from when no stream here has watched it for a while. The
/// callback's token and each subscription's secret are HMACs of the podcast id under
/// `WEBSUB_KEY`, so every replica sharing the key answers a hub's verification and checks its
/// notifications without any state shared between them; a second replica subscribing the same
/// feed sends the same callback and secret, which a hub takes as a renewal.
package final class WebSubSubscriber: Sendable {
    package struct Settings: Sendable {
        package var publicBaseURL: String
        package var key: String
        /// The lease asked for; renewed at four fifths of it.
        package var lease = 86_400
        package var allowPrivateHosts = false

        package init(publicBaseURL: String, key: String, lease: Int = 86_400, allowPrivateHosts: Bool = false) {
            self.publicBaseURL = publicBaseURL
            self.key = key
            self.lease = lease
            self.allowPrivateHosts = allowPrivateHosts
        }
    }

    private struct Subscription {
        var hub: String
        var topic: String
        var renewAt: Double
        /// Until when the hub's verification of intent (answered here) said it holds the
        /// subscription: its granted lease. A hub's 2xx to the request only means "will verify".
        var verifiedUntil: Double?
        /// Since when no stream here watches it (nil: watched).
        var unwatchedSince: Double?
    }

    private struct State {
        var subscriptions: [Int: Subscription] = [:]
        /// A hub that refused (or denied) a podcast: not asked again before then.
        var retryAt: [Int: Double] = [:]
        var lastPass = 0.0
        /// What each watched feed's data named, by the data's ETag.
        var seen: [Int: Hints] = [:]
        /// When this replica last said in the shared tier that it watches each subscription.
        var markedAt: [Int: Double] = [:]
    }

    private struct Hints {
        let etag: String
        let hub: String?
        let topic: String?
    }

    let settings: Settings
    let upstream: UpstreamClient
    let cache: ResponseCache
    package let counters = WebSubCounters()
    private let tokens: HMACSHA256
    private let state = Locked(State())
    /// This replica, as its watch marks name it.
    private let replica = String(UInt64.random(in: 1...UInt64.max), radix: 16)

    /// Requests to hubs sent at most per pass (a pass every two seconds).
    static let requestsPerPass = 20

    package init(settings: Settings, upstream: UpstreamClient, cache: ResponseCache) {
        self.settings = settings
        self.upstream = upstream
        self.cache = cache
        tokens = HMACSHA256(key: Array(settings.key.utf8))
    }

    /// The callback a hub is given for podcast `id`.
    func callback(_ id: Int) -> String {
        var base = settings.publicBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        return "\(base)/hub/websub?podcast=\(id)&token=\(token(id))"
    }

    func token(_ id: Int) -> String { HubSignature.hex(Array(tokens.mac(Array("websub-callback|\(id)".utf8)).prefix(16))) }
    package func secret(_ id: Int) -> String { HubSignature.hex(tokens.mac(Array("websub-secret|\(id)".utf8))) }

    /// Whether `token` is the one podcast `id`'s callback carries.
    package func validToken(_ token: String, for id: Int) -> Bool {
        HMACSHA256.equal(Array(token.utf8), Array(self.token(id).utf8))
    }

    /// Whether this replica is (or was just) subscribed to podcast `id` at `topic` and still
    /// wants it: a hub's verification of a subscription is confirmed for these only.
    package func wants(_ id: Int, topic: String) -> Bool {
        state.withLock { $0.subscriptions[id].map { $0.topic == topic && $0.unwatchedSince == nil } ?? false }
    }

    /// Whether a hub verified this replica's subscription of podcast `id` and its lease runs
    /// (polling then only backs it up).
    func holds(_ id: Int, now: Double) -> Bool {
        state.withLock { $0.subscriptions[id].map { ($0.verifiedUntil ?? 0) > now && $0.unwatchedSince == nil } ?? false }
    }

    /// A hub verified the subscription of podcast `id` at `topic` here, granting `lease`
    /// seconds: it is held until then, and renewed at four fifths of the lease granted (a hub
    /// may grant less than was asked).
    package func verified(_ id: Int, topic: String, lease: Int?, now: Double) {
        let granted = Double(lease.map { min(max($0, 60), settings.lease) } ?? settings.lease)
        state.withLock { st in
            guard var sub = st.subscriptions[id], sub.topic == topic else { return }
            sub.verifiedUntil = now + granted
            sub.renewAt = min(sub.renewAt, now + granted * 0.8)
            st.subscriptions[id] = sub
        }
    }

    /// A hub said no to podcast `id` (`hub.mode=denied`): not asked again for an hour.
    package func denied(_ id: Int, now: Double) {
        counters.denied.add()
        state.withLock {
            $0.subscriptions[id] = nil
            $0.retryAt[id] = now + 3600
        }
    }

    // MARK: watch marks (what the replicas want, told through the shared tier)

    /// How long after a subscription's last stream the replica lets it go.
    var grace: Double { min(300, Double(settings.lease) / 10) }
    /// A watch mark's life: renewed at a third of it while a stream watches; well within the
    /// grace, so a replica that stopped watching has no live mark when another decides.
    var markLife: Double { max(1, min(120, grace / 2)) }

    static func markKey(_ id: Int) -> String { "websub-watch:\(id)" }

    /// Says in the shared tier (with Redis) that this replica watches podcast `id` at `topic`.
    private func mark(_ id: Int, topic: String) async {
        let policy = FreshnessPolicy(ttl: markLife, staleWhileRevalidate: 0, staleIfError: 0)
        let body = Array("\(replica) \(topic)".utf8)
        await cache.shareAwaited(CachedResponse(body: body, gzippedBody: nil, storedAt: cache.now, policy: policy), for: Self.markKey(id))
    }

    /// The live watch mark of podcast `id`: which replica wrote it last, and its topic.
    private func liveMark(_ id: Int) async -> (replica: Substring, topic: Substring)? {
        guard let entry = await cache.newestAnywhere(Self.markKey(id)), entry.age(at: cache.now) < markLife else { return nil }
        let text = String(decoding: entry.body, as: UTF8.self)
        guard let space = text.firstIndex(of: " ") else { return nil }
        return (text[..<space], text[text.index(after: space)...])
    }

    /// Whether another replica watches podcast `id` at `topic` now.
    package func watchedElsewhere(_ id: Int, topic: String) async -> Bool {
        guard let mark = await liveMark(id) else { return false }
        return mark.replica != replica && mark.topic == topic
    }

    /// Whether any replica asked for podcast `id` at `topic` and still watches it.
    package func wantedAnywhere(_ id: Int, topic: String) async -> Bool {
        if wants(id, topic: topic) { return true }
        return await liveMark(id)?.topic == topic[...]
    }

    /// One look at what the streams watch (called by the event hub's ticker; a pass every two
    /// seconds at most): subscribes what names a hub and is not subscribed (or is due for
    /// renewal), unsubscribes what nobody here has watched for a grace period.
    func maintain(watched: Set<Int>, now: Double) {
        let due = state.withLock { st -> Bool in
            guard now - st.lastPass >= 2 else { return false }
            st.lastPass = now
            return true
        }
        guard due else { return }
        // What each watched feed names (its data as this replica holds it; read again only
        // when the data changed).
        let seen = state.withLock { st in
            st.seen = st.seen.filter { watched.contains($0.key) || st.subscriptions[$0.key] != nil }
            return st.seen
        }
        var named: [Int: (hub: String, topic: String)] = [:]
        var read: [Int: Hints] = [:]
        for id in watched {
            switch cache.lookup(EpisodesAdapter.dataKey(id)) {
            case .fresh(let entry), .stale(let entry):
                var hints = seen[id]
                if hints?.etag != entry.etag {
                    let said = EpisodeFeedData(entry.body)?.hints
                    hints = Hints(etag: entry.etag, hub: said?.hub, topic: said?.topic)
                    read[id] = hints
                }
                if let hub = hints?.hub, let topic = hints?.topic { named[id] = (hub, topic) }
            case .miss: continue
            }
        }
        if !read.isEmpty { state.withLock { $0.seen.merge(read) { $1 } } }
        let grace = self.grace
        let (subscribe, unsubscribe) = state.withLock { st -> ([(Int, String, String)], [(Int, String, String)]) in
            var subscribe: [(Int, String, String)] = [], unsubscribe: [(Int, String, String)] = []
            for (id, var sub) in st.subscriptions {
                if watched.contains(id) {
                    sub.unwatchedSince = nil
                } else if let since = sub.unwatchedSince {
                    if now - since >= grace, unsubscribe.count < Self.requestsPerPass {
                        unsubscribe.append((id, sub.hub, sub.topic))
                        st.subscriptions[id] = nil
                        continue
                    }
                } else {
                    sub.unwatchedSince = now
                }
                st.subscriptions[id] = sub
            }
            for (id, feed) in named.sorted(by: { $0.key < $1.key }) where subscribe.count < Self.requestsPerPass {
                if let retry = st.retryAt[id], now < retry { continue }
                st.retryAt[id] = nil
                if let sub = st.subscriptions[id], sub.hub == feed.hub, sub.topic == feed.topic, now < sub.renewAt { continue }
                // The feed moved to another hub or topic: the old subscription goes.
                if let old = st.subscriptions[id], old.hub != feed.hub || old.topic != feed.topic { unsubscribe.append((id, old.hub, old.topic)) }
                // A renewal keeps the lease verified last until the hub verifies again.
                let verified = st.subscriptions[id].flatMap { $0.hub == feed.hub && $0.topic == feed.topic ? $0.verifiedUntil : nil }
                st.subscriptions[id] = Subscription(
                    hub: feed.hub, topic: feed.topic, renewAt: now + Double(settings.lease) * 0.8, verifiedUntil: verified)
                subscribe.append((id, feed.hub, feed.topic))
            }
            return (subscribe, unsubscribe)
        }
        // Watch marks renewed (a new subscription's is written before the hub is asked).
        let marks = state.withLock { st -> [(Int, String)] in
            st.markedAt = st.markedAt.filter { st.subscriptions[$0.key] != nil }
            let due = st.subscriptions.compactMap { id, sub -> (Int, String)? in
                guard sub.unwatchedSince == nil, let at = st.markedAt[id], now - at >= markLife / 3 else { return nil }
                return (id, sub.topic)
            }
            for (id, _) in due + subscribe.map({ ($0.0, $0.2) }) { st.markedAt[id] = now }
            return due
        }
        if !marks.isEmpty { Task.detached { [weak self] in for (id, topic) in marks { await self?.mark(id, topic: topic) } } }
        for (id, hub, topic) in subscribe { send("subscribe", id: id, hub: hub, topic: topic, now: now) }
        for (id, hub, topic) in unsubscribe { send("unsubscribe", id: id, hub: hub, topic: topic, now: now) }
    }

    /// Asks `hub` to (un)subscribe; a hub that refuses is asked again after a while (a tenth
    /// of the lease, at least a minute).
    private func send(_ mode: String, id: Int, hub: String, topic: String, now: Double) {
        var fields = [("hub.mode", mode), ("hub.topic", topic), ("hub.callback", callback(id))]
        if mode == "subscribe" { fields += [("hub.secret", secret(id)), ("hub.lease_seconds", String(settings.lease))] }
        let body = fields.map { "\($0.0.formEncoded())=\($0.1.formEncoded())" }.joined(separator: "&")
        let form = Array(body.utf8), publicOnly = !settings.allowPrivateHosts
        let first = Self.hubRequest(to: hub, form: form, publicOnly: publicOnly)
        let upstream = self.upstream, retry = max(60, Double(settings.lease) / 10)
        Task.detached { [weak self] in
            // Another replica still watches it: the subscription is its to end. A subscription's
            // mark goes first, so any replica the hub verifies it with knows it is wanted.
            if mode == "unsubscribe", await self?.watchedElsewhere(id, topic: topic) == true {
                self?.counters.keptForOthers.add()
                return
            }
            if mode == "subscribe" { await self?.mark(id, topic: topic) }
            let accepted: Bool
            do {
                var response = try await upstream.send(first)
                // A hub that moved answers 307/308 with its new address: asked there once (same checks).
                if response.status == 307 || response.status == 308,
                    let location = response.headers.last(where: { $0.0.lowercased() == "location" })?.1,
                    let url = URLReference.absolute(location, base: hub)
                {
                    response = try await upstream.send(Self.hubRequest(to: url, form: form, publicOnly: publicOnly))
                }
                accepted = (200..<300).contains(response.status)
            } catch {
                accepted = false
            }
            guard let self else { return }
            if accepted { self.counters.accepted.add() }
            if !accepted {
                self.counters.refused.add()
                if mode == "subscribe" {
                    self.state.withLock {
                        $0.subscriptions[id] = nil
                        $0.retryAt[id] = now + retry
                    }
                }
            }
        }
    }

    /// A form posted to a hub: an address a publisher chose (SSRF checks, its host's breaker).
    static func hubRequest(to url: String, form: [UInt8], publicOnly: Bool) -> UpstreamRequest {
        var request = UpstreamRequest(
            upstream: SourceName.episodes, method: .post, url: url, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: form,
            maxBodyBytes: 64 << 10, publicAddressesOnly: publicOnly)
        request.urlChosenByThirdParty = true
        return request
    }

    package var subscriptionCount: Int { state.withLock { $0.subscriptions.count } }
}

/// What `/metrics` counts of WebSub.
package final class WebSubCounters: Sendable {
    package let accepted = Counter()
    package let refused = Counter()
    package let denied = Counter()
    package let verified = Counter()
    package let notifications = Counter()
    package let forged = Counter()
    /// Unsubscriptions not sent because another replica still watched the feed.
    package let keptForOthers = Counter()
}
