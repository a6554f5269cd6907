import FeedFormats
import Feeds
import HTTPServer
import Primitives
import ResponseCache
import Synchronization
import Upstream

/// `GET /library/opml?podcasts=…`: a library as an OPML 2.0 file any podcast app imports, one
/// `<outline type="rss">` per podcast with its title and feed URL. What names each feed is
/// the podcast's own answer (`/podcasts/{id}`: cached here or in the shared tier, else one of
/// this replica's shared directory lookups; a feed id's is remembered); a podcast that no longer
/// exists, or has no feed, is left out (and named in a comment); one that cannot be looked up
/// now makes the file a 503 with Retry-After rather than a file missing it.
struct LibraryExportRoute: Sendable {
    let cache: ResponseCache
    let lookups: PodcastLookups
    let upstream: UpstreamClient
    /// Seconds from the request's arrival the lookups may take.
    let deadline: Double

    init(_ s: Services) {
        cache = s.cache
        lookups = s.podcastLookups
        upstream = s.upstream
        deadline = s.configuration[Setting.episodesBatchDeadline]
    }

    enum Found: Sendable {
        case feed(url: String, title: String?)
        /// Gone, or no feed: left out, with why.
        case leftOut(String)
        /// Could not be asked now.
        case unavailable
    }

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        let ids: [Int]
        do {
            ids = try EpisodeBatch.podcastIDs(QueryParameters(RequestParameters.of(context.request)))
        } catch {
            return .response(.error(error))
        }
        var found: [Int: Found] = [:]
        for id in ids {
            switch cache.lookup(PodcastAdapter.cacheKey(id)) {
            case .fresh(let entry), .stale(let entry): found[id] = Self.found(entry)
            case .miss: break
            }
        }
        let missing = ids.filter { found[$0] == nil }
        if missing.isEmpty { return .response(Self.answer(ids, found)) }
        let cache = self.cache, lookups = self.lookups, upstream = self.upstream, deadline = self.deadline, known = found
        return .deferred { context in
            context.identifyClient()
            context.deadline = context.receivedAt + deadline
            let answerBy = context.receivedAt + deadline, client = context.client.map(ClientResolver.key), trace = context.trace
            let results = await DeadlineGather.run(missing.count, answerBy: answerBy) { i -> Found in
                let id = missing[i]
                let key = PodcastAdapter.cacheKey(id)
                if let entry = await cache.freshAnywhere(key) { return Self.found(entry) }
                if FeedID.isFeedID(id) { return .leftOut("feed_id_unknown") }
                let answer = await UpstreamRequestContext.with({
                    $0.deadline = NativeThread.monotonicSeconds() + upstream.budgetSeconds
                    $0.requester = client
                    $0.trace = trace
                }) { await lookups.answer(for: id, with: upstream) }
                switch answer {
                case .success(let body): return EpisodesAdapter.listed(fromPodcastAnswer: body).map(Self.found) ?? .unavailable
                case .failure(.notFound), .failure(.unknownFeedID): return .leftOut("podcast_not_found")
                case .failure: return .unavailable
                }
            }
            var all = known
            for (i, outcome) in results { all[missing[i]] = outcome }
            return Self.answer(ids, all)
        }
    }

    static func found(_ entry: CachedResponse) -> Found {
        guard entry.status == 200 else { return .leftOut(EpisodeBatch.error(fromBody: entry.body).code) }
        return EpisodesAdapter.listed(fromPodcastAnswer: entry.body).map(found) ?? .leftOut("unreadable")
    }

    static func found(_ listed: EpisodesAdapter.ListedFeed) -> Found {
        switch listed {
        case .feed(let url, let title): return .feed(url: url, title: title)
        case .noFeed: return .leftOut("feed_unavailable")
        }
    }

    static func answer(_ ids: [Int], _ found: [Int: Found]) -> Response {
        var feeds: [OPMLWriter.Feed] = []
        var leftOut: [String] = []
        var unavailable: [Int] = []
        for id in ids {
            switch found[id] ?? .unavailable {
            case .feed(let url, let title): feeds.append(OPMLWriter.Feed(title: title, xmlUrl: url))
            case .leftOut(let why): leftOut.append("\(id) (\(why))")
            case .unavailable: unavailable.append(id)
            }
        }
        guard unavailable.isEmpty else {
            let named = unavailable.prefix(20).map(String.init).joined(separator: ", ") + (unavailable.count > 20 ? ", …" : "")
            return .error(
                ClientError(
                    status: 503, code: "library_incomplete", message: "these podcasts could not be looked up now, so the file would miss them: \(named)",
                    retryAfter: 5))
        }
        let body = OPMLWriter.document(
            title: "FeedProxy library", created: HTTPDate.format(Timestamp.now()), feeds: feeds,
            comment: leftOut.isEmpty ? nil : "left out: " + leftOut.joined(separator: ", "))
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/x-opml; charset=utf-8")
        headers.add("Content-Disposition", "attachment; filename=\"library.opml\"")
        headers.add("Cache-Control", "no-store")  // made for one person, now
        return Response(status: 200, headers: headers, body: body, compressible: true)
    }
}
