import EpisodeSync
import FeedFormats
import Primitives

/// `GET /episodes?podcasts=…`: a podcast app's library in one request. The episodes of many
/// podcasts, newest first across them, each cut from its podcast's cached episode data (the
/// same data `/podcasts/{id}/episodes` pages are cut from), with a status per podcast.
public struct EpisodeBatch: Sendable {
    /// A library as apps hold them (an imported OPML file of 500 feeds is refreshed at once,
    /// by `POST /episodes` when its query would pass a proxy's 8 KB request line).
    public static let maxPodcasts = SyncToken.maxPodcasts

    public let ids: [Int]
    public let limit: Int
    public let since: Int?
    public let cursor: EpisodeCursor?
    /// The client's sync token: the answer holds only what it has not seen.
    public let sync: SyncToken?
    /// Most bytes of episode JSON one answer holds (an event stream's page); nil: `limit` alone.
    public let maxItemBytes: Int?

    public init(_ p: QueryParameters) throws(ClientError) {
        ids = try Self.podcastIDs(p)
        limit = try p.int("limit", in: 1...500, default: 100)
        since = try EpisodeSince.parse(p)
        let scope = Self.scope(ids)
        cursor = try p.value("cursor").map { text throws(ClientError) in try EpisodeCursor.decode(text, scope: scope) }
        sync = try EpisodeSyncRequest.parse(p, since: since, cursor: cursor)
        maxItemBytes = nil
    }

    /// A batch the server makes itself (an event stream's next event): the episodes after `sync`,
    /// at most `maxItemBytes` of episode JSON (at least one episode) when given.
    public init(ids: [Int], limit: Int, sync: SyncToken?, maxItemBytes: Int? = nil) {
        self.ids = ids
        self.limit = max(1, limit)
        since = nil
        cursor = nil
        self.sync = sync
        self.maxItemBytes = maxItemBytes
    }

    /// `podcasts`: 1 to `maxPodcasts` podcast ids (iTunes collection ids or feed ids), comma
    /// separated or repeated, each once in the order first given.
    public static func podcastIDs(_ p: QueryParameters) throws(ClientError) -> [Int] {
        let listed = p.list("podcasts")
        guard !listed.isEmpty else {
            throw ClientError(status: 400, code: "missing_parameter", message: "podcasts is required: comma-separated podcast ids")
        }
        var seen = Set<Int>()
        var ids: [Int] = []
        for text in listed {
            guard text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }), let id = Int(text), id > 0 else {
                throw .invalidParameter(
                    "podcasts: \(text.utf8.count <= 40 ? "'\(text)'" : "an entry") is not a podcast id (an iTunes collection id or a feed id)")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        guard ids.count <= Self.maxPodcasts else { throw .invalidParameter("podcasts takes at most \(Self.maxPodcasts) ids (\(ids.count) given)") }
        return ids
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

        /// A podcast as its cached answer says (`status`, `body`): its data, or the error answer cached for it.
        public init(cached status: Int, body: [UInt8]) {
            guard status == 200 else {
                let error = EpisodeBatch.error(fromBody: body)
                self = .error(code: error.code, message: error.message)
                return
            }
            guard let data = EpisodeFeedData(body) else {
                let error = ClientError.unreadableCachedData(SourceName.episodes)
                self = .error(code: error.code, message: error.message)
                return
            }
            self = .ok(data)
        }
    }

    /// Which episodes an answer holds, and what the client has once it has them.
    public struct Selection: Sendable {
        /// (podcast's index in `ids`, entry's index in its data), newest first.
        public let items: [(podcast: Int, entry: Int)]
        /// Episodes that match in all (`since`), or not yet seen in all (`sync`).
        public let total: Int
        public let next: (url: String, cursor: String?)?
        /// The token to keep; nil on a page reached by a cursor (the first page's stands).
        public let token: SyncToken?
        /// Per podcast: its whole list is being sent again.
        public let resync: [Bool]
        /// Per podcast, with `sync`: ids of its episodes removed from the feed since the token.
        public var removed: [[String]] = []
        /// Per podcast, with `sync`: ids of its episodes in this answer the client had before
        /// (changed since, not new).
        public var changed: [[String]] = []
    }

