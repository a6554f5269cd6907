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
    /// episodes and `page`, with a `Link: rel="next"` when there is more.
    public func page(podcastID: Int, limit: Int, since: Int?, cursor: EpisodeCursor?) -> Representation {
        let cut = EpisodePage(
            count: entries.count, limit: limit, cursor: cursor, anchor: { entries[$0].anchor },
            matches: { since == nil || (entries[$0].published != Self.undated && entries[$0].published > Int64(since ?? 0)) })
        let scope = String(podcastID)
        let nextCursor = cut.next?.encoded(scope: scope)
        let nextURL = nextCursor.map {
            "/podcasts/\(podcastID)/episodes?limit=\(limit)" + (since.map { "&since=" + Timestamp.format($0) } ?? "") + "&cursor=\($0)"
        }
        var out: [UInt8] = []
        out.reserveCapacity(head.count + 160 + cut.picked.reduce(0) { $0 + entries[$1].json.count + 1 })
        out += head
        out += #","count":"#.utf8
        out += String(cut.picked.count).utf8
        out += #","items":["#.utf8
        for (n, i) in cut.picked.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            out += entries[i].json
        }
        out += #"],"page":"#.utf8
        EpisodePage.json(size: limit, total: cut.total, next: nextURL, cursor: nextCursor, into: &out)
        out.append(UInt8(ascii: "}"))
        return Representation(out, link: nextURL.map { "<\($0)>; rel=\"next\"" })
    }
}
