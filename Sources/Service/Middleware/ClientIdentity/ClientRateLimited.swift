import Primitives

extension ClientError {
    /// `429`: this client started more upstream fetches than its quota
    /// (`CLIENT_MISS_RATE_PER_MIN`) allows; `retryAfter` is when its bucket has one again.
    static func clientRateLimited(retryAfter: Double) -> ClientError {
        ClientError(
            status: 429, code: "client_rate_limited", message: "too many uncached requests from this client; slow down and retry later",
            retryAfter: retryAfter)
    }
}
