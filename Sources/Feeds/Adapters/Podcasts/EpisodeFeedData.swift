import EpisodeSync
import FeedFormats
import Primitives

/// A podcast's feed, parsed and normalised once per refresh, kept as the data every page of
/// its episodes is cut from: whatever the limit, `since`, cursor or sync token (and a batch
/// over several podcasts), one download and one parse. Each episode's JSON is encoded once; a
/// page is the concatenation of its episodes' bytes, so cutting one is flat in the feed's size
/// apart from one pass over a small index. It also carries when FeedProxy saw each episode
/// (`EpisodeChangeLog`), carried over from the data it replaces.
///
/// A long feed stays whole: when the episodes' JSON would pass the byte budget, it is kept in
/// blocks of about `blockBytes`, each compressed (a daily show's years of notes shrink about
/// four times), and only the blocks a page needs are inflated when it is cut. What still does
/// not fit (past `maxEpisodes`, or past the budget compressed) is left out, oldest first, and
/// the data says so (`truncated`).
///
/// Layout (little-endian; read back like network input, since it may come from the shared tier):
/// `FPEP` · version · u32 episode count · u32 head length · u16 title length · u8 updated length ·
/// u16 moved-to URL length · u64 moved-to id · u8 flags (1: truncated) · u16 hub length · u16 topic length · u32 publisher's interval · u16 version count · per version {u32 seq, u32 id, u32 changes} ·
/// u32 horizon · u16 tombstone count · per tombstone {u32 seq, u16 id length, id} ·
/// u32 block count · per block {u32 offset, u32 stored length, u32 length} ·
/// per episode {i64 published (Int64.min: undated), u64 anchor, u32 block, u32 offset, u32 length,
/// u32 chapters length, u32 stamp seq, u32 stamp ordinal, u64 content hash, u32 first-seen seq,
/// u32 first-seen ordinal, u16 id length} ·
/// title · updated · moved-to URL · hub · topic · the episodes' ids · head (the channel's JSON up to `,"count":`) · the blocks: the episodes' JSON,
/// each followed by its inline chapters' JSON (empty when it has none), gzip-compressed when a
/// block's stored length is less than its length.
public struct EpisodeFeedData: Sendable {
    public struct Entry: Sendable {
        public let published: Int64
        public let anchor: UInt64
        /// When FeedProxy first saw the episode as it is now.
        public let stamp: EpisodeStamp
        /// The hash of its JSON and chapters: a changed episode hashes differently.
        public let contentHash: UInt64
        /// Its first stamp: a client past it had the episode (then a later stamp is a change).
        public let firstSeen: EpisodeStamp
        /// Where its id is in the data's ids.
        let idStart: Int
        let idLength: Int
        let block: Int
        let offset: Int
        let length: Int
        let chaptersLength: Int

        /// The bytes of its JSON in an answer.
        public var jsonBytes: Int { length }
    }

    public let title: String?
    /// The newest episode's date, as the feed gave it.
    public let updated: String?
    public let head: ArraySlice<UInt8>
    public let entries: [Entry]
    public let changes: EpisodeChangeLog
    /// Episodes the feed stopped listing, told to clients whose position is before them.
    public let tombstones: [EpisodeHistory.Tombstone]
    /// Removals of versions up to this are no longer told (see `EpisodeHistory.horizon`).
    public let horizon: UInt32
    /// The feed lists more episodes than are kept: the oldest were left out.
    public let truncated: Bool
    /// The feed moved for good: where, and the id that names it now.
    public let movedTo: MovedFeed?
    /// What the publisher says of reading it again (its WebSub hub and topic, its interval).
    public let hints: PublisherHints
    private let blocks: EpisodeBlocks
    private let ids: ArraySlice<UInt8>

    static let magic = Array("FPEP".utf8)
    /// The layout's version: data of another (an older replica's, in the shared tier) is not read.
    public static let version: UInt8 = 7
    static let undated = Int64.min
    /// The most episodes kept of one feed (a daily show of thirteen years).
    public static let maxEpisodes = EpisodeHistory.maxEpisodes
    static let entryBytes = 58
    /// About this much JSON a compressed block (a page of long notes inflates a few of them).
    static let blockBytes = 64 << 10
    /// Blocks compressed at once (at most what is left out when the budget is reached).
    static let blocksAtOnce = 16

