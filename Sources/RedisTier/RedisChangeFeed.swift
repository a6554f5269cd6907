import Primitives
import ResponseCache

/// `SharedChangeFeed` on a Redis stream (`<prefix>:changes`, capped near 10,000 entries):
/// XADD to announce, XREAD (never blocking: the connection is shared) to learn. Replies are
/// validated like network input: an entry this code did not write is skipped.
public final class RedisChangeFeed: SharedChangeFeed {
    private let redis: RedisConnection
    private let stream: [UInt8]
    private let epochKey: [UInt8]
    static let maxEntries = 10_000
    static let batch = 500

    public init(connection: RedisConnection, prefix: String = "feedproxy") {
        redis = connection
        stream = Array("\(prefix):changes".utf8)
        epochKey = Array("\(prefix):epoch".utf8)
    }

    /// `<prefix>:epoch`, set when missing (no TTL: `volatile-lru` keeps it; only a Redis that
    /// lost everything loses it).
    public func epoch(proposing proposed: String) async -> String? {
        guard
            case .success(.bulk(let bytes)) = await redis.command(
                [Array("EVAL".utf8), Array(Self.epochScript.utf8), Array("1".utf8), epochKey, Array(proposed.utf8)], operation: "epoch"),
            bytes.count <= 64
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static let epochScript = """
        local v = redis.call('GET', KEYS[1])
        if v then return v end
        redis.call('SET', KEYS[1], ARGV[1])
        return ARGV[1]
        """

    public func announce(_ key: String, etag: String) async {
        guard key.utf8.count <= 1024, etag.utf8.count <= 128 else { return }
        _ = await redis.command(
            [
                Array("XADD".utf8), stream, Array("MAXLEN".utf8), Array("~".utf8), Array(String(Self.maxEntries).utf8), Array("*".utf8),
                Array("k".utf8), Array(key.utf8), Array("e".utf8), Array(etag.utf8),
            ],
            operation: "change_announce")
    }

    public func changes(after cursor: String?) async -> (cursor: String, changes: [(key: String, etag: String)])? {
        guard let cursor else {
            // Where the stream ends now: a replica starting hears what comes after it.
            guard
                case .success(let reply) = await redis.command(
                    [Array("XREVRANGE".utf8), stream, Array("+".utf8), Array("-".utf8), Array("COUNT".utf8), Array("1".utf8)], operation: "change_read"),
                let entries = reply.elements
            else { return nil }
            return (entries.first.flatMap(Self.id) ?? "0-0", [])
        }
        guard
            case .success(let reply) = await redis.command(
                [Array("XREAD".utf8), Array("COUNT".utf8), Array(String(Self.batch).utf8), Array("STREAMS".utf8), stream, Array(cursor.utf8)],
                operation: "change_read")
        else { return nil }
        if case .null = reply { return (cursor, []) }
        guard let streams = reply.elements, let entries = streams.first?.elements?.dropFirst().first?.elements else { return (cursor, []) }
        var next = cursor
        var found: [(key: String, etag: String)] = []
        for entry in entries.prefix(Self.batch) {
            guard let id = Self.id(entry) else { continue }
            next = id
            guard let fields = entry.elements?.dropFirst().first?.elements, fields.count == 4,
                fields[0].bytes == Array("k".utf8), fields[2].bytes == Array("e".utf8),
                let key = fields[1].bytes, let etag = fields[3].bytes, key.count <= 1024, etag.count <= 128
            else { continue }
            found.append((String(decoding: key, as: UTF8.self), String(decoding: etag, as: UTF8.self)))
        }
        return (next, found)
    }

    /// An entry's id (`<ms>-<seq>`), when it has that shape.
    static func id(_ entry: RedisValue) -> String? {
        guard let bytes = entry.elements?.first?.bytes, (3...41).contains(bytes.count),
            bytes.allSatisfy({ (48...57).contains($0) || $0 == UInt8(ascii: "-") })
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
