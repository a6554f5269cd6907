import Glibc
import Primitives
import ResponseCache
import Upstream

/// The shared response tier (L2) in Redis. Each entry is a hash (stored time on Redis'
/// clock, status, policy, body, gzip) that Redis expires itself after TTL plus the
/// longer stale window. Keys carry a fingerprint of the response schema and upstream
/// configuration, so pods of two versions never read each other's entries.
public final class RedisSharedCache: SharedCacheTier {
    private let redis: RedisConnection
    private let prefix: String
    private let failureCodes: Set<String>

    /// `failureCodes`: the codes a failure marker may carry (those this service writes); a
    /// marker naming any other reads as none, so Redis cannot invent metrics labels.
    public init(connection: RedisConnection, prefix keyPrefix: String = "feedproxy", fingerprint: String, failureCodes: Set<String> = UpstreamError.codes) {
        redis = connection
        prefix = "\(keyPrefix):\(fingerprint):"
        self.failureCodes = failureCodes
    }

    public func get(_ key: String) async -> SharedLookup {
        let reply = await redis.script(
            RedisScripts.getIndex, keys: [Array((prefix + "c:" + key).utf8)], args: [], operation: "get", patient: SharedTierCall.isPatient)
        guard case .success(let value) = reply, let fields = value.elements else { return .unavailable }
        guard fields.count == 9 else { return fields.count == 1 ? .absent : .unavailable }
        // Validated like any network input: anything a replica would not have written is absent.
        guard let now = fields[0].int, let stored = fields[1].int, now >= 0, stored >= 0, let status = fields[2].int, Self.storable(status),
            let policyText = fields[3].bytes, policyText.count <= 128, let policy = Self.policy(String(decoding: policyText, as: UTF8.self)),
            var body = fields[4].bytes, let gzip = fields[5].bytes, gzip.isEmpty || gzip == Self.bodyIsCompressed || Self.isGzip(gzip),
            let link = fields[6].bytes, link.count <= 4096, !link.contains(0x0D), !link.contains(0x0A), let validators = fields[7].bytes,
            let media = fields[8].bytes, let contentType = Self.contentType(media)
        else { return .absent }  // not ours or damaged: as if absent, and overwritten by the next fill
        let compressed = gzip == Self.bodyIsCompressed
        if compressed {
            guard Self.isGzip(body), let whole = Gzip.decompress(body, maxBytes: Self.maxDecompressedBytes) else { return .absent }
            body = whole
        }
        let entry = CachedResponse(
            status: status, body: body, gzippedBody: gzip.isEmpty || compressed ? nil : gzip, storedAt: 0, policy: policy,
            link: link.isEmpty ? nil : String(decoding: link, as: UTF8.self),
            // Validated as it is read back (absolute http(s) addresses, short one-line validators).
            revalidation: validators.isEmpty ? nil : Revalidation(serialized: String(decoding: validators, as: UTF8.self)), contentType: contentType)
        return .found(entry, age: Double(max(0, now - stored)) / 1000)  // both ≥ 0: no overflow
    }

    @discardableResult
    public func put(_ key: String, _ entry: CachedResponse, age: Double, fetchSeconds: Double) async -> Bool {
        await store(key, entry, body: entry.body, gzip: entry.gzippedBody ?? [], age: age, fetchSeconds: fetchSeconds)
    }

    /// A large body kept without a compressed variant (the data answers are cut from, such as
    /// a long feed's episodes) is stored compressed, marked so in the gzip field: what
    /// counts against `maxBytes` is what Redis holds.
    public func put(_ key: String, _ entry: CachedResponse, age: Double, fetchSeconds: Double, maxBytes: Int) async -> SharedPut {
        var body = entry.body, gzip = entry.gzippedBody ?? []
        // (An image is compressed already: it is stored as it is.)
        if gzip.isEmpty, entry.isJSON, body.count > Self.compressAbove {
            // Megabytes of a long feed's episodes take long: not on the cooperative pool.
            let plain = body
            if let z = await CPUWorkers.shared.run(over: plain.count, { Gzip.compress(plain) }), z.count < body.count {
                body = z
                gzip = Self.bodyIsCompressed
            }
        }
        guard body.count + gzip.count <= maxBytes else { return .tooLarge }
        return await store(key, entry, body: body, gzip: gzip, age: age, fetchSeconds: fetchSeconds) ? .stored : .notStored
    }

