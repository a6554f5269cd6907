import FoundationEssentials
import HTTPServer
import Synchronization

/// A loopback upstream that serves the recorded payloads in `Fixtures/` with the
/// paths and quirks of the real ones. Used by `feedproxy --fixtures` and by tests.
public final class FixtureUpstream: Sendable {
    /// What the fixture upstream does with feed requests (tests switch it at run time).
    public enum Mode: String, Sendable {
        case normal, fail, slow, garbage, notfound
    }

    public let server: Server
    private let state: FixtureState

    public init(directory: String, host: String = "127.0.0.1", port: Int = 0) throws {
        let state = try FixtureState(directory: directory)
        self.state = state
        var router = Router<BasicRequestContext>()
        router.get("/services/feeds/photos_public.gne") { ctx in state.serve("flickr", ctx) { request, _ in state.flickr(request) } }
        router.get("/search") { ctx in state.serve("itunes", ctx) { request, _ in state.itunesSearch(request) } }
        router.get("/lookup") { ctx in state.serve("itunes-lookup", ctx) { request, _ in state.itunesLookup(request) } }
        router.add("POST", "/graphql") { ctx in state.serve("kiva", ctx) { request, _ in state.kivaGraphQL(request) } }
        router.get("/v1/loans/:name") { ctx in state.serve("kiva-rest", ctx) { state.kivaREST($1, $0) } }
        // Feeds answer as podcast hosts do: ETag and Last-Modified, 304 to a matching validator.
        router.get("/rss/:name") { ctx in state.serve("rss", ctx) { state.rss($1, $0) } }
        // Chapters and transcript files, served as publishers' hosts do (validators, 304s).
        router.get("/episode-files/:name") { ctx in state.serve("episode-files", ctx) { state.episodeFile($1, $0) } }
        // Artwork, served as publishers' hosts do (validators, 304s).
        router.get("/artwork/:name") { ctx in state.serve("artwork", ctx) { state.artwork($1, $0) } }
        // A publisher's file host that takes the request and never answers (within a minute).
        router.get("/hang/:name") { ctx in
            _ = state.serve("hang", ctx) { _, _ in Response(status: 204) }  // counted
            return .deferred { _ in
                try? await Task.sleep(for: .seconds(60))
                return .error(status: 504, code: "hung", message: "answered after a minute")
            }
        }
        // A feed that moved for good: 301 to its address under /rss/.
        router.get("/moved/:name") { ctx in
            state.serve("rss-moved", ctx) { _, name in
                var r = Response(status: 301)
                r.headers.add("Location", "/rss/" + name)
                return r
            }
        }
        // Upstreams answered from their recorded files alone (a folder's answers.json).
        for answer in try RecordedAnswer.all(in: URL(fileURLWithPath: directory)) {
            router.get(answer.path) { ctx in
                state.serve(answer.folder, ctx) { request, _ in state.recorded(answer.folder, answer.file, type: answer.type, request) }
            }
        }
        router.get("/redirect") { ctx in
            var r = Response(status: 302)
            r.headers.add("Location", ctx.request.query("to") ?? "/")
            return .response(r)
        }
        router.get("/__fixture/requests") { _ in .response(.json(Array("{\"requests\":\(state.requests)}".utf8))) }
        // For scripts driving a standalone fixture upstream (scale-out test): counts per
        // upstream, and the fault mode switched over HTTP.
        router.get("/__fixture/counts") { _ in .response(.json(Array(state.countsJSON.utf8))) }
        router.get("/__fixture/bytes") { _ in .response(.json(Array(state.bytesJSON.utf8))) }
        router.add("POST", "/__fixture/mode/:mode") { ctx in
            guard let mode = Mode(rawValue: ctx.pathParameters["mode"] ?? "") else {
                return .response(.error(status: 400, code: "bad_mode", message: "mode is normal, fail, slow, garbage or notfound"))
            }
            state.setMode(mode)
            return .response(Response(status: 204))
        }
        // A new episode on a synthetic library podcast (`?at=` Unix seconds): its feed changes.
        router.add("POST", "/__fixture/publish/:id") { ctx in
            guard let id = Int(ctx.pathParameters["id"] ?? ""), let at = Int(ctx.request.query("at") ?? ""), state.publish(podcast: id, at: at) else {
                return .response(.error(status: 400, code: "bad_publish", message: "a library podcast id (1590000001…) and at=<Unix seconds>"))
            }
            return .response(Response(status: 204))
        }
        var config = ServerConfiguration()
        config.host = host
        config.port = port
        config.threads = 1
        config.drainTimeout = 1
        config.serverName = "FixtureUpstream"
        server = Server(configuration: config, router: router)
        try server.start()
    }

    public var baseURL: String { "http://127.0.0.1:\(server.port)" }
    public var flickrURL: String { baseURL + "/services/feeds/photos_public.gne" }
    public var itunesSearchURL: String { baseURL + "/search" }
    public var itunesLookupURL: String { baseURL + "/lookup" }
    public var kivaGraphQLURL: String { baseURL + "/graphql" }
    public var kivaRESTURL: String { baseURL + "/v1/loans/newest.json" }

    /// Body bytes sent for one upstream (`rss`: the podcast feeds, 304s included as 0).
    public func bodyBytes(for upstream: String) -> Int { state.bytes(upstream) }
    /// Conditional feed requests answered 304.
    public var notModifiedCount: Int { state.count("rss-304") }

    /// Feed requests received so far (all routes).
    public var requestCount: Int { state.requests }
    public func requestCount(for upstream: String) -> Int { state.count(upstream) }
    public func setMode(_ mode: Mode) { state.setMode(mode) }
    /// Publishes an episode dated `time` on a synthetic library podcast's feed.
    @discardableResult
    public func publish(podcast id: Int, at time: Int) -> Bool { state.publish(podcast: id, at: time) }
    /// The WebSub hub the synthetic podcasts' feeds name from now on (nil: none).
    public func setWebSubHub(_ url: String?) { state.setWebSubHub(url) }
    /// Overrides the `feedUrl` the lookup answers for a podcast id (SSRF tests).
    public func setFeedURL(_ url: String?, forPodcast id: String) { state.setFeedURL(url, id: id) }

    public func stop() { server.shutdown() }
}
