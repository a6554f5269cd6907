/// A finished response as the cache keeps it: encoded bytes, a gzip variant,
/// a strong ETag and its freshness policy. A hit does no JSON or compression work.
public struct CachedResponse: Sendable {
    public let status: Int
    public let body: [UInt8]
    public let gzippedBody: [UInt8]?
    public let etag: String
    /// The gzip representation is a different representation, so it has its own validator.
    public let gzipETag: String
    public private(set) var storedAt: Double
    public let policy: FreshnessPolicy
    /// The full lifetime, sent as is with an honest `Age` (RFC 9111 §4.2.3: the
    /// remaining freshness is `max-age − Age`); built once, not per hit.
    public let cacheControl: String

    public init(status: Int = 200, body: [UInt8], gzippedBody: [UInt8]?, storedAt: Double, policy: FreshnessPolicy) {
        self.status = status
        self.body = body
        self.gzippedBody = gzippedBody
        let etag = ETag.strong(for: body)
        self.etag = etag
        self.gzipETag = String(etag.dropLast()) + "-gz\""
        self.storedAt = storedAt
        self.policy = policy
        self.cacheControl =
            status == 200
            ? "public, max-age=\(Self.delta(policy.ttl)), stale-while-revalidate=\(Self.delta(policy.staleWhileRevalidate)), stale-if-error=\(Self.delta(policy.staleIfError))"
            : "no-store"
    }

    /// Whole seconds for a header, never trapping: RFC 9111 §1.2.2 caps delta-seconds at
    /// 2147483648, and a policy read from a shared tier could be anything.
    static func delta(_ seconds: Double) -> Int { seconds.isFinite ? Int(min(max(seconds, 0), 2_147_483_648)) : 0 }

    /// The same response as stored at another time (an entry read from the shared tier).
    public func restamped(storedAt: Double) -> CachedResponse {
        var copy = self  // bodies and validators shared, not recomputed
        copy.storedAt = storedAt
        return copy
    }

    /// Approximate memory held, for the byte budget.
    var cost: Int { body.count + (gzippedBody?.count ?? 0) + etag.utf8.count + 128 }

    public func age(at now: Double) -> Double { max(0, now - storedAt) }
    public func isFresh(at now: Double) -> Bool { age(at: now) < policy.ttl }
}

/// How long an entry is fresh, and the RFC 5861 windows after that.
public struct FreshnessPolicy: Sendable, Equatable {
    public var ttl: Double
    public var staleWhileRevalidate: Double
    public var staleIfError: Double

    public init(ttl: Double, staleWhileRevalidate: Double, staleIfError: Double) {
        self.ttl = ttl
        self.staleWhileRevalidate = staleWhileRevalidate
        self.staleIfError = staleIfError
    }

    /// Errors are not served stale: a short negative entry only.
    public static func negative(ttl: Double) -> FreshnessPolicy {
        FreshnessPolicy(ttl: ttl, staleWhileRevalidate: 0, staleIfError: 0)
    }
}

/// Why a load failed, as the client will be told.
public struct CacheLoadError: Error, Sendable, Equatable {
    public let status: Int
    public let code: String
    public let message: String
    public let retryAfter: Double?
    /// An entry to keep briefly so repeated bad requests do not hit the upstream.
    public let negativeEntry: CachedResponse?

    public init(status: Int, code: String, message: String, retryAfter: Double? = nil, negativeEntry: CachedResponse? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.negativeEntry = negativeEntry
    }

    public static func == (a: CacheLoadError, b: CacheLoadError) -> Bool {
        a.status == b.status && a.code == b.code && a.message == b.message
    }
}

enum ETag {
    /// A strong validator from the bytes (FNV-1a 64 + length; not a security hash).
    static func strong(for body: [UInt8]) -> String {
        var hash = FNV1a()
        hash.add(body)
        return "\"" + hash.hex + "-" + String(body.count, radix: 16) + "\""
    }
}

/// 64-bit FNV-1a: a fast, stable fingerprint of bytes (not a security hash).
public struct FNV1a: Sendable {
    private var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for b in bytes {
            value ^= UInt64(b)
            value = value &* 0x0000_0100_0000_01B3
        }
    }

    /// 16 lowercase hex digits.
    public var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
