import Feeds
import HTTPServer
import Primitives
import ResponseCache

/// `POST /library/opml`: a podcast app's subscription list moved in (an OPML file), answered
/// outline by outline with the podcast's id, its title and status: `ok`, `moved` (with the new
/// address and id), `error` (with the code), or `pending` when its feed is still being read at
/// the batch deadline (as `/episodes` does). Every feed named gets its feed id at once (remembered
/// here and in the shared tier), whether or not the directory lists it, so the library can be refreshed
/// by `/episodes` right after; reading the feeds costs what a library refresh costs (one download
/// per feed, the client's quota per fetched feed, the batch deadline).
struct LibraryImportRoute: Sendable {
    let adapter: EpisodesAdapter
    /// The episodes route: its cache, loader, quota and counters.
    let feeds: FeedRoute
    let registry: FeedRegistry
    /// Seconds from the request's arrival the answer waits for feeds not cached.
    let deadline: Double

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        let library: LibraryImport
        do {
            library = try LibraryImport(opml: context.request.body)
        } catch {
            return .response(.error(error))
        }
        let cache = feeds.cache, bypass = FeedRoute.bypassesCache(context.request.headers)
        var statuses = [EpisodeBatch.Status](repeating: .pending, count: library.feeds.count)
        var uncached: [Int] = []
        for (i, feed) in library.feeds.enumerated() {
            let key = EpisodesAdapter.dataKey(feed.id), listed = EpisodesAdapter.ListedFeed.feed(url: feed.url, title: feed.title)
            var found: CachedResponse?
            switch bypass ? .miss : cache.lookup(key) {
            case .fresh(let entry): found = entry
            case .stale(let entry):
                found = entry
                cache.refreshInBackground(key, refreshing: feeds.loader(adapter.dataFeed(feed.id, listed: listed), refreshFor: context.trace))
            case .miss: found = nil
            }
            if let entry = found {
                statuses[i] = EpisodeBatchRoute.status(.cached(entry))
                if case .ok(let data) = statuses[i] {
                    registry.remember(normalised: feed.url, channel: FeedChannel(data))
                    continue
                }
            }
            // Named at once, so the id works while its feed is read (the read describes it better).
            registry.remember(normalised: feed.url, channel: FeedChannel(title: feed.title), unlessKnown: true)
            uncached.append(i)
        }
        if uncached.isEmpty { return .response(Self.answer(library, statuses, for: &context, retryAfter: nil)) }
        let loads = LibraryLoads(adapter: adapter, feeds: feeds, bypass: bypass), deadline = self.deadline
        let missing = uncached, known = statuses
        return .deferred { context in
            let podcasts = missing.map { (library.feeds[$0].id, EpisodesAdapter.ListedFeed.feed(url: library.feeds[$0].url, title: library.feeds[$0].title)) }
            let (loaded, admission) = await loads.run(podcasts, deadline: deadline, for: &context)
            var statuses = known
            for (n, i) in missing.enumerated() {
                switch loaded[n] {
                case .outcome(let outcome)?: statuses[i] = EpisodeBatchRoute.status(.loaded(outcome))
                case .refused?: statuses[i] = EpisodeBatchRoute.status(.refused)
                case nil: break
                }
            }
            let pending = statuses.contains { if case .pending = $0 { true } else { false } }
            return Self.answer(library, statuses, for: &context, retryAfter: pending ? max(1, deadline) : admission.refusedFor)
        }
    }

    static func answer(_ library: LibraryImport, _ statuses: [EpisodeBatch.Status], for context: inout MeteredRequestContext, retryAfter: Double?) -> Response {
        context.logFields = CachedRendering.CacheStatus.miss.logFields
        let outlines = library.entries.map { entry -> ImportedOutline in
            switch entry.feed {
            case .failure(let error):
                return ImportedOutline(text: entry.text, xmlUrl: entry.xmlUrl, status: "error", error: ImportedOutline.Problem(error.code, error.message))
            case .success(let i):
                let feed = library.feeds[i]
                var outline = ImportedOutline(text: entry.text, xmlUrl: entry.xmlUrl, id: feed.id, feedUrl: feed.url, status: "pending")
                switch statuses[i] {
                case .ok(let data):
                    outline.title = data.title
                    outline.movedTo = data.movedTo
                    outline.status = data.movedTo == nil ? "ok" : "moved"
                case .error(let code, let message):
                    outline.status = "error"
                    outline.error = ImportedOutline.Problem(code, message)
                case .pending:
                    break
                }
                return outline
            }
        }
        let answer = ImportAnswer(title: library.title, count: outlines.count, podcasts: library.feeds.map(\.id), outlines: outlines, leftOut: library.leftOut)
        guard let body = try? FeedJSON.encode(answer) else { return .error(status: 500, code: "internal_error", message: "the answer could not be encoded") }
        var response = Response.json(body, gzipped: context.request.acceptsGzip ? Gzip.compress(body) : nil)
        response.headers.add("Cache-Control", "no-store")
        if let retryAfter { response.headers.add("Retry-After", String(Saturating.retryAfterSeconds(retryAfter))) }
        return response
    }
}

/// `POST /library/opml`'s answer.
struct ImportAnswer: Encodable {
    var source = "library"
    /// The file's own title (`<head><title>`).
    let title: String?
    /// Outlines that named a feed, as listed.
    let count: Int
    /// The library: each feed's id once, in the file's order (what `/episodes` takes).
    let podcasts: [Int]
    let outlines: [ImportedOutline]
    /// Outlines past the 5,000 read.
    let leftOut: Int
}

/// One outline of an imported file and what became of it.
struct ImportedOutline: Encodable {
    struct Problem: Encodable {
        let code: String
        let message: String

        init(_ code: String, _ message: String) {
            self.code = code
            self.message = message
        }
    }

    let text: String?
    let xmlUrl: String?
    var id: Int? = nil
    var feedUrl: String? = nil
    /// ok, moved, pending or error.
    var status: String
    var title: String? = nil
    var movedTo: MovedFeed? = nil
    var error: Problem? = nil
}
