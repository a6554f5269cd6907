import Primitives
import ResponseCache

/// `SharedPingQueue` on a Redis stream with a consumer group (`<prefix>:pings`, group
/// `readers`, capped near 10,000 entries): XADD to keep a ping, XREADGROUP to take new ones
/// (never blocking: the connection is shared), XAUTOCLAIM to take over what a dead replica
/// took, XACK once the feed was read. A Redis restarted empty has no group: it is made again.
/// Replies are validated like network input: an entry this code did not write is acknowledged
/// and dropped.
public final class RedisPingQueue: SharedPingQueue {
    private let redis: RedisConnection
    private let stream: [UInt8]
    /// This replica's name in the group (a process's own: a restarted replica is another consumer).
    private let consumer: [UInt8]
    static let group: [UInt8] = Array("readers".utf8)
    static let maxEntries = 10_000

    public init(connection: RedisConnection, prefix: String = "feedproxy") {
        redis = connection
        stream = Array("\(prefix):pings".utf8)
        consumer = Array("replica-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))".utf8)
    }

    public func enqueue(_ id: Int, notBefore: Int64 = 0) async -> Bool {
        var command = [
            Array("XADD".utf8), stream, Array("MAXLEN".utf8), Array("~".utf8), Array(String(Self.maxEntries).utf8), Array("*".utf8),
            Array("p".utf8), Array(String(id).utf8),
        ]
        if notBefore > 0 { command += [Array("n".utf8), Array(String(notBefore).utf8)] }
        let reply = await redis.command(command, operation: "ping_enqueue")
        guard case .success(.bulk) = reply else { return false }
        return true
    }

    public func take(max: Int, stalled: Double) async -> [QueuedPing]? {
        let count = Array(String(Swift.max(1, Swift.min(max, 100))).utf8)
        let idle = Array(String(Saturating.int((stalled * 1000).rounded(), in: 1...86_400_000)).utf8)
        // What a dead replica took: its entries idle past `stalled`.
        let claimed = await redis.command(
            [Array("XAUTOCLAIM".utf8), stream, Self.group, consumer, idle, Array("0-0".utf8), Array("COUNT".utf8), count], operation: "ping_claim")
        if case .failure(.error(let message)) = claimed, message.hasPrefix("NOGROUP") {
            guard await makeGroup() else { return nil }
            return []
        }
        var taken: [QueuedPing] = []
        if case .success(let reply) = claimed, let entries = reply.elements?.dropFirst().first?.elements {
            taken += await read(entries)
        }
        let fresh = await redis.command(
            [Array("XREADGROUP".utf8), Array("GROUP".utf8), Self.group, consumer, Array("COUNT".utf8), count, Array("STREAMS".utf8), stream, Array(">".utf8)],
            operation: "ping_take")
        switch fresh {
        case .success(.null): return taken
        case .failure(.error(let message)) where message.hasPrefix("NOGROUP"):
            guard await makeGroup() else { return nil }
            return taken
        case .success(let reply):
            guard let entries = reply.elements?.first?.elements?.dropFirst().first?.elements else { return taken }
            return taken + (await read(entries))
        case .failure:
            return taken.isEmpty ? nil : taken
        }
    }

    public func done(_ entry: String) async {
        _ = await redis.command([Array("XACK".utf8), stream, Self.group, Array(entry.utf8)], operation: "ping_done")
    }

    /// The group, made with the stream when missing (a first start, or a Redis restarted empty).
    private func makeGroup() async -> Bool {
        switch await redis.command(
            [Array("XGROUP".utf8), Array("CREATE".utf8), stream, Self.group, Array("0".utf8), Array("MKSTREAM".utf8)], operation: "ping_group")
        {
        case .success(.status): return true
        case .failure(.error(let message)): return message.hasPrefix("BUSYGROUP")
        default: return false
        }
    }

    /// Entries `[id, [field, value]]` as pings; one not of this shape is acknowledged and dropped.
    private func read(_ entries: [RedisValue]) async -> [QueuedPing] {
        var out: [QueuedPing] = []
        for entry in entries.prefix(100) {
            guard let name = RedisChangeFeed.id(entry) else { continue }
            guard let fields = entry.elements?.dropFirst().first?.elements, fields.count == 2 || fields.count == 4, fields[0].bytes == Array("p".utf8),
                let text = fields[1].bytes, text.count <= 18, let id = Int(String(decoding: text, as: UTF8.self)), id > 0
            else {
                await done(name)
                continue
            }
            // When it may be read: a time in range, or at once (a value not ours is no reason to wait).
            var notBefore: Int64 = 0
            if fields.count == 4, fields[2].bytes == Array("n".utf8), let n = fields[3].bytes, n.count <= 15,
                let at = Int64(String(decoding: n, as: UTF8.self)), at > 0
            {
                notBefore = at
            }
            out.append(QueuedPing(entry: name, id: id, notBefore: notBefore))
        }
        return out
    }
}
