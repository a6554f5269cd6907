import Primitives

/// What an app has of each podcast it follows, as positions in each feed's change history
/// (`EpisodeChangeLog`): the `syncToken` of an episodes answer, sent back as `sync=`. Opaque
/// to apps; self-contained (no state on the server), so any replica reads it.
///
/// Text: unpadded base64url of version · varint count · per podcast, by ascending id
/// {varint id delta, varint seq, varint ordinal, u32 version id} · u32 check. A position
/// (seq, id, ordinal) means: every episode stamped with a version up to `seq` (ordinal 0), or
/// every one before `seq` and those of `seq` with an ordinal below `ordinal` (a cut answer).
public struct SyncToken: Sendable, Equatable {
    public struct Position: Sendable, Equatable {
        public let seq: UInt32
        public let versionID: UInt32
        public let ordinal: UInt32

        public init(seq: UInt32, versionID: UInt32, ordinal: UInt32) {
            self.seq = seq
            self.versionID = versionID
            self.ordinal = ordinal
        }

        /// Everything of the feed up to its current version.
        public init(through version: EpisodeChangeLog.Version) {
            self.init(seq: version.seq, versionID: version.id, ordinal: 0)
        }
    }

    /// One podcast's position in 16 bytes: the id in two halves (an Int beside three UInt32
    /// made a stride of 24), and the ordinal kept apart (`ordinals`): a position inside a
    /// version (a cut answer's) is rare, and a stream holds its token as long as it is open.
    private struct Entry: Equatable {
        let idHigh: UInt32
        let idLow: UInt32
        var seq: UInt32
        var versionID: UInt32

        init(id: Int, _ position: Position) {
            let bits = UInt64(bitPattern: Int64(id))
            idHigh = UInt32(truncatingIfNeeded: bits >> 32)
            idLow = UInt32(truncatingIfNeeded: bits)
            seq = position.seq
            versionID = position.versionID
        }

        var id: Int { Int(Int64(bitPattern: UInt64(idHigh) << 32 | UInt64(idLow))) }
    }

    /// What a position takes in a token (a stream holds 20 or so for as long as it is open).
    package static var bytesPerPosition: Int { MemoryLayout<Entry>.stride }

    /// By ascending id: 20 positions take 350 bytes (a dictionary of them took 700).
    private var entries: [Entry]
    /// The ordinals that are not 0, by podcast id (almost always none: no allocation).
    private var ordinals: [Int: UInt32] = [:]

    public init(_ positions: [Int: Position] = [:]) {
        entries = []
        entries.reserveCapacity(positions.count)
        for (id, position) in positions.sorted(by: { $0.key < $1.key }) { append(id, position) }
    }

    private init() { entries = [] }

    /// Adds the position of an id above every id held.
    private mutating func append(_ id: Int, _ position: Position) {
        entries.append(Entry(id: id, position))
        if position.ordinal != 0 { ordinals[id] = position.ordinal }
    }

    private func position(at index: Int) -> Position {
        let e = entries[index]
        return Position(seq: e.seq, versionID: e.versionID, ordinal: ordinals.isEmpty ? 0 : ordinals[e.id] ?? 0)
    }

    public var positions: [Int: Position] { Dictionary(uniqueKeysWithValues: entries.indices.lazy.map { (entries[$0].id, position(at: $0)) }) }

    public static func == (a: SyncToken, b: SyncToken) -> Bool { a.entries == b.entries && a.ordinals == b.ordinals }

    /// Where `id` is, or would go.
    private func index(of id: Int) -> (at: Int, found: Bool) {
        var low = 0, high = entries.count
        while low < high {
            let mid = low + (high - low) / 2
            if entries[mid].id < id { low = mid + 1 } else { high = mid }
        }
        return (low, low < entries.count && entries[low].id == id)
    }

    package static let version: UInt8 = 1
    /// A token holds at most one library's podcasts.
    public static let maxPodcasts = 500
    /// Longest text read: a library's podcasts at their largest fit (feed ids, 16 digits, and
    /// every position at its longest: about 21 KB for 500).
    package static let maxTextBytes = 24 * 1024

