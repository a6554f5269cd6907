import Primitives

/// Why a load failed: what the client is told, and perhaps an entry to remember briefly.
public struct CacheLoadError: Error, Sendable, Equatable {
    public let error: ClientError
    /// An entry to keep briefly so repeated bad requests do not hit the upstream.
    public let negativeEntry: CachedResponse?
    /// Whether other replicas waiting for the same key may answer this too (an upstream
    /// failure), or should fetch themselves (this caller was cancelled or refused).
    public let sharedWithWaiters: Bool
    /// Refused before anything was sent (our own budget, breaker, a caller gone while queued):
    /// the upstream was not asked, so a client's quota token is given back.
    public let refusedBeforeSending: Bool

    public init(
        _ error: ClientError, negativeEntry: CachedResponse? = nil, sharedWithWaiters: Bool = true, refusedBeforeSending: Bool = false
    ) {
        self.error = error
        self.negativeEntry = negativeEntry
        self.sharedWithWaiters = sharedWithWaiters
        self.refusedBeforeSending = refusedBeforeSending
    }

    public init(status: Int, code: String, message: String, retryAfter: Double? = nil, negativeEntry: CachedResponse? = nil) {
        self.init(ClientError(status: status, code: code, message: message, retryAfter: retryAfter), negativeEntry: negativeEntry)
    }

    public var status: Int { error.status }
    public var code: String { error.code }
    public var message: String { error.message }
    public var retryAfter: Double? { error.retryAfter }

    public static func == (a: CacheLoadError, b: CacheLoadError) -> Bool { a.error == b.error }
}
