import Feeds
import HTTPServer
import Images

/// `GET /images?url=&w=&sig=`: a feed route whose answer also depends on `Accept` (WebP,
/// AVIF, or JPEG/PNG): the negotiated encoding is part of both the fast path's alias and the
/// cache key, and every answer says `Vary: Accept`.
struct ImageRoute: Sendable {
    let feeds: FeedRoute

    func handle(_ context: inout RequestContext) -> HandlerResult {
        let target = ImageTarget.negotiate(accept: context.request.headers["accept"])
        let alias = target.rawValue + " " + context.request.target
        return feeds.handle(&context, alias: alias, adding: [(ImageAdapter.negotiatedParameter, target.rawValue)])
    }
}