    public subscript(id: Int) -> Position? {
        get {
            let (at, found) = index(of: id)
            return found ? position(at: at) : nil
        }
        set {
            let (at, found) = index(of: id)
            switch (found, newValue) {
            case (true, let p?):
                entries[at].seq = p.seq
                entries[at].versionID = p.versionID
            case (true, nil): entries.remove(at: at)
            case (false, let p?): entries.insert(Entry(id: id, p), at: at)
            case (false, nil): break
            }
            if found || newValue != nil { ordinals[id] = newValue.flatMap { $0.ordinal == 0 ? nil : $0.ordinal } }
        }
    }

    /// This token's positions for `ids` only (the podcasts an answer is about).
    public func keeping(_ ids: [Int]) -> SyncToken {
        var kept = SyncToken()
        kept.entries.reserveCapacity(min(ids.count, entries.count))
        for id in Set(ids).sorted() {
            let (at, found) = index(of: id)
            if found { kept.append(id, position(at: at)) }
        }
        return kept
    }

    public var encoded: String {
        var bytes: [UInt8] = [Self.version]
        Self.appendVarint(UInt64(entries.count), to: &bytes)
        var last = 0
        for i in entries.indices {
            let id = entries[i].id, p = position(at: i)
            Self.appendVarint(UInt64(id - last), to: &bytes)  // ids are positive and ascending
            last = id
            Self.appendVarint(UInt64(p.seq), to: &bytes)
            Self.appendVarint(UInt64(p.ordinal), to: &bytes)
            LittleEndianBytes.append(UInt64(p.versionID), 4, to: &bytes)
        }
        LittleEndianBytes.append(Self.check(bytes), 4, to: &bytes)
        return Base64URL.encode(bytes)
    }

    /// Why a `sync` value is refused.
    public enum Refusal: Error, Equatable {
        /// Not a token this service wrote (mangled, or made up): 400.
        case invalid
        /// A token of a format this version no longer reads: 410, sync again from the start.
        case expired
    }

    public static func decode(_ text: String) throws(Refusal) -> SyncToken {
        guard text.utf8.count <= maxTextBytes, let bytes = Base64URL.decode(text), bytes.count >= 6 else { throw .invalid }
        let body = bytes[..<(bytes.count - 4)]
        var trailer = LittleEndianBytes.Reader(bytes: Array(bytes.suffix(4)))
        guard trailer.uint(4) == check(Array(body)) else { throw .invalid }
        guard body.first == version else { throw .expired }
        var at = body.startIndex + 1
        guard let count = varint(body, &at), count <= UInt64(maxPodcasts) else { throw .invalid }
        var token = SyncToken()
        token.entries.reserveCapacity(Int(count))
        var id: UInt64 = 0
        for _ in 0..<count {
            guard let delta = varint(body, &at), delta > 0, delta <= 999_999_999_999_999_999 - id,
                let seq = varint(body, &at), seq <= UInt64(UInt32.max), let ordinal = varint(body, &at), ordinal <= UInt64(UInt32.max),
                body.endIndex - at >= 4
            else { throw .invalid }
            id += delta
            let versionID = body[at..<(at + 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            at += 4
            token.append(Int(id), Position(seq: UInt32(seq), versionID: versionID, ordinal: UInt32(ordinal)))
        }
        guard at == body.endIndex else { throw .invalid }
        return token
    }

    /// 32 bits of a hash over the token's bytes: a mangled token is refused, not misread.
    package static func check(_ bytes: [UInt8]) -> UInt64 {
        XXH64.hash(Array("feedproxy-sync|".utf8) + bytes) & 0xFFFF_FFFF
    }

    package static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// A LEB128 varint of at most 10 bytes that fits 64 bits; nil otherwise.
    package static func varint(_ bytes: ArraySlice<UInt8>, _ at: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < bytes.endIndex, shift < 64 {
            let byte = bytes[at]
            at += 1
            let bits = UInt64(byte & 0x7F)
            guard shift < 63 || bits <= 1 else { return nil }
            value |= bits << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }
}
