import EpisodeSync
import Push
import Feeds
import HTTPServer
import Primitives
import ResponseCache

/// `GET /episodes/events?podcasts=…`: a library's changes as Server-Sent Events. On connect,
/// what the client has not seen since its position (`Last-Event-ID`, as a reconnecting
/// EventSource sends it, or `sync=`, a token of `/episodes`; neither: the newest episodes),
/// then one event each time episodes of its podcasts change, in `/episodes`' JSON, its `id:`
/// the sync token to resume from. Podcasts not cached are read first (as `/episodes` reads
/// them: the client's quota, the batch deadline; one still loading arrives in a later event).
struct EpisodeEventsRoute: Sendable {
    let adapter: EpisodesAdapter
    let feeds: FeedRoute
    let hub: EpisodeEventHub
    let deadline: Double

    /// Podcasts one stream watches: a whole library, as `/episodes` takes.
    static let maxPodcasts = EpisodeBatch.maxPodcasts
    /// How long a client waits before reconnecting (the `retry:` field).
    static let retryMilliseconds = 3000
    static let unknownLibrary = ClientError(
        status: 404, code: "library_unknown",
        message: "no library has this handle (it lapsed 30 days after its last use, or was never made): POST /episodes/events/library again")

    /// Reads a podcast's feed again in the background. On a ping, from the publisher at once;
    /// on the ticker's turn, only when no replica read it within its interval (the shared
    /// tier's newer copy is taken instead). What it finds new is told to this replica's streams
    /// at once; the cache announces it to the other replicas (as any read of episode data).
    static func refresher(adapter: EpisodesAdapter, feeds: FeedRoute, hub: EpisodeEventHub) -> @Sendable (Int, EpisodeEventHub.FeedRead) async -> Void {
        let cache = feeds.cache
        return { id, reason in
            let key = EpisodesAdapter.dataKey(id)
            let loader = feeds.loader(adapter.dataFeed(id))
            let before: CachedResponse?
            switch reason {
            case .ping:
                before = cache.peek(key)
            case .cadence:
                before = await cache.newestAnywhere(key)
                if let before, cache.now - before.storedAt < hub.interval(id, now: cache.now) { return }
            case .sharedTierEmptied:
                // Anything the tier holds was stored since it came back: another replica read
                // the feed again already. Its copy (when newer) is this replica's news.
                before = cache.peek(key)
                if let copy = await cache.sharedCopy(key) {
                    if copy.status == 200, copy.etag != before?.etag, copy.storedAt > (before?.storedAt ?? -.infinity) { hub.changed(id) }
                    return
                }
            }
            // A ping tells of what was published after any read already under way asked.
            let wanted: ResponseCache.ReadWanted = if case .ping = reason { .startingNow } else { .anyUnderWay }
            guard case .loaded(let entry, _) = await cache.refresh(key, revalidating: true, wanted: wanted, refreshing: loader), entry.status == 200,
                entry.etag != before?.etag
            else { return }
            hub.changed(id)
        }
    }

    /// Where a stream's library comes from: the query (or form), or a handle made earlier.
    enum Library: Sendable {
        case given(ids: [Int], limit: Int, token: SyncToken?)
        case handle(String)
    }

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        var library: Library
        do throws(ClientError) {
            // A GET's query, or a POST's form: a 500-podcast library and its token (7 KB and
            // more) pass no proxy's request line; fetch-based event-stream clients can POST,
            // EventSource names a handle (`library=`).
            let p = QueryParameters(try RequestParameters.of(context.request))
            if let name = p.value("library"), p.value("podcasts") == nil {
                guard LibraryHandle.isName(name) else {
                    throw ClientError.invalidParameter("library is not a handle this service gave out (POST /episodes/events/library makes one)")
                }
                library = .handle(name)
            } else {
                let ids = try EpisodeBatch.podcastIDs(p)
                guard ids.count <= Self.maxPodcasts else {
                    throw ClientError.invalidParameter("podcasts takes at most \(Self.maxPodcasts) ids on a stream (\(ids.count) given)")
                }
                library = .given(
                    ids: ids, limit: try p.int("limit", in: 1...500, default: 100), token: try EpisodeSyncRequest.parse(p, since: nil, cursor: nil))
            }
        } catch {
            return .response(.error(error))
        }
        // A reconnect's own position wins. One this service cannot read (forged, or of a format
        // an upgrade retired) leaves the query's `sync=` (or the handle's) standing; without one,
        // the stream starts from no position at all: every podcast is sent whole, page by page,
        // with `resync: true`, so the app knows to reconcile instead of taking the newest
        // episodes for all it missed.
        let reconnect: SyncToken?
        var unreadable = false
        if let last = context.request.headers["last-event-id"], !last.isEmpty {
            reconnect = try? SyncToken.decode(last)
            unreadable = reconnect == nil
            if unreadable, case .given(let ids, let limit, nil) = library { library = .given(ids: ids, limit: limit, token: SyncToken()) }
        } else {
            reconnect = nil
        }
        context.identifyClient()
        let client = context.client.map(ClientResolver.key)
        guard let place = hub.reserve(client: client) else {
            return .response(
                .error(
                    ClientError(
                        status: 429, code: "too_many_streams",
                        message: "this replica holds all the event streams it may (or, half full, this address its share)", retryAfter: 30)))
        }
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/event-stream; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        // nginx passes each event on at once rather than buffering the stream.
        headers.add("X-Accel-Buffering", "no")
        let hub = self.hub, loads = LibraryLoads(adapter: adapter, feeds: feeds, bypass: false), deadline = self.deadline, cache = feeds.cache
        let chosen = library, fromNowhere = unreadable
        return .stream(Response(status: 200, headers: headers)) { stream, context in
            stream.send(ServerSentEvent.retry(milliseconds: Self.retryMilliseconds))
            let ids: [Int], limit: Int, start: SyncToken?
            switch chosen {
            case .given(let given, let givenLimit, let token):
                (ids, limit, start) = (given, givenLimit, reconnect ?? token)
            case .handle(let name):
                guard let handle = await hub.libraries.resolve(name) else {
                    // Told as an event (the head has left), and EventSource asked to wait a day
                    // before it tries this handle again: the app makes a new one.
                    stream.send(ServerSentEvent.retry(milliseconds: 86_400_000))
                    stream.send(ServerSentEvent.encode(id: nil, event: "problem", data: Response.error(Self.unknownLibrary).body))
                    stream.finish()
                    return
                }
                (ids, limit, start) = (handle.ids, handle.limit, reconnect ?? handle.token ?? (fromNowhere ? SyncToken() : nil))
            }
            let subscriber = EpisodeEventHub.Subscriber(stream: stream, ids: ids, limit: limit, client: client, token: start)
            hub.add(subscriber, in: place)
            let missing = ids.filter { if case .miss = cache.lookup(EpisodesAdapter.dataKey($0)) { true } else { false } }
            if !missing.isEmpty {
                var context = context
                _ = await loads.run(missing.map { ($0, nil) }, deadline: deadline, for: &context)
            }
            hub.deliver(subscriber, first: true)
        }
    }
}
