import FeedFormats
import Primitives

/// A podcast's feed, parsed and normalised once per refresh, kept as the data every page of
/// its episodes is cut from: whatever the limit, `since` or cursor (and a batch over several
/// podcasts), one download and one parse. Each episode's JSON is encoded once; a page is the
/// concatenation of its episodes' bytes, so cutting one is flat in the feed's size apart from
/// one pass over a small index.
///
/// Layout (little-endian; read back like network input, since it may come from the shared tier):
/// `FPEP` · version · u32 episode count · u32 head length · u16 title length · u8 updated length ·
/// per episode {i64 published (Int64.min: undated), u64 anchor, u32 offset, u32 length, u32 chapters length} ·
/// title · updated · head (the channel's JSON up to `,"count":`) · the episodes' JSON, each followed
/// by its inline chapters' JSON (empty when it has none).
public struct EpisodeFeedData: Sendable {
    public struct Entry: Sendable {
        public let published: Int64
        public let anchor: UInt64
        public let json: ArraySlice<UInt8>
        /// Inline (Podlove) chapters as `[chapter…]` JSON, checked against the episode's
        /// length; empty when the feed gives none.
        public let chapters: ArraySlice<UInt8>
    }

    public let title: String?
    /// The newest episode's date, as the feed gave it.
    public let updated: String?
    public let head: ArraySlice<UInt8>
    public let entries: [Entry]

    static let magic = Array("FPEP".utf8)
    static let version: UInt8 = 2
    static let undated = Int64.min
    /// The most episodes kept of one feed (a daily show of eight years).
    public static let maxEpisodes = 5_000

    /// Parses `body` and encodes the channel and each episode once. Stops adding episodes
    /// (the oldest, in feed order) before the data would pass `maxBytes`.
    /// `images`: with the image proxy on, every image gets its proxied sizes and show notes'
    /// images are proxied.
    public static func build(
        feed body: [UInt8], contentType: String?, lookupTitle: String?, base: String?, maxBytes: Int, images: ImageProxyLinks? = nil
    ) throws(ClientError) -> [UInt8] {
        let parsed = try RSSParser.parse(body, limit: maxEpisodes, contentType: contentType, base: base, imageSource: images.map { links in links.notesImage })
        let channel = EpisodesEnvelope(
            title: parsed.title ?? lookupTitle, updated: parsed.episodes.first?.published, description: parsed.description, author: parsed.author,
            imageUrl: parsed.imageUrl, images: images?.images(for: parsed.imageUrl), link: parsed.link, language: parsed.language,
            podcastGuid: parsed.podcastGuid, locked: parsed.locked,
            funding: parsed.funding, persons: parsed.persons, newFeedUrl: parsed.newFeedUrl, count: 0, items: [], page: nil)
        let whole = try FeedJSON.encode(channel)
        let tail = Array(#","count":0,"items":[],"page":null}"#.utf8)
        guard whole.count > tail.count, Array(whole.suffix(tail.count)) == tail else { throw .badUpstreamResponse("the podcast feed") }
        let head = whole.dropLast(tail.count)
        let title = Array((channel.title ?? "").utf8.prefix(0xFFFF)), updated = Array((channel.updated ?? "").utf8.prefix(0xFF))
        var index: [UInt8] = []
        var area: [UInt8] = []
        var count = 0
        let fixed = 4 + 1 + 4 + 4 + 2 + 1 + title.count + updated.count + head.count
        for var episode in parsed.episodes {
            episode.images = images?.images(for: episode.imageUrl)
            let json = try FeedJSON.encode(episode)
            let chapters = episode.inlineChapters.isEmpty ? [] : try FeedJSON.encode(episode.inlineChapters)
            let size = json.count + chapters.count
            guard fixed + index.count + 28 + area.count + size <= maxBytes, area.count + size <= Int(UInt32.max) else { break }
            let published = episode.published.flatMap(Timestamp.parseISO8601).map(Int64.init) ?? undated
            append(UInt64(bitPattern: published), 8, to: &index)
            append(EpisodeCursor.anchor(id: episode.id, json: json[...]), 8, to: &index)
            append(UInt64(area.count), 4, to: &index)
            append(UInt64(json.count), 4, to: &index)
            append(UInt64(chapters.count), 4, to: &index)
            area += json
            area += chapters
            count += 1
        }
        var out = magic + [version]
        out.reserveCapacity(fixed + index.count + area.count)
        append(UInt64(count), 4, to: &out)
        append(UInt64(head.count), 4, to: &out)
        append(UInt64(title.count), 2, to: &out)
        append(UInt64(updated.count), 1, to: &out)
        out += index
        out += title
        out += updated
        out += head
        out += area
        return out
    }

    /// The data in `blob`, or nil when it is not data `build` wrote (damaged, or another version).
    public init?(_ blob: [UInt8]) {
        var r = Reader(bytes: blob)
        guard r.take(4).map(Array.init) == Self.magic, r.take(1)?.first == Self.version, let n = r.int(4), n <= Self.maxEpisodes,
            let headLength = r.int(4), let titleLength = r.int(2), let updatedLength = r.int(1)
        else { return nil }
        var raw: [(Int64, UInt64, Int, Int, Int)] = []
        raw.reserveCapacity(n)
        for _ in 0..<n {
            guard let published = r.int64(), let anchor = r.uint(8), let offset = r.int(4), let length = r.int(4), let chapters = r.int(4) else { return nil }
            raw.append((published, anchor, offset, length, chapters))
        }
        guard let title = r.take(titleLength), let updated = r.take(updatedLength), let head = r.take(headLength) else { return nil }
        let area = r.rest
        var entries: [Entry] = []
        entries.reserveCapacity(n)
        for (published, anchor, offset, length, chapters) in raw {
            guard length > 0, offset <= area.count, length <= area.count - offset, chapters <= area.count - offset - length else { return nil }
            let start = area.startIndex + offset
            entries.append(
                Entry(
                    published: published, anchor: anchor, json: area[start..<(start + length)],
                    chapters: area[(start + length)..<(start + length + chapters)]))
        }
        self.title = title.isEmpty ? nil : String(decoding: title, as: UTF8.self)
        self.updated = updated.isEmpty ? nil : String(decoding: updated, as: UTF8.self)
        self.head = head
        self.entries = entries
    }

    static func append(_ value: UInt64, _ count: Int, to out: inout [UInt8]) {
        for i in 0..<count { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    /// Bounds-checked reads from the front.
    struct Reader {
        let bytes: [UInt8]
        var at = 0

        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, count <= bytes.count - at else { return nil }
            defer { at += count }
            return bytes[at..<(at + count)]
        }

        mutating func uint(_ count: Int) -> UInt64? {
            take(count).map { $0.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        }

        mutating func int(_ count: Int) -> Int? { uint(count).map { Int($0) } }  // count ≤ 4: always fits

        mutating func int64() -> Int64? { uint(8).map { Int64(bitPattern: $0) } }

        var rest: ArraySlice<UInt8> { bytes[at...] }
    }
}
