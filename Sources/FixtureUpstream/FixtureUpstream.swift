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
        var router = Router()
        router.get("/services/feeds/photos_public.gne") { req in state.serve("flickr", req) { state.flickr(req) } }
        router.get("/search") { req in state.serve("itunes", req) { state.itunesSearch(req) } }
        router.get("/lookup") { req in state.serve("itunes-lookup", req) { state.itunesLookup(req) } }
        router.add("POST", "/graphql") { req in state.serve("kiva", req) { state.kivaGraphQL(req) } }
        router.get("/v1/loans/:name") { req in state.serve("kiva-rest", req) { state.kivaREST(req.pathParameters["name"] ?? "", req) } }
        // Feeds answer as podcast hosts do: ETag and Last-Modified, 304 to a matching validator.
        router.get("/rss/:name") { req in state.serve("rss", req) { state.rss(req.pathParameters["name"] ?? "", req) } }
        // Chapters and transcript files, served as publishers' hosts do (validators, 304s).
        router.get("/episode-files/:name") { req in state.serve("episode-files", req) { state.episodeFile(req.pathParameters["name"] ?? "", req) } }
        // Artwork, served as publishers' hosts do (validators, 304s).
        router.get("/artwork/:name") { req in state.serve("artwork", req) { state.artwork(req.pathParameters["name"] ?? "", req) } }
        // A feed that moved for good: 301 to its address under /rss/.
        router.get("/moved/:name") { req in
            state.serve("rss-moved", req) {
                var r = Response(status: 301)
                r.headers.add("Location", "/rss/" + (req.pathParameters["name"] ?? ""))
                return r
            }
        }
        router.get("/redirect") { req in
            var r = Response(status: 302)
            r.headers.add("Location", req.query("to") ?? "/")
            return .response(r)
        }
        router.get("/__fixture/requests") { _ in .response(.json(Array("{\"requests\":\(state.requests)}".utf8))) }
        // For scripts driving a standalone fixture upstream (scale-out test): counts per
        // upstream, and the fault mode switched over HTTP.
        router.get("/__fixture/counts") { _ in .response(.json(Array(state.countsJSON.utf8))) }
        router.get("/__fixture/bytes") { _ in .response(.json(Array(state.bytesJSON.utf8))) }
        router.add("POST", "/__fixture/mode/:mode") { req in
            guard let mode = Mode(rawValue: req.pathParameters["mode"] ?? "") else {
                return .response(.error(status: 400, code: "bad_mode", message: "mode is normal, fail, slow, garbage or notfound"))
            }
            state.setMode(mode)
            return .response(Response(status: 204))
        }
        var config = ServerConfiguration()
        config.host = host
        config.port = port
        config.threads = 1
        config.drainTimeout = 1
        config.cors.origin = nil
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
    /// Overrides the `feedUrl` the lookup answers for a podcast id (SSRF tests).
    public func setFeedURL(_ url: String?, forPodcast id: String) { state.setFeedURL(url, id: id) }

    public func stop() { server.shutdown() }
}
