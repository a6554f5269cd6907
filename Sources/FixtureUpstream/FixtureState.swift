import FoundationEssentials
import HTTPServer
import Primitives

/// The fixture upstream's files, counters and switches.
final class FixtureState: Sendable {
    private let directory: URL
    private let files: [String: [UInt8]]
    private let mode = Locked(FixtureUpstream.Mode.normal)
    private let counts = Locked<[String: Int]>([:])
    private let sentBytes = Locked<[String: Int]>([:])
    private let feedOverrides = Locked<[String: String?]>([:])
    /// Episodes published on synthetic podcasts since (their times), by podcast id.
    private let published = Locked<[Int: [Int]]>([:])
    /// A WebSub hub the synthetic podcasts' feeds name (their `Link` header), if set.
    private let webSubHub = Locked<String?>(nil)
    private let kiva: FixtureKiva

    init(directory: String) throws {
        self.directory = URL(fileURLWithPath: directory)
        var files: [String: [UInt8]] = [:]
        for name in ["flickr/photos_public.json", "itunes/search.json", "kiva/graphql.json", "kiva/newest.json"] {
            files[name] = Array(try Data(contentsOf: self.directory.appendingPathComponent(name)))
        }
        // Podcasts only reachable by id (their feeds exercise encodings), so searches stay as recorded.
        files["itunes/lookup.json"] = (try? Data(contentsOf: self.directory.appendingPathComponent("itunes/lookup.json"))).map { Array($0) }
        self.files = files
        kiva = FixtureKiva(graphQL: FixtureJSON.parse(files["kiva/graphql.json"]), rest: FixtureJSON.parse(files["kiva/newest.json"]))
    }

    var requests: Int { counts.withLock { $0.values.reduce(0, +) } }
    func count(_ upstream: String) -> Int { counts.withLock { $0[upstream] ?? 0 } }
    var countsJSON: String {
        let all = counts.withLock { $0 }.sorted { $0.key < $1.key }
        return "{" + all.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }
    func bytes(_ upstream: String) -> Int { sentBytes.withLock { $0[upstream] ?? 0 } }
    var bytesJSON: String {
        let all = sentBytes.withLock { $0 }.sorted { $0.key < $1.key }
        return "{" + all.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }
    func setMode(_ m: FixtureUpstream.Mode) { mode.withLock { $0 = m } }
    func setFeedURL(_ url: String?, id: String) { feedOverrides.withLock { $0[id] = .some(url) } }
    func setWebSubHub(_ url: String?) { webSubHub.withLock { $0 = url } }
    /// A new episode on a synthetic podcast's feed, dated `time` (false: no such podcast).
    func publish(podcast id: Int, at time: Int) -> Bool {
        guard FixtureLibrary.isSynthetic(id), Timestamp.range.contains(time) else { return false }
        published.withLock { $0[id, default: []].append(time) }
        return true
    }

    /// Counts the request and applies the current fault mode before answering.
    /// `answer` gets the request and its `:name` path parameter.
    func serve(_ upstream: String, _ context: BasicRequestContext, _ answer: @escaping @Sendable (Request, String) -> Response) -> HandlerResult<
        BasicRequestContext
    > {
        let request = context.request, name = context.pathParameters["name"] ?? ""
        counts.withLock { $0[upstream, default: 0] += 1 }
        switch mode.withLock({ $0 }) {
        case .normal:
            let response = answer(request, name)
            sentBytes.withLock { $0[upstream, default: 0] += response.body.count }
            return .response(response)
        case .fail:
            var r = Response(status: 503, body: Array("<html><body><h1>503 Service Unavailable</h1></body></html>".utf8))
            r.headers.add("Content-Type", "text/html")
            return .response(r)
        case .notfound:
            // An upstream 4xx (a feed taken down, a key the API no longer knows).
            var r = Response(status: 404, body: Array("<html><body><h1>404 Not Found</h1></body></html>".utf8))
            r.headers.add("Content-Type", "text/html")
            return .response(r)
        case .garbage:
            var r = Response(status: 200, body: Array("{\"items\": [ {\"title\": \"cut off".utf8))
            r.headers.add("Content-Type", "application/json")
            return .response(r)
        case .slow:
            return .deferred { _ in
                try? await Task.sleep(for: .seconds(3))
                return answer(request, name)
            }
        }
    }

    func file(_ name: String, type: String, prefix: String = "") -> Response {
        var r = Response(status: 200, body: Array(prefix.utf8) + (files[name] ?? []))
        r.headers.add("Content-Type", type)
        return r
    }

    func flickr(_ req: Request) -> Response {
        file("flickr/photos_public.json", type: "application/json")
    }

