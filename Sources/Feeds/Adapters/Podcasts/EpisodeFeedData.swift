import FeedFormats
import Primitives

/// A podcast's feed, parsed and normalised once per refresh, kept as the data every page of
/// its episodes is cut from: whatever the limit, `since`, cursor or sync token (and a batch
/// over several podcasts), one download and one parse. Each episode's JSON is encoded once; a
/// page is the concatenation of its episodes' bytes, so cutting one is flat in the feed's size
/// apart from one pass over a small index. It also carries when FeedProxy saw each episode
/// (`EpisodeChangeLog`), carried over from the data it replaces.
///
/// Layout (little-endian; read back like network input, since it may come from the shared tier):
/// `FPEP` · version · u32 episode count · u32 head length · u16 title length · u8 updated length ·
/// u16 version count · per version {u32 seq, u32 id, u32 changes} ·
/// per episode {i64 published (Int64.min: undated), u64 anchor, u32 offset, u32 length, u32 chapters length,
/// u32 stamp seq, u32 stamp ordinal, u64 content hash} ·
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
        /// When FeedProxy first saw the episode as it is now.
        public let stamp: EpisodeStamp
        /// The hash of its JSON and chapters: a changed episode hashes differently.
        public let contentHash: UInt64
    }

    public let title: String?
    /// The newest episode's date, as the feed gave it.
    public let updated: String?
    public let head: ArraySlice<UInt8>
    public let entries: [Entry]
    public let changes: EpisodeChangeLog

    static let magic = Array("FPEP".utf8)
    /// The layout's version: data of another (an older replica's, in the shared tier) is not read.
    public static let version: UInt8 = 3
    static let undated = Int64.min
    /// The most episodes kept of one feed (a daily show of eight years).
    public static let maxEpisodes = 5_000
    static let entryBytes = 44

    /// Parses `body` and encodes the channel and each episode once. Stops adding episodes
    /// (the oldest, in feed order) before the data would pass `maxBytes`.
    /// `images`: with the image proxy on, every image gets its proxied sizes and show notes'
    /// images are proxied. `previous`: the data this refresh replaces (nil: none known), whose
    /// episodes keep the stamps of when they were first seen; `seenAt`: now, in Unix seconds.
    public static func build(
        feed body: [UInt8], contentType: String?, lookupTitle: String?, base: String?, maxBytes: Int, images: ImageProxyLinks? = nil,
        previous: EpisodeFeedData? = nil, seenAt: Int = Timestamp.now()
    ) throws(ClientError) -> [UInt8] {
        let parsed = try RSSParser.parse(body, limit: maxEpisodes, contentType: contentType, base: base, imageSource: images.map { links in links.notesImage })
        let channel = EpisodesEnvelope(
            title: parsed.title ?? lookupTitle, updated: parsed.episodes.first?.published, description: parsed.description, author: parsed.author,
            imageUrl: parsed.imageUrl, images: images?.images(for: parsed.imageUrl), link: parsed.link, language: parsed.language,
            podcastGuid: parsed.podcastGuid, locked: parsed.locked,
            funding: parsed.funding, persons: parsed.persons, newFeedUrl: parsed.newFeedUrl, count: 0, items: [], page: nil)
        let whole = try FeedJSON.encode(channel)
        let tail = Array(#","count":0,"items":[],"page":null,"syncToken":null,"resync":false}"#.utf8)
        guard whole.count > tail.count, Array(whole.suffix(tail.count)) == tail else { throw .badUpstreamResponse("the podcast feed") }
        let head = whole.dropLast(tail.count)
        let title = Array((channel.title ?? "").utf8.prefix(0xFFFF)), updated = Array((channel.updated ?? "").utf8.prefix(0xFF))
        struct Encoded {
            let published: Int64
            let anchor: UInt64
            let offset: Int
            let length: Int
            let chapters: Int
            let hash: UInt64
        }
        var encoded: [Encoded] = []
        var area: [UInt8] = []
        // What the versions may take at most (every episode stamped by a version of its own, and the kept ones).
        let fixed = 4 + 1 + 4 + 4 + 2 + 1 + 2 + 12 * (parsed.episodes.count + EpisodeChangeLog.keptVersions) + title.count + updated.count + head.count
        for var episode in parsed.episodes {
            episode.images = images?.images(for: episode.imageUrl)
            let json = try FeedJSON.encode(episode)
            let chapters = episode.inlineChapters.isEmpty ? [] : try FeedJSON.encode(episode.inlineChapters)
            let size = json.count + chapters.count
            guard fixed + (encoded.count + 1) * entryBytes + area.count + size <= maxBytes, area.count + size <= Int(UInt32.max) else { break }
            let offset = area.count
            area += json
            area += chapters
            encoded.append(
                Encoded(
                    published: episode.published.flatMap(Timestamp.parseISO8601).map(Int64.init) ?? undated,
                    anchor: EpisodeCursor.anchor(id: episode.id, json: json[...]), offset: offset, length: json.count, chapters: chapters.count,
                    hash: area[offset...].withUnsafeBytes { XXH64.hash($0) }))
        }
        let known = previous.map { old in
            (stamps: Dictionary(old.entries.map { ($0.contentHash, $0.stamp) }, uniquingKeysWith: { a, _ in a }), log: old.changes)
        }
        let (stamps, log) = EpisodeChangeLog.stamp(encoded.map(\.hash), after: known, at: seenAt)
        var out = magic + [version]
        out.reserveCapacity(fixed + encoded.count * entryBytes + area.count)
        append(UInt64(encoded.count), 4, to: &out)
        append(UInt64(head.count), 4, to: &out)
        append(UInt64(title.count), 2, to: &out)
        append(UInt64(updated.count), 1, to: &out)
        append(UInt64(log.versions.count), 2, to: &out)
        for v in log.versions {
            append(UInt64(v.seq), 4, to: &out)
            append(UInt64(v.id), 4, to: &out)
            append(UInt64(v.changes), 4, to: &out)
        }
        for (e, stamp) in zip(encoded, stamps) {
            append(UInt64(bitPattern: e.published), 8, to: &out)
            append(e.anchor, 8, to: &out)
            append(UInt64(e.offset), 4, to: &out)
            append(UInt64(e.length), 4, to: &out)
            append(UInt64(e.chapters), 4, to: &out)
            append(UInt64(stamp.seq), 4, to: &out)
            append(UInt64(stamp.ordinal), 4, to: &out)
            append(e.hash, 8, to: &out)
        }
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
            let headLength = r.int(4), let titleLength = r.int(2), let updatedLength = r.int(1), let versionCount = r.int(2),
            versionCount <= Self.maxEpisodes + EpisodeChangeLog.keptVersions
        else { return nil }
        var versions: [EpisodeChangeLog.Version] = []
        versions.reserveCapacity(versionCount)
        for _ in 0..<versionCount {
            guard let seq = r.uint32(), let id = r.uint32(), let changes = r.uint32(), seq > (versions.last?.seq ?? 0) else { return nil }
            versions.append(EpisodeChangeLog.Version(seq: seq, id: id, changes: changes))
        }
        let changes = EpisodeChangeLog(versions: versions)
        var raw: [(Int64, UInt64, Int, Int, Int, EpisodeStamp, UInt64)] = []
        raw.reserveCapacity(n)
        for _ in 0..<n {
            guard let published = r.int64(), let anchor = r.uint(8), let offset = r.int(4), let length = r.int(4), let chapters = r.int(4),
                let seq = r.uint32(), let ordinal = r.uint32(), let hash = r.uint(8),
                // Every stamp names a version the log holds, within its changes.
                let stamped = changes.version(seq), ordinal < stamped.changes
            else { return nil }
            raw.append((published, anchor, offset, length, chapters, EpisodeStamp(seq: seq, ordinal: ordinal), hash))
        }
        guard let title = r.take(titleLength), let updated = r.take(updatedLength), let head = r.take(headLength) else { return nil }
        let area = r.rest
        var entries: [Entry] = []
        entries.reserveCapacity(n)
        for (published, anchor, offset, length, chapters, stamp, hash) in raw {
            guard length > 0, offset <= area.count, length <= area.count - offset, chapters <= area.count - offset - length else { return nil }
            let start = area.startIndex + offset
            entries.append(
                Entry(
                    published: published, anchor: anchor, json: area[start..<(start + length)],
                    chapters: area[(start + length)..<(start + length + chapters)], stamp: stamp, contentHash: hash))
        }
        self.title = title.isEmpty ? nil : String(decoding: title, as: UTF8.self)
        self.updated = updated.isEmpty ? nil : String(decoding: updated, as: UTF8.self)
        self.head = head
        self.entries = entries
        self.changes = changes
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

        mutating func uint32() -> UInt32? { uint(4).map { UInt32(truncatingIfNeeded: $0) } }

        var rest: ArraySlice<UInt8> { bytes[at...] }
    }
}