    /// The episodes this request's answer holds: a page of the merged list (or, with `sync`,
    /// of the episodes the client has not seen).
    public func select(_ statuses: [Status]) -> Selection {
        if let sync { return selectUnseen(statuses, sync) }
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
        let next = cut.next.map { next -> (url: String, cursor: String?) in
            let cursor = next.encoded(scope: Self.scope(ids))
            return (path + (since.map { "&since=" + Timestamp.format($0) } ?? "") + "&cursor=\(cursor)", cursor)
        }
        return Selection(
            items: cut.picked.map { (refs[$0].podcast, refs[$0].entry) }, total: cut.total, next: next, token: currentToken(statuses),
            resync: Array(repeating: false, count: ids.count))
    }

    /// The token an answer without `sync` gives: each podcast loaded, through its current
    /// version. nil on a page reached by a cursor (the first page's stands). Known without
    /// merging anything (what the answer's validator names).
    public func currentToken(_ statuses: [Status]) -> SyncToken? {
        guard cursor == nil else { return nil }
        var token = SyncToken()
        for (p, status) in statuses.enumerated() {
            guard case .ok(let data) = status, data.changes.current.seq > 0 else { continue }
            token[ids[p]] = SyncToken.Position(through: data.changes.current)
        }
        return token
    }

    /// With `sync`: from each podcast, the episodes the token says the client has not seen, in
    /// the order they were seen, at most `limit` in all (the newest heads first); the token
    /// moves past what is sent, so `page.next` (carrying it) resumes exactly there.
    private func selectUnseen(_ statuses: [Status], _ sync: SyncToken) -> Selection {
        var token = sync.keeping(ids)
        // Each loaded podcast's data, bound once: matching `.ok(let data)` copies the payload (a
        // retain and release per field), and the merge looks at every podcast for each episode
        // it picks (a storm's refreshes spent a fifth of their CPU on those copies).
        let loaded: [EpisodeFeedData?] = statuses.map { if case .ok(let data) = $0 { data } else { nil } }
        var unseen: [EpisodeUnseen?] = []
        var total = 0
        for (p, data) in loaded.enumerated() {
            guard let data else {
                unseen.append(nil)
                continue
            }
            let u = data.unseen(since: sync[ids[p]])
            total += u.indices.count
            unseen.append(u)
        }
        // Per podcast, how far into its unseen episodes the answer goes, and the date of the
        // next one (nil: none left): the newest head goes next, the first podcast on a tie.
        var taken = [Int](repeating: 0, count: ids.count)
        var heads: [Int64?] = zip(loaded, unseen).map { data, u in
            guard let data, let u, let first = u.indices.first else { return nil }
            return data.entries[first].published
        }
        var picked: [(podcast: Int, entry: Int, published: Int64)] = []
        var bytes = 0
        while picked.count < limit {
            var best = -1, newest = Int64.min
            for (p, head) in heads.enumerated() {
                if let head, best < 0 || head > newest { (best, newest) = (p, head) }
            }
            guard best >= 0, let u = unseen[best], let data = loaded[best] else { break }
            let entry = u.indices[taken[best]]
            // A page that fits a stream's bound, so a slow reader always gets through one (the
            // rest follows, resumed from the token); its first episode goes whatever its size.
            let size = data.entries[entry].jsonBytes
            if let maxItemBytes, !picked.isEmpty, bytes + size > maxItemBytes { break }
            bytes += size
            picked.append((best, entry, newest))
            taken[best] += 1
            heads[best] = taken[best] < u.indices.count ? data.entries[u.indices[taken[best]]].published : nil
        }
        for (p, data) in loaded.enumerated() {
            guard let data, let u = unseen[p] else { continue }
            token[ids[p]] = data.position(after: taken[p], of: u, from: sync[ids[p]])
        }
        picked.sort { a, b in
            if a.published != b.published { return a.published > b.published }
            return a.podcast != b.podcast ? a.podcast < b.podcast : a.entry < b.entry
        }
        let more = picked.count < total
        var selection = Selection(
            items: picked.map { ($0.podcast, $0.entry) }, total: total, next: more ? (path + "&sync=" + token.encoded, nil) : nil, token: token,
            resync: unseen.map { $0?.resync ?? false })
        selection.removed = unseen.map { $0?.removed ?? [] }
        selection.changed = Array(repeating: [], count: ids.count)
        for ref in picked {
            guard let data = loaded[ref.podcast], let u = unseen[ref.podcast], data.wasHad(ref.entry, by: u) else { continue }
            selection.changed[ref.podcast].append(data.id(ref.entry))
        }
        return selection
    }