    /// iTunes answers `text/javascript` with leading newlines, filtered by `term` like the real search.
    func itunesSearch(_ req: Request) -> Response {
        let term = (req.query("term") ?? "").lowercased()
        let limit = max(0, Int(req.query("limit") ?? "") ?? 50)
        guard let results = FixtureJSON.parse(files["itunes/search.json"])?["results"]?.array else {
            return .error(status: 500, code: "fixture", message: "bad fixture")
        }
        let words = term.split(separator: " ").map(String.init)
        let matching = results.filter { r in
            let haystack = [r["collectionName"], r["artistName"], r["primaryGenreName"]].compactMap { $0?.string }.joined(separator: " ").lowercased()
            return !words.isEmpty && words.allSatisfy { haystack.contains($0) }
        }.prefix(limit)
        let host = req.headers["host"]?.split(separator: ":").last.map(String.init) ?? "80"
        return itunesAnswer(matching.map { Self.localArtwork($0, port: host) })
    }

    /// iTunes lookup of one id or a comma-separated list: each found podcast once, in the
    /// order asked, its recorded feed on this fixture host.
    func itunesLookup(_ req: Request) -> Response {
        let ids = (req.query("id") ?? "").split(separator: ",").map(String.init)
        guard var results = FixtureJSON.parse(files["itunes/search.json"])?["results"]?.array else {
            return .error(status: 500, code: "fixture", message: "bad fixture")
        }
        results += FixtureJSON.parse(files["itunes/lookup.json"])?["results"]?.array ?? []
        var answer: [FixtureJSON] = []
        let host = req.headers["host"]?.split(separator: ":").last.map(String.init) ?? "80"
        for id in ids {
            if let number = Int(id), FixtureLibrary.isSynthetic(number) {
                answer.append(FixtureLibrary.lookupResult(number, feedHost: host))
                continue
            }
            guard var first = results.first(where: { $0["collectionId"]?.int.map(String.init) == id }) else { continue }
            if let override = feedOverrides.withLock({ $0[id] }) {
                first["feedUrl"] = override.map(FixtureJSON.string)
            } else if first["feedUrl"] != nil {
                // Recorded feeds live on this fixture host.
                first["feedUrl"] = .string("http://127.0.0.1:\(host)/rss/\(id).xml")
            }
            answer.append(Self.localArtwork(first, port: host))
        }
        return itunesAnswer(answer)
    }

    /// A recorded podcast's artwork on this fixture host (recorded, it is Apple's image
    /// service, out of reach offline): one of the fixtures' covers, by its id.
    static func localArtwork(_ podcast: FixtureJSON, port: String) -> FixtureJSON {
        var podcast = podcast
        let covers = ["square-600.webp", "cover-3000.jpg", "logo-1400.png"]
        let cover = covers[Int((podcast["collectionId"]?.int ?? 0).magnitude % UInt(covers.count))]
        for size in [30, 60, 100, 600] where podcast["artworkUrl\(size)"] != nil {
            podcast["artworkUrl\(size)"] = .string("http://127.0.0.1:\(port)/artwork/\(cover)")
        }
        return podcast
    }

    private func itunesAnswer(_ results: [FixtureJSON]) -> Response {
        let body = FixtureJSON.object(["resultCount": .int(results.count), "results": .array(results)]).bytes
        var r = Response(status: 200, body: Array("\n\n\n".utf8) + body)
        r.headers.add("Content-Type", "text/javascript; charset=utf-8")
        return r
    }

    /// Kiva GraphQL: filters, order and paging of `lend.loans`, and `lend.loan(id:)`.
    func kivaGraphQL(_ req: Request) -> Response { kiva.graphQLAnswer(req.body) }

    /// Kiva REST: `newest.json`, `search.json` (country and gender honoured) and `{id}.json`.
    func kivaREST(_ name: String, _ req: Request) -> Response { kiva.restAnswer(name, req) }

    /// The recorded feeds' one modification time (they never change).
    static let feedLastModified = "Mon, 03 Nov 2025 14:20:05 GMT"

