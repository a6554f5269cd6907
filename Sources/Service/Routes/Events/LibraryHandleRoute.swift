import Push
import Feeds
import HTTPServer
import Primitives

/// `POST /episodes/events/library`: a library (its podcasts, `limit` and `sync` token, as the
/// stream takes them) kept under a short name, for `EventSource`, which cannot POST a 7 KB
/// token: it opens `/episodes/events?library=<name>` and resumes with `Last-Event-ID` as any
/// stream does. `201` with the name and the stream's URL; the same library at the same
/// position is the same name.
struct LibraryHandleRoute: Sendable {
    let hub: EpisodeEventHub

    func handle(_ context: inout MeteredRequestContext) -> MeteredResult {
        let handle: LibraryHandle
        do throws(ClientError) {
            let p = QueryParameters(try RequestParameters.of(context.request))
            let ids = try EpisodeBatch.podcastIDs(p)
            guard ids.count <= EpisodeEventsRoute.maxPodcasts else {
                throw ClientError.invalidParameter("podcasts takes at most \(EpisodeEventsRoute.maxPodcasts) ids (\(ids.count) given)")
            }
            handle = LibraryHandle(
                ids: ids, limit: try p.int("limit", in: 1...500, default: 100), token: try EpisodeSyncRequest.parse(p, since: nil, cursor: nil))
        } catch {
            return .response(.error(error))
        }
        let libraries = hub.libraries
        return .deferred { _ in
            let name = await libraries.keep(handle)
            var body: [UInt8] = Array(#"{"library":"#.utf8)
            JSONBytes.appendQuoted(name, to: &body)
            body += #","url":"#.utf8
            JSONBytes.appendQuoted("/episodes/events?library=" + name, to: &body)
            body.append(UInt8(ascii: "}"))
            var response = Response.json(body, status: 201, compressible: false)
            response.headers.add("Cache-Control", "no-store")
            response.headers.add("Location", "/episodes/events?library=" + name)
            return response
        }
    }
}
