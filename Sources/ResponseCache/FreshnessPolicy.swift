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