    func rss(_ name: String, _ request: Request) -> Response {
        let file = directory.appendingPathComponent("rss").appendingPathComponent(name)
        let extra = FixtureLibrary.id(ofFeed: name).map { id in published.withLock { $0[id] ?? [] } } ?? []
        guard !name.contains("/"), !name.hasPrefix("."), let data = FixtureLibrary.feed(name, published: extra) ?? (try? Data(contentsOf: file)).map(Array.init)
        else {
            return .error(status: 404, code: "not_found", message: "no such feed")
        }
        // A feed's recorded Content-Type (with its charset) sits next to it, else the usual one.
        let recorded = (try? Data(contentsOf: directory.appendingPathComponent("rss").appendingPathComponent(name + ".content-type")))
            .map { String(decoding: $0, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? "" }
        var response = validated(data, type: recorded ?? "application/rss+xml", request, counting: "rss-304")
        // A synthetic podcast names the hub as WebSub's discovery has it: the hub and the feed's own URL.
        if FixtureLibrary.id(ofFeed: name) != nil, let hub = webSubHub.withLock({ $0 }), let host = request.headers["host"] {
            response.headers.add("Link", "<\(hub)>; rel=\"hub\", <http://\(host)/rss/\(name)>; rel=\"self\"")
        }
        return response
    }

    /// `Fixtures/episode-files/<name>`, typed by its extension; `long-<MiB>.vtt` (1-64) is a
    /// WebVTT transcript of that size, made up (a long interview's word-level captions).
    func episodeFile(_ name: String, _ request: Request) -> Response {
        if name.hasPrefix("long-"), name.hasSuffix(".vtt"), let mib = Int(name.dropFirst(5).dropLast(4)), (1...64).contains(mib) {
            var r = Response(status: 200, body: Self.longTranscript(mib << 20))
            r.headers.add("Content-Type", "text/vtt")
            return r
        }
        let types = ["json": "application/json", "vtt": "text/vtt", "srt": "application/x-subrip", "html": "text/html; charset=utf-8", "txt": "text/plain"]
        let type = name.split(separator: ".").last.flatMap { types[String($0)] } ?? "application/octet-stream"
        return recorded("episode-files", name, type: type, request)
    }

    /// A WebVTT file of about `bytes`: one-second cues, two speakers taking turns, a mebibyte
    /// of them made once and repeated (its times start again each mebibyte).
    static func longTranscript(_ bytes: Int) -> [UInt8] {
        var out = Array("WEBVTT\n\n".utf8)
        out.reserveCapacity(bytes + (1 << 20))
        while out.count < bytes { out += transcriptMebibyte }
        return out
    }

    static let transcriptMebibyte: [UInt8] = {
        var out: [UInt8] = []
        var second = 0
        while out.count < 1 << 20 {
            let cue =
                "\(ClockText.format(second)) --> \(ClockText.format(second + 1))\n<v \(second % 2 == 0 ? "Ada Host" : "Grace Guest")>Word \(second) of a long interview.\n\n"
            out += cue.utf8
            second += 1
        }
        return out
    }()

    /// `Fixtures/artwork/<name>`: publishers' artwork (and the hostile files), typed by extension
    /// as a careless host would type them (an SVG as an image, a lying PNG as a PNG).
    func artwork(_ name: String, _ request: Request) -> Response {
        let types = ["jpg": "image/jpeg", "png": "image/png", "webp": "image/webp", "gif": "image/gif", "svg": "image/svg+xml"]
        let type = name.split(separator: ".").last.flatMap { types[String($0)] } ?? "application/octet-stream"
        return recorded("artwork", name, type: type, request)
    }

    /// `Fixtures/<folder>/<name>`, read when asked (so a new upstream's recorded answers need no
    /// code here), with validators as a careful host sends them; its 304s are counted as
    /// `<folder>-304`.
    func recorded(_ folder: String, _ name: String, type: String, _ request: Request) -> Response {
        let file = directory.appendingPathComponent(folder).appendingPathComponent(name)
        guard !name.contains("/"), !name.hasPrefix("."), let data = (try? Data(contentsOf: file)).map(Array.init) else {
            return .error(status: 404, code: "not_found", message: "no such file")
        }
        return validated(data, type: type, request, counting: folder + "-304")
    }

    /// `data` with an ETag and Last-Modified, or a 304 when the request holds a matching validator.
    private func validated(_ data: [UInt8], type: String, _ request: Request, counting notModified: String) -> Response {
        let etag = "\"\(XXH64.hex(XXH64.hash(data)))\""
        let matches =
            request.headers["if-none-match"].map { $0.split(separator: ",").contains { $0.trimmingASCIIWhitespace() == etag } }
            ?? (request.headers["if-modified-since"] == Self.feedLastModified)
        if matches {
            counts.withLock { $0[notModified, default: 0] += 1 }
            var r = Response(status: 304)
            r.headers.add("ETag", etag)
            return r
        }
        var r = Response(status: 200, body: data)
        r.headers.add("ETag", etag)
        r.headers.add("Last-Modified", Self.feedLastModified)
        r.headers.add("Content-Type", type)
        return r
    }
}

/// `HH:MM:SS.000`, as WebVTT writes a time.
enum ClockText {
    static func format(_ seconds: Int) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)).000"
    }
}
