import Feeds
import HTTPServer
import Images

/// `GET /images?url=&w=&sig=`: a feed route whose answer also depends on `Accept` (WebP,
/// AVIF, or JPEG/PNG): the negotiated encoding is part of both the fast path's alias and the
/// cache key, and every answer says `Vary: Accept`.
struct ImageRoute: Sendable {
    let feeds: FeedRoute

    func handle(_ request: Request) -> HandlerResult {
        let target = ImageTarget.negotiate(accept: request.headers["accept"])
        return feeds.handle(request, alias: target.rawValue + " " + request.target, adding: [(ImageAdapter.negotiatedParameter, target.rawValue)])
    }
}