    /// Bodies this long without a compressed variant are stored compressed.
    static let compressAbove = 16 << 10
    /// The gzip field of an entry whose body field is the body compressed.
    static let bodyIsCompressed: [UInt8] = Array("=".utf8)
    /// The most a stored body may inflate to (a bound, not a size any entry has).
    static let maxDecompressedBytes = 64 << 20

    private func store(_ key: String, _ entry: CachedResponse, body: [UInt8], gzip: [UInt8], age: Double, fetchSeconds: Double) async -> Bool {
        let p = entry.policy
        // Redis drops the entry once no replica could use it, even stale.
        let window = min(p.ttl + max(p.staleWhileRevalidate, p.staleIfError), Self.longestSeconds)
        let args: [[UInt8]] = [
            Array(String(Saturating.int(age * 1000, in: 0...Int(Int32.max))).utf8), Array(String(entry.status).utf8), Array(Self.text(p).utf8), body,
            gzip, Array(String(Saturating.int((window * 1000).rounded(.up), in: 1...Int(1e12))).utf8), Array((entry.link ?? "").utf8),
            Array(String(Saturating.int(fetchSeconds * 1000, in: 0...Int(Int32.max))).utf8), Array((entry.revalidation?.serialized ?? "").utf8),
            entry.isJSON ? [] : Array(entry.contentType.utf8),
        ]
        let reply = await redis.script(
            RedisScripts.putIndex, keys: [Array((prefix + "c:" + key).utf8)], args: args, operation: "put", patient: SharedTierCall.isPatient)
        return reply == .success(.integer(1))
    }

    public func lock(_ key: String, ttl: Double) async -> SharedLock {
        let token = Self.token()
        let reply = await redis.command(
            ["SET", prefix + "l:" + key, token, "NX", "PX", String(Saturating.int(ttl * 1000, in: 1...Int(Int32.max)))], operation: "lock",
            patient: SharedTierCall.isPatient)
        switch reply {
        case .success(.status("OK")): return .acquired(token: token)
        case .success(.null): return .heldElsewhere
        default: return .unavailable
        }
    }

    public func unlock(_ key: String, token: String) async {
        _ = await redis.script(
            RedisScripts.unlockIndex, keys: [Array((prefix + "l:" + key).utf8)], args: [Array(token.utf8)], operation: "unlock",
            patient: SharedTierCall.isPatient)
    }

    public func renew(_ locks: [(key: String, token: String)], ttl: Double) async -> [Bool]? {
        guard !locks.isEmpty else { return [] }
        let px = String(Saturating.int(ttl * 1000, in: 1...Int(Int32.max)))
        let reply = await redis.script(
            RedisScripts.renewIndex, keys: locks.map { Array((prefix + "l:" + $0.key).utf8) }, args: locks.map { Array($0.token.utf8) } + [Array(px.utf8)],
            operation: "lock", patient: SharedTierCall.isPatient)
        guard case .success(let value) = reply, let items = value.elements, items.count == locks.count else { return nil }
        return items.map { $0.int == 1 }
    }

    public func probe(_ key: String) async -> SharedProbe {
        let reply = await redis.script(
            RedisScripts.probeIndex, keys: [Array((prefix + "c:" + key).utf8), Array((prefix + "e:" + key).utf8)], args: [], operation: "probe",
            patient: SharedTierCall.isPatient)
        guard case .success(let value) = reply, let f = value.elements, f.count == 5, let now = f[0].int, now >= 0 else { return .unavailable }
        if let marker = f[3].bytes, let failure = Self.failure(marker, codes: failureCodes) { return .failed(failure) }
        guard let stored = f[1].int, stored >= 0, stored <= now, let policyText = f[2].bytes, policyText.count <= 128,
            let policy = Self.policy(String(decoding: policyText, as: UTF8.self)), let statusText = f[4].bytes,
            let status = Int(String(decoding: statusText, as: UTF8.self)), Self.storable(status)
        else { return .notYet }
        return Double(now - stored) / 1000 < policy.ttl ? .fresh : .notYet
    }

