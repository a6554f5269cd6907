import Feeds
import HTTPServer
import Images
import Primitives
import ResponseCache

/// `GET /images?url=&w=&sig=`: a feed route whose answer also depends on `Accept` (WebP,
/// AVIF, or JPEG/PNG): the negotiated encoding is part of both the fast path's alias and the
/// cache key, and every answer says `Vary: Accept`.
struct ImageRoute: Sendable {
    let feeds: FeedRoute

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        let target = ImageTarget.negotiate(accept: context.request.headers["accept"])
        let alias = target.rawValue + " " + context.request.target
        return feeds.handle(&context, alias: alias, adding: [(ImageAdapter.negotiatedParameter, target.rawValue)])
    }
}

extension FeedRoute {
    /// The body of an answer this route keeps (an image's source), loaded if it must be, in
    /// the caller's flight (its upstream deadline and turn), at no extra quota; a stale one is
    /// used and refreshed behind. A kept refusal (not an image, a 404) is thrown as it was.
    func keptBody(_ prepared: PreparedFeed) async throws(ClientError) -> [UInt8] {
        let entry: CachedResponse
        switch await cache.lookupOrFetch(prepared.loadKey, admit: { true }, refreshing: loader(prepared)) {
        case .answered(let e)?, .fresh(let e)?, .loaded(let e, _)?, .staleAfterError(let e, _)?: entry = e
        case .stale(let e)?:
            cache.refreshInBackground(prepared.loadKey, refreshing: loader(prepared))
            entry = e
        case .failed(let error)?: throw error.error
        case nil: throw ClientError.clientRateLimited(retryAfter: 1)  // admitted always: not reached
        }
        guard entry.status == 200 else {
            let kept = EpisodeBatch.error(fromBody: entry.body)
            throw ClientError(status: entry.status, code: kept.code, message: kept.message)
        }
        return entry.body
    }
}
