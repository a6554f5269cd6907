import EpisodeSync
import Primitives

/// A library and its position under a short name, for `EventSource`: it cannot POST, and a
/// 500-podcast library's ids and token (7 KB and more) pass no proxy's request line, so the
/// app POSTs them once and opens `/episodes/events?library=<name>`. The stream resumes from
/// `Last-Event-ID` as any does. Kept as a record (`FeedRecords`) for 30 days from its last use.
///
/// Record layout: `FPLH` · version · u16 limit · u16 id count · the ids (u64 each) · the
/// token's text.
public struct LibraryHandle: Sendable, Equatable {
    public let ids: [Int]
    public let limit: Int
    public let token: SyncToken?

    static let magic = Array("FPLH".utf8)
    static let version: UInt8 = 1
    /// How long a handle is kept after its last use.
    public static let lifetimeSeconds = 30 * 86_400

    public init(ids: [Int], limit: Int, token: SyncToken?) {
        self.ids = ids
        self.limit = limit
        self.token = token
    }

    public var record: [UInt8] {
        var out = Self.magic + [Self.version]
        LittleEndianBytes.append(UInt64(limit), 2, to: &out)
        LittleEndianBytes.append(UInt64(ids.count), 2, to: &out)
        for id in ids { LittleEndianBytes.append(UInt64(id), 8, to: &out) }
        out += (token?.encoded ?? "").utf8
        return out
    }

    /// Its name: 22 characters of base64url over two hashes of the record (the same library at
    /// the same position is the same name; guessing another's is guessing 128 bits).
    public var name: String {
        let bytes = record
        var out: [UInt8] = []
        LittleEndianBytes.append(XXH64.hash(bytes), 8, to: &out)
        LittleEndianBytes.append(XXH64.hash(Array("feedproxy-library|".utf8) + bytes), 8, to: &out)
        return Base64URL.encode(out)
    }

    /// Whether `text` has a name's shape (checked before any store is asked).
    public static func isName(_ text: String) -> Bool {
        text.utf8.count == 22 && Base64URL.decode(text)?.count == 16
    }

    /// The handle in `record`, or nil when it is not one this service wrote.
    public init?(record bytes: [UInt8]) {
        var r = LittleEndianBytes.Reader(bytes: bytes)
        guard r.take(4).map(Array.init) == Self.magic, r.take(1)?.first == Self.version, let limit = r.int(2), (1...500).contains(limit),
            let count = r.int(2), (1...EpisodeBatch.maxPodcasts).contains(count)
        else { return nil }
        var ids: [Int] = []
        ids.reserveCapacity(count)
        for _ in 0..<count {
            guard let id = r.uint(8), id > 0, id <= 999_999_999_999_999_999, !ids.contains(Int(id)) else { return nil }  // once each, as asked
            ids.append(Int(id))
        }
        let text = String(decoding: r.rest, as: UTF8.self)
        var token: SyncToken?
        if !text.isEmpty {
            guard let decoded = try? SyncToken.decode(text) else { return nil }
            token = decoded
        }
        self.init(ids: ids, limit: limit, token: token)
    }
}
