import EpisodeSync
import Primitives

/// One page of an episode list (a podcast's, or a batch's merged across podcasts): which
/// entries, how many match in all, and where the next page starts. Pure index work: the
/// entries' JSON is already encoded.
public struct EpisodePage: Sendable, Equatable {
    /// Indices of the entries on this page, in list order.
    public let picked: [Int]
    /// Entries of the whole list that match (`since`).
    public let total: Int
    public let next: EpisodeCursor?

    /// `anchor(i)` and `matches(i)` describe entry `i` of `count`. A cursor resumes after the
    /// entry it names: at its index when that entry is still there (an unchanged list: nothing
    /// repeated or skipped), else after wherever the entry moved (episodes were added), else at
    /// its index.
    public init(count: Int, limit: Int, cursor: EpisodeCursor?, anchor: (Int) -> UInt64, matches: (Int) -> Bool) {
        var start = 0
        if let cursor {
            if cursor.index <= count, anchor(cursor.index - 1) == cursor.anchor {
                start = cursor.index
            } else if let moved = (0..<count).first(where: { anchor($0) == cursor.anchor }) {
                start = moved + 1
            } else {
                start = min(cursor.index, count)
            }
        }
        var picked: [Int] = []
        picked.reserveCapacity(min(limit, count))
        var total = 0
        var more = false
        for i in 0..<count where matches(i) {
            total += 1
            if i < start { continue }
            if picked.count < limit { picked.append(i) } else { more = true }
        }
        self.picked = picked
        self.total = total
        next = more ? picked.last.map { EpisodeCursor(index: $0 + 1, anchor: anchor($0)) } : nil
    }

    /// `"page":` … as the episode lists write it: `{"size","total","next","nextCursor"}`.
    public static func json(size: Int, total: Int, next: String?, cursor: String?, into out: inout [UInt8]) {
        out += #"{"size":"#.utf8
        out += String(size).utf8
        out += #","total":"#.utf8
        out += String(total).utf8
        out += #","next":"#.utf8
        if let next { JSONBytes.appendQuoted(next, to: &out) } else { out += "null".utf8 }
        out += #","nextCursor":"#.utf8
        if let cursor { JSONBytes.appendQuoted(cursor, to: &out) } else { out += "null".utf8 }
        out.append(UInt8(ascii: "}"))
    }
}