    /// The answer's path and query up to what moves from page to page.
    private var path: String { "/episodes?podcasts=" + ids.map(String.init).joined(separator: ",") + "&limit=\(limit)" }

    /// The answer's JSON and its `Link` value: the selected episodes, then one entry per
    /// podcast in the order asked, the page, and the sync token.
    /// Not a cache's representation: the batch's ETag is a hash of its parts (the route's).
    public func render(_ statuses: [Status], _ selection: Selection) -> (body: [UInt8], link: String?) {
        // Each episode's JSON (an episode whose block cannot be read, damaged data, is left out).
        let items = selection.items.compactMap { ref -> (podcast: Int, json: ArraySlice<UInt8>)? in
            guard case .ok(let data) = statuses[ref.podcast], let episode = data.episode(ref.entry) else { return nil }
            return (ref.podcast, episode.json)
        }
        var out: [UInt8] = []
        out += #"{"source":"rss","count":"#.utf8
        out += String(items.count).utf8
        out += #","items":["#.utf8
        for (n, item) in items.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            Self.appendItem(podcast: ids[item.podcast], item.json, to: &out)
        }
        out += #"],"podcasts":["#.utf8
        for (p, status) in statuses.enumerated() {
            if p > 0 { out.append(UInt8(ascii: ",")) }
            Self.appendPodcast(
                ids[p], status, resync: selection.resync[p], removed: p < selection.removed.count ? selection.removed[p] : [],
                changed: p < selection.changed.count ? selection.changed[p] : [], to: &out)
        }
        out += #"],"page":"#.utf8
        EpisodePage.json(size: limit, total: selection.total, next: selection.next?.url, cursor: selection.next?.cursor, into: &out)
        out += #","syncToken":"#.utf8
        Self.appendNullable(selection.token?.encoded, to: &out)
        out.append(UInt8(ascii: "}"))
        return (out, selection.next.map { "<\($0.url)>; rel=\"next\"" })
    }

    /// One podcast's entry of `podcasts`: where it stands in this answer.
    public static func appendPodcast(_ id: Int, _ status: Status, resync: Bool, removed: [String], changed: [String], to out: inout [UInt8]) {
        out += #"{"id":"#.utf8
        out += String(id).utf8
        switch status {
        case .ok(let data):
            out += #","status":"ok","title":"#.utf8
            appendNullable(data.title, to: &out)
            out += #","updated":"#.utf8
            appendNullable(data.updated, to: &out)
            out += #","episodeCount":"#.utf8
            out += String(data.entries.count).utf8
            out += data.truncated ? #","truncated":true"#.utf8 : #","truncated":false"#.utf8
            if let moved = data.movedTo {
                out += #","movedTo":{"url":"#.utf8
                JSONBytes.appendQuoted(moved.url, to: &out)
                out += #","id":"#.utf8
                out += String(moved.id).utf8
                out += "}".utf8
            } else {
                out += #","movedTo":null"#.utf8
            }
            out += #","error":null"#.utf8
        case .error(let code, let message):
            out += #","status":"error","title":null,"updated":null,"episodeCount":null,"truncated":false,"movedTo":null,"error":{"code":"#.utf8
            JSONBytes.appendQuoted(code, to: &out)
            out += #","message":"#.utf8
            JSONBytes.appendQuoted(message, to: &out)
            out += "}".utf8
        case .pending:
            out += #","status":"pending","title":null,"updated":null,"episodeCount":null,"truncated":false,"movedTo":null,"error":null"#.utf8
        }
        out += resync ? #","resync":true"#.utf8 : #","resync":false"#.utf8
        out += #","removed":"#.utf8
        appendStrings(removed, to: &out)
        out += #","changed":"#.utf8
        appendStrings(changed, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// An item of a library's answer: `{"podcastId":N,` then the episode's own fields.
    public static func appendItem(podcast id: Int, _ json: ArraySlice<UInt8>, to out: inout [UInt8]) {
        out += #"{"podcastId":"#.utf8
        out += String(id).utf8
        out.append(UInt8(ascii: ","))
        out += json.dropFirst()
    }

    /// A JSON array of strings.
    static func appendStrings(_ texts: [String], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (n, text) in texts.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            JSONBytes.appendQuoted(text, to: &out)
        }
        out.append(UInt8(ascii: "]"))
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