    /// An episode's JSON and inline chapters (`[chapter…]` JSON, checked against its length;
    /// empty when the feed gives none); nil when its block cannot be read (damaged data).
    public func episode(_ i: Int) -> (json: ArraySlice<UInt8>, chapters: ArraySlice<UInt8>)? {
        guard entries.indices.contains(i) else { return nil }
        let e = entries[i]
        guard let block = blocks.bytes(e.block) else { return nil }
        let start = block.startIndex + e.offset
        return (block[start..<(start + e.length)], block[(start + e.length)..<(start + e.length + e.chaptersLength)])
    }

    /// Episode `i`'s id (`guid`, else its enclosure URL); empty when it has none.
    public func id(_ i: Int) -> String {
        guard entries.indices.contains(i) else { return "" }
        let e = entries[i]
        let start = ids.startIndex + e.idStart
        return String(decoding: ids[start..<(start + e.idLength)], as: UTF8.self)
    }

    /// Parses `body` and encodes the channel and each episode once. A feed whose episodes pass
    /// `maxBytes` is kept in compressed blocks; episodes that still do not fit (the oldest by
    /// date, whatever order the feed lists them in) are left out, and the data is `truncated`.
    /// Past `maxEpisodes`, too, the oldest by date are left out (`NewestEpisodes`). The episodes
    /// kept are in the feed's order.
    /// `images`: with the image proxy on, every image gets its proxied sizes and show notes'
    /// images are proxied. `previous`: the data this refresh replaces (nil: none known), whose
    /// episodes keep the stamps of when they were first seen; `history`: the podcast's history
    /// as last recorded (the further along of the two is continued); `seenAt`: now, in Unix seconds.
    /// A feed this long is encoded in parts, one a core (below it the hop costs more than it saves).
    static let parallelEncodingBytes = 1 << 20

    static func encodingParts(_ episodes: Int, bytes: Int) -> Int {
        bytes < parallelEncodingBytes ? 1 : max(1, min(NativeThread.processorCount, episodes))
    }

    public static func build(
        feed body: [UInt8], contentType: String?, lookupTitle: String?, base: String?, maxBytes: Int, images: ImageProxyLinks? = nil,
        previous: EpisodeFeedData? = nil, history: EpisodeHistory? = nil, seenAt: Int = Timestamp.now(), hints: PublisherHints = PublisherHints()
    ) throws(ClientError) -> [UInt8] {
        try built(
            feed: body, contentType: contentType, lookupTitle: lookupTitle, base: base, maxBytes: maxBytes, images: images, previous: previous,
            history: history, seenAt: seenAt, hints: hints
        ).blob
    }

