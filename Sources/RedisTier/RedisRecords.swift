import Primitives

/// Records shared by the replicas that must outlive the cache (the feed ids given out): plain
/// keys `{prefix}:rec:{kind}:{key}` written without a TTL. With `maxmemory-policy
/// volatile-lru` (deploy/kubernetes/redis-configmap.yaml) Redis evicts only keys that have a
/// TTL, every cache entry, lock and announcement, and never these. No schema fingerprint in
/// the key: a release reads what the last one kept.
public final class RedisRecords: Sendable {
    private let redis: RedisConnection
    private let prefix: String

    public init(connection: RedisConnection, prefix: String = "feedproxy") {
        redis = connection
        self.prefix = prefix
    }

    func key(_ kind: String, _ key: String) -> [UInt8] { Array("\(prefix):rec:\(kind):\(key)".utf8) }

    /// The value kept, nil when there is none or Redis did not answer (patiently: this is no
    /// request's hot path, a miss that found no cache entry).
    public func value(_ kind: String, _ key: String) async -> [UInt8]? {
        guard case .success(.bulk(let bytes)) = await redis.command([Array("GET".utf8), self.key(kind, key)], operation: "record_get", patient: true)
        else { return nil }
        return bytes
    }

    /// Adds `member` to the set kept under (`kind`, `key`) (no TTL).
    @discardableResult
    public func add(_ kind: String, _ key: String, member: [UInt8]) async -> Bool {
        guard case .success(.integer) = await redis.command([Array("SADD".utf8), self.key(kind, key), member], operation: "record_add", patient: true)
        else { return false }
        return true
    }

    /// The set kept under (`kind`, `key`), at most `limit` members (a hostile or damaged set is cut).
    public func members(_ kind: String, _ key: String, limit: Int) async -> [[UInt8]] {
        guard case .success(.array(let values)) = await redis.command([Array("SMEMBERS".utf8), self.key(kind, key)], operation: "record_get", patient: true)
        else { return [] }
        return values.prefix(limit).compactMap(\.bytes)
    }

    /// Keeps `value` for `seconds` (a record that lapses unless used: evictable like the cache
    /// under `volatile-lru`); false when Redis did not take it.
    @discardableResult
    public func put(_ kind: String, _ key: String, _ value: [UInt8], expiringIn seconds: Int) async -> Bool {
        await redis.command(
            [Array("SET".utf8), self.key(kind, key), value, Array("EX".utf8), Array(String(max(1, seconds)).utf8)], operation: "record_set",
            patient: true) == .success(.status("OK"))
    }

    /// Keeps `value` (no TTL); false when Redis did not take it.
    @discardableResult
    public func put(_ kind: String, _ key: String, _ value: [UInt8]) async -> Bool {
        await redis.command([Array("SET".utf8), self.key(kind, key), value], operation: "record_set", patient: true) == .success(.status("OK"))
    }

    /// Keeps `value` (no TTL) unless the one kept has a higher `order`: replicas (and two
    /// releases side by side) writing one record at once leave the one furthest along.
    @discardableResult
    public func putUnlessBehind(_ kind: String, _ key: String, _ value: [UInt8], order: UInt32) async -> Bool {
        guard
            case .success(.integer) = await redis.command(
                [Array("EVAL".utf8), Array(Self.putUnlessBehind.utf8), Array("1".utf8), self.key(kind, key), Array(String(order).utf8), value],
                operation: "record_set", patient: true)
        else { return false }
        return true
    }

    /// The value kept by `putUnlessBehind`; nil when there is none or Redis did not answer.
    public func orderedValue(_ kind: String, _ key: String) async -> [UInt8]? {
        guard
            case .success(.bulk(let bytes)) = await redis.command(
                [Array("HGET".utf8), self.key(kind, key), Array("v".utf8)], operation: "record_get", patient: true)
        else { return nil }
        return bytes
    }

    /// KEYS[1] record (a hash: `o` order, `v` value); ARGV order, value. 1 if kept.
    static let putUnlessBehind = """
        local o = tonumber(redis.call('HGET', KEYS[1], 'o') or '0')
        if o > tonumber(ARGV[1]) then return 0 end
        redis.call('HSET', KEYS[1], 'o', ARGV[1], 'v', ARGV[2])
        return 1
        """
}