extension EpisodeFeedData {
    /// The page of this podcast's episodes a request asks for: the channel, `count`, the
    /// episodes, `page` and the sync token, with a `Link: rel="next"` when there is more.
    /// With `sync`: only the episodes the token says the client has not seen (`EpisodeUnseen`),
    /// in feed order. Every answer that gives a token (all but a page reached by a cursor) is
    /// validated by the state it brings the client to (`stateETag`), not by its bytes, so asking
    /// with the token and the ETag of the answer that gave it is a 304 until something changes.
    /// nil when an episode's block cannot be read (damaged data).
    public func page(podcastID: Int, limit: Int, since: Int?, cursor: EpisodeCursor?, sync: SyncToken? = nil) -> Representation? {
        let scope = String(podcastID)
        let picked: [Int], total: Int, next: (url: String, cursor: String?)?, token: SyncToken?, resync: Bool
        var removed: [String] = [], changed: [String] = []
        if let sync {
            let unseen = self.unseen(since: sync[podcastID])
            let taken = min(limit, unseen.indices.count)
            picked = unseen.indices.prefix(taken).sorted()
            total = unseen.indices.count
            var moved = SyncToken()
            moved[podcastID] = position(after: taken, of: unseen, from: sync[podcastID])
            token = moved
            resync = unseen.resync
            removed = unseen.removed
            changed = picked.filter { wasHad($0, by: unseen) }.map { id($0) }
            next = taken < total ? ("/podcasts/\(podcastID)/episodes?limit=\(limit)&sync=" + moved.encoded, nil) : nil
        } else {
            let cut = EpisodePage(
                count: entries.count, limit: limit, cursor: cursor, anchor: { entries[$0].anchor },
                matches: { since == nil || (entries[$0].published != Self.undated && entries[$0].published > Int64(since ?? 0)) })
            picked = cut.picked
            total = cut.total
            next = cut.next.map { next in
                let text = next.encoded(scope: scope)
                return ("/podcasts/\(podcastID)/episodes?limit=\(limit)" + (since.map { "&since=" + Timestamp.format($0) } ?? "") + "&cursor=\(text)", text)
            }
            // The first page names where the client stands; a page reached by a cursor does not (the first one's stands).
            var current = SyncToken()
            if changes.current.seq > 0 { current[podcastID] = SyncToken.Position(through: changes.current) }
            token = cursor == nil ? current : nil
            resync = false
        }
        let encodedToken = token?.encoded
        var items: [ArraySlice<UInt8>] = []
        items.reserveCapacity(picked.count)
        for i in picked {
            guard let episode = episode(i) else { return nil }
            items.append(episode.json)
        }
        var out: [UInt8] = []
        out.reserveCapacity(head.count + 160 + (encodedToken?.utf8.count ?? 0) + items.reduce(0) { $0 + $1.count + 1 })
        out += head
        out += #","count":"#.utf8
        out += String(picked.count).utf8
        out += #","items":["#.utf8
        for (n, json) in items.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            out += json
        }
        out += #"],"page":"#.utf8
        EpisodePage.json(size: limit, total: total, next: next?.url, cursor: next?.cursor, into: &out)
        out += #","syncToken":"#.utf8
        if let encodedToken { JSONBytes.appendQuoted(encodedToken, to: &out) } else { out += "null".utf8 }
        out += resync ? #","resync":true,"removed":"#.utf8 : #","resync":false,"removed":"#.utf8
        EpisodeBatch.appendStrings(removed, to: &out)
        out += #","changed":"#.utf8
        EpisodeBatch.appendStrings(changed, to: &out)
        out.append(UInt8(ascii: "}"))
        let link = next.map { "<\($0.url)>; rel=\"next\"" }
        // A page reached by a cursor gives no token: its validator is its bytes.
        guard let encodedToken else { return Representation(out, link: link) }
        return Representation(out, link: link, etag: stateETag(podcastID: podcastID, reached: encodedToken))
    }

    /// The validator of an answer that gives the token `reached` (encoded): the state it brings
    /// its client to (the token) and what the data shows (`shownHash`), not the answer's bytes.
    /// The answer that gave a token (with or without `sync`, whatever its `limit`) and the empty
    /// answer to `sync=` with that token, once nothing changed, share it: asked with that ETag,
    /// the refresh is a 304. Strong (RFC 9110 §8.8.1): for one URL (one query, one token asked
    /// with) the answer is a function of the data, so the tag changes whenever its bytes would.
    func stateETag(podcastID: Int, reached: String) -> String {
        var state = Array("episodes|\(podcastID)|\(reached)|".utf8)
        LittleEndianBytes.append(shownHash, 8, to: &state)
        return ETag.strong(named: XXH64.hash(state))
    }

    /// A hash of all that answers cut from this data can show: the channel (with `truncated`
    /// and `movedTo`), each episode's content and stamp in feed order, and the history tokens
    /// are read against. Not the publisher's hints nor how the episodes lie in blocks, so a
    /// refresh that changes nothing an answer shows leaves it as it was, on every replica.
    public var shownHash: UInt64 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + 12 * changes.versions.count + 16 * entries.count + head.count)
        LittleEndianBytes.append(UInt64(changes.versions.count), 4, to: &bytes)
        for v in changes.versions {
            LittleEndianBytes.append(UInt64(v.seq), 4, to: &bytes)
            LittleEndianBytes.append(UInt64(v.id), 4, to: &bytes)
            LittleEndianBytes.append(UInt64(v.changes), 4, to: &bytes)
        }
        LittleEndianBytes.append(UInt64(entries.count), 4, to: &bytes)
        for e in entries {
            // The hash of its JSON and chapters: its date, id and anchor are read from them.
            LittleEndianBytes.append(e.contentHash, 8, to: &bytes)
            LittleEndianBytes.append(UInt64(e.stamp.seq), 4, to: &bytes)
            LittleEndianBytes.append(UInt64(e.stamp.ordinal), 4, to: &bytes)
        }
        bytes += head
        return XXH64.hash(bytes)
    }
}