    /// `build`, with the channel as the data's answers show it (what a feed id's podcast is
    /// described by). `movedTo`: given the feed's `itunes:new-feed-url`, where it moved for
    /// good, if it did. `hints`: what the HTTP answer's headers say (the feed's own fill in).
    public static func built(
        feed body: [UInt8], contentType: String?, lookupTitle: String?, base: String?, maxBytes: Int, images: ImageProxyLinks? = nil,
        previous: EpisodeFeedData? = nil, history: EpisodeHistory? = nil, seenAt: Int = Timestamp.now(), hints: PublisherHints = PublisherHints(),
        movedTo: (String?) -> MovedFeed? = { _ in nil }
    ) throws(ClientError) -> (blob: [UInt8], channel: EpisodesEnvelope) {
        let parsed = try RSSParser.parse(body, limit: maxEpisodes, contentType: contentType, base: base, imageSource: images.map { links in links.notesImage })
        var channel = EpisodesEnvelope(
            title: parsed.title ?? lookupTitle, updated: parsed.episodes.first?.published, description: parsed.description, author: parsed.author,
            imageUrl: parsed.imageUrl, images: images?.images(for: parsed.imageUrl), link: parsed.link, language: parsed.language,
            podcastGuid: parsed.podcastGuid, locked: parsed.locked,
            funding: parsed.funding, persons: parsed.persons, newFeedUrl: parsed.newFeedUrl, movedTo: movedTo(parsed.newFeedUrl), count: 0, items: [],
            page: nil)
        struct Encoded: Sendable {
            let published: Int64
            let anchor: UInt64
            /// Where its JSON and then its chapters are in `area`.
            let start: Int
            let jsonEnd: Int
            let end: Int
            let hash: UInt64
            /// Its id as the history keeps it (empty: none, or too long to tell).
            let id: String
            var jsonCount: Int { jsonEnd - start }
            var chaptersCount: Int { end - jsonEnd }

            func shifted(by offset: Int) -> Encoded {
                Encoded(
                    published: published, anchor: anchor, start: start + offset, jsonEnd: jsonEnd + offset, end: end + offset, hash: hash, id: id)
            }
        }
        // Every episode's JSON, then its chapters, one after another in one buffer (no array
        // per episode). A long feed is encoded in parts at once (one a core), joined after.
        let episodes = parsed.episodes
        let partBytes = min(2 * body.count + 4096, 256 << 20)
        let encodePart: @Sendable (Range<Int>, Int) -> (area: [UInt8], encoded: [Encoded])? = { range, capacity in
            let encoder = JSONStreamEncoder(capacity: capacity)
            var encoded: [Encoded] = []
            encoded.reserveCapacity(range.count)
            do {
                for i in range {
                    var episode = episodes[i]
                    episode.images = images?.images(for: episode.imageUrl)
                    let start = encoder.count
                    try encoder.write(episode)
                    let jsonEnd = encoder.count
                    if !episode.inlineChapters.isEmpty { try encoder.write(episode.inlineChapters) }
                    let end = encoder.count
                    encoded.append(
                        encoder.withBytes { area in
                            Encoded(
                                published: NewestEpisodes.date(episode.published),
                                anchor: EpisodeCursor.anchor(
                                    id: episode.id, json: episode.id == nil ? ArraySlice<UInt8>(area[start..<jsonEnd]) : ArraySlice<UInt8>()), start: start,
                                jsonEnd: jsonEnd, end: end,
                                hash: XXH64.hash(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: area[start..<end]))),
                                id: (episode.id ?? "").utf8.count <= EpisodeHistory.maxIDBytes ? episode.id ?? "" : "")
                        })
                }
            } catch {
                return nil
            }
            return (encoder.take(), encoded)
        }
        let parts = Self.encodingParts(episodes.count, bytes: body.count)
        let encodedParts = ParallelWork.map(parts) { part in
            encodePart((episodes.count * part / parts)..<(episodes.count * (part + 1) / parts), partBytes / parts + 4096)
        }
        var area: [UInt8] = []
        var encoded: [Encoded] = []
        encoded.reserveCapacity(episodes.count)
        for part in encodedParts {
            guard let part else { throw ClientError(status: 500, code: "encoding_failed", message: "response could not be encoded") }
            if area.isEmpty {
                // The first part's buffer is the area (no copy of it); the others are appended.
                area = part.area
                encoded = part.encoded
            } else {
                let offset = area.count
                area += part.area
                encoded += part.encoded.map { $0.shifted(by: offset) }
            }
        }
        let total = area.count
        // The history this refresh continues, and the episodes the feed lists (whether or not
        // they fit below): one it still lists is not told as removed when the budget leaves it out.
        let known = EpisodeHistory.newest(previous.map(EpisodeHistory.init), history)
        let listed = Set(encoded.map(\.anchor))
        // What the removals will take: those kept, and the ids of the episodes gone from the feed.
        let removals = min(
            EpisodeHistory.maxTombstones * (6 + EpisodeHistory.maxIDBytes),
            (known?.tombstones.reduce(0) { $0 + 6 + $1.id.utf8.count } ?? 0)
                + (known?.known.reduce(0) { $0 + (listed.contains($1.key) ? 0 : 6 + $1.value.id.utf8.count) } ?? 0))
        // Whole in one plain block when it fits; else compressed blocks, as many as fit.
        let overhead =
            64 + 12 * (encoded.count + EpisodeChangeLog.keptVersions) + encoded.count * entryBytes + encoded.reduce(0) { $0 + $1.id.utf8.count } + removals
            + 4096
        // Plain: `area` is the one block, behind the blob; else the compressed blocks.
        var plain = false
        var blocks: [(stored: [UInt8], length: Int)] = []
        var placed: [(block: Int, offset: Int)] = []
        var truncated = parsed.reachedLimit
        let budget = maxBytes - overhead
        var stored = 0
        if total <= budget {
            for e in encoded { placed.append((0, e.start)) }
            plain = true
            stored = area.count
        } else {
            // The blocks are filled newest first by date (undated last, equal dates in feed
            // order), so what the budget leaves out is the oldest whatever order the feed lists
            // them in (a serial show lists its first episode first). The entries stay in the
            // feed's order: each names its block and offset, wherever that block is. (A feed
            // listed newest first makes the same blocks as its order would.)
            let byDate = encoded.indices.sorted { a, b in
                encoded[a].published != encoded[b].published ? encoded[a].published > encoded[b].published : a < b
            }
            var slots: [(block: Int, offset: Int)?] = Array(repeating: nil, count: encoded.count)
            var next = 0
            filling: while next < byDate.count {
                // A few blocks at a time, compressed at once (one a core), kept in order while they fit.
                var wave: [(raw: [UInt8], offsets: [(entry: Int, offset: Int)])] = []
                while next < byDate.count, wave.count < Self.blocksAtOnce {
                    var raw: [UInt8] = []
                    raw.reserveCapacity(blockBytes)
                    var offsets: [(entry: Int, offset: Int)] = []
                    while next < byDate.count, offsets.isEmpty || raw.count + (encoded[byDate[next]].end - encoded[byDate[next]].start) <= blockBytes {
                        let e = encoded[byDate[next]]
                        offsets.append((byDate[next], raw.count))
                        raw += area[e.start..<e.end]
                        next += 1
                    }
                    wave.append((raw, offsets))
                }
                let raws = wave.map(\.raw)
                let packed = ParallelWork.map(raws.count) { i in Gzip.compress(raws[i], level: 1).flatMap { $0.count < raws[i].count ? $0 : nil } ?? raws[i] }
                for (block, packedBlock) in zip(wave, packed) {
                    guard stored + packedBlock.count <= budget else {
                        truncated = true
                        break filling
                    }
                    stored += packedBlock.count
                    for o in block.offsets { slots[o.entry] = (blocks.count, o.offset) }
                    blocks.append((packedBlock, block.raw.count))
                }
            }
            // The episodes kept, in the feed's order.
            encoded = encoded.indices.filter { slots[$0] != nil }.map { encoded[$0] }
            placed = slots.compactMap { $0 }
        }
        channel.truncated = truncated
        let whole = try FeedJSON.encode(channel)
        let tail = Array(#","count":0,"items":[],"page":null,"syncToken":null,"resync":false,"removed":[],"changed":[]}"#.utf8)
        guard whole.count > tail.count, Array(whole.suffix(tail.count)) == tail else { throw .badUpstreamResponse("the podcast feed") }
        let head = whole.dropLast(tail.count)
        let title = Array((channel.title ?? "").utf8.prefix(0xFFFF)), updated = Array((channel.updated ?? "").utf8.prefix(0xFF))
        // A URL longer than the field is no address to give an app.
        let moved = channel.movedTo.flatMap { $0.url.utf8.count <= 0xFFFF ? $0 : nil }
        let movedURL = Array((moved?.url ?? "").utf8)
        let docInterval = [parsed.ttlSeconds, parsed.updatePeriodSeconds.map { $0 / parsed.updateFrequency }].compactMap { $0 }.max()
        let said = hints.completed(by: PublisherHints(hub: parsed.hub, topic: parsed.selfURL, interval: docInterval))
        let hub = Array((said.hub ?? "").utf8), topic = Array((said.topic ?? "").utf8)
        guard hub.count <= 0xFFFF, topic.count <= 0xFFFF else { throw .badUpstreamResponse("the podcast feed") }
        let (stamps, firstSeen, made) = EpisodeHistory.continuing(
            known, with: encoded.map { ($0.hash, $0.anchor, $0.id) }, stillListed: listed, at: seenAt)
        let log = made.log
        var idBytes: [UInt8] = []
        for e in encoded { idBytes += e.id.utf8 }
        var out = magic + [version]
        out.reserveCapacity(
            overhead + title.count + updated.count + movedURL.count + hub.count + topic.count + idBytes.count + head.count + (plain ? 0 : stored))
        LittleEndianBytes.append(UInt64(encoded.count), 4, to: &out)
        LittleEndianBytes.append(UInt64(head.count), 4, to: &out)
        LittleEndianBytes.append(UInt64(title.count), 2, to: &out)
        LittleEndianBytes.append(UInt64(updated.count), 1, to: &out)
        LittleEndianBytes.append(UInt64(movedURL.count), 2, to: &out)
        LittleEndianBytes.append(UInt64(bitPattern: Int64(moved?.id ?? 0)), 8, to: &out)
        out.append(truncated ? 1 : 0)
        LittleEndianBytes.append(UInt64(hub.count), 2, to: &out)
        LittleEndianBytes.append(UInt64(topic.count), 2, to: &out)
        LittleEndianBytes.append(UInt64(said.interval ?? 0), 4, to: &out)
        EpisodeHistory.append(log, to: &out)
        EpisodeHistory.append(tombstones: made.tombstones, horizon: made.horizon, to: &out)
        let sizes: [(stored: Int, length: Int)] = plain ? [(area.count, area.count)] : blocks.map { ($0.stored.count, $0.length) }
        LittleEndianBytes.append(UInt64(sizes.count), 4, to: &out)
        var offset = 0
        for b in sizes {
            LittleEndianBytes.append(UInt64(offset), 4, to: &out)
            LittleEndianBytes.append(UInt64(b.stored), 4, to: &out)
            LittleEndianBytes.append(UInt64(b.length), 4, to: &out)
            offset += b.stored
        }
        for (i, e) in encoded.enumerated() {
            LittleEndianBytes.append(UInt64(bitPattern: e.published), 8, to: &out)
            LittleEndianBytes.append(e.anchor, 8, to: &out)
            LittleEndianBytes.append(UInt64(placed[i].block), 4, to: &out)
            LittleEndianBytes.append(UInt64(placed[i].offset), 4, to: &out)
            LittleEndianBytes.append(UInt64(e.jsonCount), 4, to: &out)
            LittleEndianBytes.append(UInt64(e.chaptersCount), 4, to: &out)
            LittleEndianBytes.append(UInt64(stamps[i].seq), 4, to: &out)
            LittleEndianBytes.append(UInt64(stamps[i].ordinal), 4, to: &out)
            LittleEndianBytes.append(e.hash, 8, to: &out)
            LittleEndianBytes.append(UInt64(firstSeen[i].seq), 4, to: &out)
            LittleEndianBytes.append(UInt64(firstSeen[i].ordinal), 4, to: &out)
            LittleEndianBytes.append(UInt64(e.id.utf8.count), 2, to: &out)
        }
        out += title
        out += updated
        out += movedURL
        out += hub
        out += topic
        out += idBytes
        out += head
        if plain {
            // One exact allocation (one copy, as the insert in place was): the encoder's reserve,
            // twice the feed's size, is not kept for the entry's lifetime.
            var whole = [UInt8]()
            whole.reserveCapacity(out.count + area.count)
            whole += out
            whole += area
            return (whole, channel)
        }
        for b in blocks { out += b.stored }
        return (out, channel)
    }

    /// The data in `blob`, or nil when it is not data `build` wrote (damaged, or another version).
    public init?(_ blob: [UInt8]) {
        var r = LittleEndianBytes.Reader(bytes: blob)
        guard r.take(4).map(Array.init) == Self.magic, r.take(1)?.first == Self.version, let n = r.int(4), n <= Self.maxEpisodes,
            let headLength = r.int(4), let titleLength = r.int(2), let updatedLength = r.int(1), let movedLength = r.int(2), let movedID = r.int64(),
            let flags = r.int(1), flags <= 1, let hubLength = r.int(2), let topicLength = r.int(2), let interval = r.int(4),
            let changes = EpisodeHistory.readLog(&r), let (tombstones, horizon) = EpisodeHistory.readTombstones(&r)
        else { return nil }
        guard let blockCount = r.int(4), blockCount <= max(1, n) else { return nil }
        var table: [(offset: Int, stored: Int, length: Int)] = []
        table.reserveCapacity(blockCount)
        var next = 0
        for _ in 0..<blockCount {
            // Blocks follow each other; none inflates past what an episode's data may take.
            guard let offset = r.int(4), let stored = r.int(4), let length = r.int(4), offset == next, stored <= length, length <= Self.maxBlockLength
            else { return nil }
            table.append((offset, stored, length))
            next = offset + stored
        }
        var entries: [Entry] = []
        entries.reserveCapacity(n)
        var idsLength = 0
        for _ in 0..<n {
            guard let published = r.int64(), let anchor = r.uint(8), let block = r.int(4), let offset = r.int(4), let length = r.int(4),
                let chapters = r.int(4), let seq = r.uint32(), let ordinal = r.uint32(), let hash = r.uint(8), let firstSeq = r.uint32(),
                let firstOrdinal = r.uint32(), let idLength = r.int(2), idLength <= EpisodeHistory.maxIDBytes,
                // Every stamp names a version the log holds, within its changes, the first no later; every episode lies in its block.
                // (The first-seen stamp is only compared: it may name a version the log has let go.)
                let stamped = changes.version(seq), ordinal < stamped.changes,
                EpisodeStamp(seq: firstSeq, ordinal: firstOrdinal) <= EpisodeStamp(seq: seq, ordinal: ordinal), block < table.count, length > 0,
                offset <= table[block].length, length <= table[block].length - offset, chapters <= table[block].length - offset - length
            else { return nil }
            entries.append(
                Entry(
                    published: published, anchor: anchor, stamp: EpisodeStamp(seq: seq, ordinal: ordinal), contentHash: hash,
                    firstSeen: EpisodeStamp(seq: firstSeq, ordinal: firstOrdinal), idStart: idsLength, idLength: idLength, block: block,
                    offset: offset, length: length, chaptersLength: chapters))
            idsLength += idLength
        }
        guard let title = r.take(titleLength), let updated = r.take(updatedLength), let moved = r.take(movedLength), let hub = r.take(hubLength),
            let topic = r.take(topicLength), let ids = r.take(idsLength), let head = r.take(headLength)
        else { return nil }
        let area = r.rest
        guard area.count == next else { return nil }
        self.title = title.isEmpty ? nil : String(decoding: title, as: UTF8.self)
        self.updated = updated.isEmpty ? nil : String(decoding: updated, as: UTF8.self)
        self.head = head
        self.entries = entries
        self.changes = changes
        self.tombstones = tombstones
        self.horizon = horizon
        self.ids = ids
        truncated = flags == 1
        movedTo = moved.isEmpty ? nil : MovedFeed(url: String(decoding: moved, as: UTF8.self), id: Int(movedID))
        blocks = EpisodeBlocks(area: area, table: table)
        hints = PublisherHints(
            hub: hub.isEmpty ? nil : String(decoding: hub, as: UTF8.self), topic: topic.isEmpty ? nil : String(decoding: topic, as: UTF8.self),
            interval: interval == 0 ? nil : interval)
    }

    /// The most a block may inflate to (more than any block `build` writes).
    static let maxBlockLength = 64 << 20

}

/// The episodes' bytes of one data's blocks: a plain block read in place, a compressed one
/// inflated when first needed (by this reader of the data only).
final class EpisodeBlocks: Sendable {
    private let area: ArraySlice<UInt8>
    private let table: [(offset: Int, stored: Int, length: Int)]
    private let inflated = Locked<[Int: [UInt8]]>([:])

    init(area: ArraySlice<UInt8>, table: [(offset: Int, stored: Int, length: Int)]) {
        self.area = area
        self.table = table
    }

    /// Block `i`'s bytes, or nil when it does not inflate to its length (damage).
    func bytes(_ i: Int) -> ArraySlice<UInt8>? {
        guard table.indices.contains(i) else { return nil }
        let b = table[i]
        let stored = area[(area.startIndex + b.offset)..<(area.startIndex + b.offset + b.stored)]
        if b.stored == b.length { return stored }
        if let done = inflated.withLock({ $0[i] }) { return done[...] }
        guard let raw = Gzip.decompress(Array(stored), maxBytes: b.length), raw.count == b.length else { return nil }
        inflated.withLock { $0[i] = raw }
        return raw[...]
    }
}
