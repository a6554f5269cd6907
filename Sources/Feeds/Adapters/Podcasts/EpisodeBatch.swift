import FeedFormats
import Primitives

/// `GET /episodes?podcasts=…`: a podcast app's library in one request. The episodes of many
/// podcasts, newest first across them, each cut from its podcast's cached episode data (the
/// same data `/podcasts/{id}/episodes` pages are cut from), with a status per podcast.
public struct EpisodeBatch: Sendable {
    public static let maxPodcasts = 200

    public let ids: [Int]
    public let limit: Int
    public let since: Int?
    public let cursor: EpisodeCursor?

    public init(_ p: QueryParameters) throws(ClientError) {
        let listed = p.list("podcasts")
        guard !listed.isEmpty else {
            throw ClientError(status: 400, code: "missing_parameter", message: "podcasts is required: comma-separated iTunes collection ids")
        }
        var seen = Set<Int>()
        var ids: [Int] = []
        for text in listed {
            guard text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }), let id = Int(text), id > 0 else {
                throw .invalidParameter("podcasts: \(text.utf8.count <= 40 ? "'\(text)'" : "an entry") is not a positive iTunes collection id")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        guard ids.count <= Self.maxPodcasts else { throw .invalidParameter("podcasts takes at most \(Self.maxPodcasts) ids (\(ids.count) given)") }
        self.ids = ids
        limit = try p.int("limit", in: 1...500, default: 100)
        since = try EpisodeSince.parse(p)
        let scope = Self.scope(ids)
        cursor = try p.value("cursor").map { text throws(ClientError) in try EpisodeCursor.decode(text, scope: scope) }
    }

    /// What a cursor is tied to: the list of podcasts, in the order asked.
    static func scope(_ ids: [Int]) -> String { "batch|" + ids.map(String.init).joined(separator: ",") }

    /// Where one podcast stands in the answer.
    public enum Status: Sendable {
        case ok(EpisodeFeedData)
        /// The same code and message the single route gives (podcast_not_found, feed_unavailable, …).
        case error(code: String, message: String)
        /// Not ready by the batch's deadline: its fetch goes on, and the next refresh finds it.
        case pending
    }

    /// The answer's JSON and its `Link` value: the page of the merged list, then one entry
    /// per podcast in the order asked.
    /// Not a cache's representation: the batch's ETag is a hash of its parts (the route's).
    public func render(_ statuses: [Status]) -> (body: [UInt8], link: String?) {
        struct Ref {
            let podcast: Int
            let entry: Int
            let published: Int64
            let anchor: UInt64
        }
        var refs: [Ref] = []
        for (p, status) in statuses.enumerated() {
            guard case .ok(let data) = status else { continue }
            for (i, e) in data.entries.enumerated() {
                var h = XXH64.Hasher()
                h.add(String(ids[p]).utf8)
                h.add([0])
                withUnsafeBytes(of: e.anchor.littleEndian) { h.add($0) }
                refs.append(Ref(podcast: p, entry: i, published: e.published, anchor: h.value))
            }
        }
        // Newest first across podcasts; undated last; ties in the order asked, then the feed's.
        refs.sort { a, b in
            if a.published != b.published { return a.published > b.published }
            if a.podcast != b.podcast { return a.podcast < b.podcast }
            return a.entry < b.entry
        }
        let since = self.since
        let cut = EpisodePage(
            count: refs.count, limit: limit, cursor: cursor, anchor: { refs[$0].anchor },
            matches: { since == nil || (refs[$0].published != EpisodeFeedData.undated && refs[$0].published > Int64(since ?? 0)) })
        let nextCursor = cut.next?.encoded(scope: Self.scope(ids))
        let nextURL = nextCursor.map {
            "/episodes?podcasts=" + ids.map(String.init).joined(separator: ",") + "&limit=\(limit)" + (since.map { "&since=" + Timestamp.format($0) } ?? "")
                + "&cursor=\($0)"
        }
        var out: [UInt8] = []
        out += #"{"source":"rss","count":"#.utf8
        out += String(cut.picked.count).utf8
        out += #","items":["#.utf8
        for (n, i) in cut.picked.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            let ref = refs[i]
            guard case .ok(let data) = statuses[ref.podcast] else { continue }
            // {"podcastId":N, then the episode's own fields (its JSON is an object with fields).
            out += #"{"podcastId":"#.utf8
            out += String(ids[ref.podcast]).utf8
            out.append(UInt8(ascii: ","))
            out += data.entries[ref.entry].json.dropFirst()
        }
        out += #"],"podcasts":["#.utf8
        for (p, status) in statuses.enumerated() {
            if p > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"id":"#.utf8
            out += String(ids[p]).utf8
            switch status {
            case .ok(let data):
                out += #","status":"ok","title":"#.utf8
                Self.appendNullable(data.title, to: &out)
                out += #","updated":"#.utf8
                Self.appendNullable(data.updated, to: &out)
                out += #","episodeCount":"#.utf8
                out += String(data.entries.count).utf8
                out += #","error":null}"#.utf8
            case .error(let code, let message):
                out += #","status":"error","title":null,"updated":null,"episodeCount":null,"error":{"code":"#.utf8
                JSONBytes.appendQuoted(code, to: &out)
                out += #","message":"#.utf8
                JSONBytes.appendQuoted(message, to: &out)
                out += "}}".utf8
            case .pending:
                out += #","status":"pending","title":null,"updated":null,"episodeCount":null,"error":null}"#.utf8
            }
        }
        out += #"],"page":"#.utf8
        EpisodePage.json(size: limit, total: cut.total, next: nextURL, cursor: nextCursor, into: &out)
        out.append(UInt8(ascii: "}"))
        return (out, nextURL.map { "<\($0)>; rel=\"next\"" })
    }

    static func appendNullable(_ text: String?, to out: inout [UInt8]) {
        if let text { JSONBytes.appendQuoted(text, to: &out) } else { out += "null".utf8 }
    }

    /// The code and message of an error answer's body (`{"error":{…}}`), as cached for a
    /// podcast that does not exist or has no feed.
    public static func error(fromBody body: [UInt8]) -> (code: String, message: String) {
        struct Body: Decodable {
            struct Inner: Decodable {
                let code: String
                let message: String
            }
            let error: Inner
        }
        guard let decoded = try? FeedJSON.decode(Body.self, from: body, source: SourceName.episodes) else {
            let error = ClientError.unreadableCachedData(SourceName.episodes)
            return (error.code, error.message)
        }
        return (decoded.error.code, decoded.error.message)
    }
}
