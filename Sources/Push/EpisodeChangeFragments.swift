import EpisodeSync
import Feeds
import Primitives

/// One event per distinct change (issue 66): when a podcast's data changes from the version its
/// streams were last told, what is new in it (its episodes' JSON, its entry of `podcasts`, its
/// removals) is worked out once, a fragment, and every stream up to date with that version gets
/// an event assembled from the fragments of the podcasts of its library that changed this turn:
/// a copy of their bytes and its own token, no reading of the other podcasts of the library.
/// A stream anywhere else (a backlog still being sent, a position another replica gave, more
/// than `limit` new) takes the general path (`EpisodeBatch` over its whole library).
package final class EpisodeChangeFragments: Sendable {
    /// A podcast that changed this turn: the version its streams were told before (`.unknown`:
    /// none was, it was loading).
    enum Change: Sendable {
        case from(EpisodeChangeLog.Version)
        case unknown
    }

    struct Fragment: Sendable {
        let id: Int
        /// Its new episodes: when published (newest first across podcasts), and the item's JSON.
        let items: [(published: Int64, json: [UInt8])]
        let itemBytes: Int
        /// Its entry of `podcasts`.
        let entry: [UInt8]
        /// Where a client that has it stands.
        let to: SyncToken.Position
    }

    private enum Made {
        case fragment(Fragment)
        /// The general path: unseen from that version is not a plain change (resync, ahead).
        case general
    }

    private let changes: [Int: Change]
    private let status: @Sendable (Int) -> EpisodeBatch.Status
    private let made = Locked<[Int: Made]>([:])

    init(changes: [Int: Change], status: @escaping @Sendable (Int) -> EpisodeBatch.Status) {
        self.changes = changes
        self.status = status
    }

    var isEmpty: Bool { changes.isEmpty }

    /// What a stream gets of this turn's changes.
    enum Outcome {
        /// Its position for a changed podcast is not the version told before, or the news do
        /// not fit one event: `EpisodeBatch` over its whole library.
        case general
        /// Its podcasts changed in nothing it is told of (a revalidation, a retitled channel).
        case nothing
        case event(bytes: [UInt8], token: SyncToken)
    }

    /// The event bringing a stream of `ids` at `token` past this turn's changes.
    func event(ids: [Int], token: SyncToken, limit: Int, maxItemBytes: Int) -> Outcome {
        var fragments: [Fragment] = []
        for id in ids {
            guard let change = changes[id] else { continue }
            guard case .from(let version) = change, token[id] == SyncToken.Position(through: version),
                case .fragment(let fragment) = fragment(id, from: version)
            else { return .general }
            fragments.append(fragment)
        }
        guard !fragments.isEmpty else { return .general }
        let count = fragments.reduce(0) { $0 + $1.items.count }
        let bytes = fragments.reduce(0) { $0 + $1.itemBytes }
        guard count <= limit, count <= 1 || bytes <= maxItemBytes else { return .general }
        var next = token
        for f in fragments { next[f.id] = f.to }
        if count == 0, next == token { return .nothing }
        let tokenText = next.encoded
        // Newest first across podcasts; ties in the order of the library, then the feed's.
        var items: [(published: Int64, podcast: Int, index: Int)] = []
        items.reserveCapacity(count)
        for (p, f) in fragments.enumerated() {
            for (i, item) in f.items.enumerated() { items.append((item.published, p, i)) }
        }
        items.sort { a, b in a.published != b.published ? a.published > b.published : (a.podcast, a.index) < (b.podcast, b.index) }
        // The event written as it goes out: JSON holds no line break (every string's are escaped),
        // so its data is one `data:` line.
        var body: [UInt8] = []
        body.reserveCapacity(bytes + fragments.reduce(0) { $0 + $1.entry.count } + 2 * tokenText.utf8.count + 200)
        body += "id: ".utf8
        body += tokenText.utf8
        body += "\nevent: episodes\ndata: ".utf8
        body += #"{"source":"rss","count":"#.utf8
        body += String(count).utf8
        body += #","items":["#.utf8
        for (n, item) in items.enumerated() {
            if n > 0 { body.append(UInt8(ascii: ",")) }
            body += fragments[item.podcast].items[item.index].json
        }
        // Only the podcasts it brings news of: the others stand where the last event left them.
        body += #"],"podcasts":["#.utf8
        for (n, f) in fragments.enumerated() {
            if n > 0 { body.append(UInt8(ascii: ",")) }
            body += f.entry
        }
        body += #"],"page":"#.utf8
        EpisodePage.json(size: limit, total: count, next: nil, cursor: nil, into: &body)
        body += #","syncToken":"#.utf8
        JSONBytes.appendQuoted(tokenText, to: &body)
        body += "}\n\n".utf8
        return .event(bytes: body, token: next)
    }

    /// Podcast `id`'s news since `version`, worked out once a turn.
    private func fragment(_ id: Int, from version: EpisodeChangeLog.Version) -> Made {
        if let known = made.withLock({ $0[id] }) { return known }
        let result: Made
        if case .ok(let data) = status(id) {
            let unseen = data.unseen(since: SyncToken.Position(through: version))
            if unseen.resync || unseen.ahead {
                result = .general
            } else {
                var items: [(published: Int64, json: [UInt8])] = []
                var itemBytes = 0, changed: [String] = []
                for i in unseen.indices {
                    guard let episode = data.episode(i) else { continue }
                    var json: [UInt8] = []
                    EpisodeBatch.appendItem(podcast: id, episode.json, to: &json)
                    items.append((data.entries[i].published, json))
                    itemBytes += data.entries[i].jsonBytes
                    if data.wasHad(i, by: unseen) { changed.append(data.id(i)) }
                }
                var entry: [UInt8] = []
                EpisodeBatch.appendPodcast(id, .ok(data), resync: false, removed: unseen.removed, changed: changed, to: &entry)
                result = .fragment(Fragment(id: id, items: items, itemBytes: itemBytes, entry: entry, to: SyncToken.Position(through: data.changes.current)))
            }
        } else {
            result = .general
        }
        made.withLock { $0[id] = result }
        return result
    }
}