    public func markFailed(_ key: String, _ failure: SharedFailure, ttl: Double) async {
        let px = String(Saturating.int(ttl * 1000, in: 1...60_000))
        let text: String
        switch failure {
        case .tooLarge: text = "too_large"
        case .error(let e): text = "\(e.status)\n\(e.code)\n\(e.message)"
        }
        _ = await redis.command(
            [Array("SET".utf8), Array((prefix + "e:" + key).utf8), Array(text.utf8), Array("PX".utf8), Array(px.utf8)], operation: "put",
            patient: SharedTierCall.isPatient)
    }

    public func watch(_ keys: [String]) async -> [SharedWatch]? {
        guard !keys.isEmpty else { return [] }
        var names: [[UInt8]] = []
        names.reserveCapacity(keys.count * 3)
        for key in keys {
            names.append(Array((prefix + "c:" + key).utf8))
            names.append(Array((prefix + "e:" + key).utf8))
            names.append(Array((prefix + "l:" + key).utf8))
        }
        let reply = await redis.script(RedisScripts.watchIndex, keys: names, args: [], operation: "watch", patient: SharedTierCall.isPatient)
        guard case .success(let value) = reply, let items = value.elements, items.count == keys.count else { return nil }
        return items.map { item in
            if let marker = item.bytes { return Self.failure(marker, codes: failureCodes).map(SharedWatch.failed) ?? .locked }
            switch item.int {
            case 1: return .fresh
            case 2: return .free
            default: return .locked  // anything else: keep waiting (the bound still holds)
            }
        }
    }

    /// Silent until a reply comes (not only for a deadline): a stopped Redis never looks answering.
    public var health: SharedTierHealth { !redis.isUp ? .down : redis.hasRepliedSinceTimeout ? .answering : .silent }

    /// A failure marker as `markFailed` wrote it; anything else reads as none.
    static func failure(_ bytes: [UInt8], codes: Set<String>) -> SharedFailure? {
        guard bytes.count <= 1024 else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        if text == "too_large" { return .tooLarge }
        let parts = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let status = Int(parts[0]), (400...599).contains(status), codes.contains(String(parts[1])) else { return nil }
        return .error(ClientError(status: status, code: String(parts[1]), message: String(parts[2])))
    }

    /// What a replica stores: a 200 or a negative (4xx/5xx error) answer. A 1xx, 204 or 304
    /// has no body by definition and would go out without Content-Length, desynchronising a
    /// front proxy's response stream; other 2xx and 3xx are never cached here.
    /// The media types an entry may have (empty: JSON); anything else is damage.
    static func contentType(_ field: [UInt8]) -> String? {
        if field.isEmpty { return MediaType.json }
        let text = String(decoding: field, as: UTF8.self)
        // Resized images, and the sources they are made from (GIF and HEIF too).
        return ["image/jpeg", "image/png", "image/webp", "image/avif", "image/gif", "image/heif"].contains(text) ? text : nil
    }

    static func storable(_ status: Int) -> Bool { status == 200 || (400...599).contains(status) }

    /// The gzip magic (RFC 1952): a pre-compressed variant that is not gzip is damage.
    static func isGzip(_ bytes: [UInt8]) -> Bool { bytes.count >= 18 && bytes[0] == 0x1F && bytes[1] == 0x8B }

    /// Longest TTL or stale window an entry may carry (about 31 years; the configuration
    /// allows far less): anything longer read back is damage, and milliseconds stay in range.
    static let longestSeconds = 1e9

    static func text(_ p: FreshnessPolicy) -> String { "\(p.ttl) \(p.staleWhileRevalidate) \(p.staleIfError)" }

    static func policy(_ text: String) -> FreshnessPolicy? {
        let parts = text.split(separator: " ").compactMap { Double($0) }
        guard parts.count == 3, parts.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= longestSeconds }) else { return nil }
        return FreshnessPolicy(ttl: parts[0], staleWhileRevalidate: parts[1], staleIfError: parts[2])
    }

    /// Unique per lock attempt: whoever did not take the lock cannot delete it.
    static func token() -> String {
        String(UInt64.random(in: 1...UInt64.max), radix: 16) + String(UInt64.random(in: 1...UInt64.max), radix: 16)
    }
}
