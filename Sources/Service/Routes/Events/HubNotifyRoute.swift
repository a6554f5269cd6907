import Push
import Feeds
import HTTPServer
import Primitives

/// `GET|POST /hub/notify?url=` (or `id=`): a publisher's ping, in the spirit of Podcast
/// Index's `hub/pubnotify`: the feed is read again now (conditionally), and every stream
/// watching it hears of what changed. Only a feed this replica holds is read; anything else is
/// ignored (no fetch of a URL a stranger names), and a feed's pings count once per interval;
/// a ping that names a known feed costs its sender one unit of the miss quota.
struct HubNotifyRoute: Sendable {
    let hub: EpisodeEventHub

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        var ids = Set<Int>()
        var feedURL: String?
        do throws(ClientError) {
            let p = QueryParameters(try RequestParameters.of(context.request))
            // An empty value is no value here, as for `/podcasts/byfeedurl`'s url: missing, not invalid.
            let id = p.value("id").flatMap { $0.isEmpty ? nil : $0 }, url = p.value("url").flatMap { $0.isEmpty ? nil : $0 }
            guard id != nil || url != nil else {
                throw ClientError(status: 400, code: "missing_parameter", message: "url (the feed's URL) or id (its podcast id) is required")
            }
            if let text = id {
                guard text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }), let number = Int(text), number > 0 else {
                    throw ClientError.invalidParameter("id is not a podcast id (a directory id or a feed id)")
                }
                ids.insert(number)
            }
            if let text = url {
                guard let normalised = FeedID.normalised(text) else { throw ClientError.invalidParameter("url is not an absolute http(s) feed URL") }
                feedURL = normalised
            }
        } catch {
            return .response(.error(error))
        }
        let hub = self.hub, byID = ids, byURL = feedURL
        // A ping that reads a feed costs its sender as a miss does (many known feeds, one flood).
        context.identifyClient()
        let admission = RequestAdmission(identity: context.identity, client: context.client)
        return .deferred { _ in
            var refreshing: [Int] = []
            var wait: Double?
            var named = byID
            if let byURL { named.formUnion(await hub.podcasts(namedBy: byURL)) }
            var known: [Int] = []
            for id in named.sorted() where await hub.knows(id) { known.append(id) }
            if !known.isEmpty, !admission.admit() {
                return .error(ClientError.clientRateLimited(retryAfter: admission.refusedFor ?? 1))
            }
            for id in known {
                switch hub.ping(id) {
                case .refreshing: refreshing.append(id)
                case .tooSoon(let seconds): wait = max(wait ?? 0, seconds)
                }
            }
            if refreshing.isEmpty, let wait {
                return .error(
                    ClientError(
                        status: 429, code: "ping_too_soon",
                        message: "this feed was pinged moments ago: it is being read, and is read once more when 10 s have passed", retryAfter: wait))
            }
            guard !refreshing.isEmpty else {
                return .error(status: 404, code: "feed_unknown", message: "no podcast here reads this feed: nothing was fetched")
            }
            let body = Array("{\"status\":\"refreshing\",\"podcasts\":[\(refreshing.map(String.init).joined(separator: ","))]}".utf8)
            var response = Response.json(body, status: 202, compressible: false)
            response.headers.add("Cache-Control", "no-store")
            return response
        }
    }
}
