/// Why an upstream call failed, in terms the service can answer a client with.
public enum UpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    case dnsFailure
    case connectFailure
    case tlsFailure
    case timeout
    case httpStatus(Int)
    case bodyTooLarge
    case connectionLost
    case tooManyRedirects
    /// A redirect or URL to a scheme other than http/https.
    case protocolNotAllowed
    /// The address resolved to a non-public range while only public ones were allowed.
    case forbiddenAddress
    case cancelled
    /// The caller went away while it waited for its upstream turn: nothing was sent, so
    /// the client's quota is given back.
    case cancelledWhileQueued
    /// Our own token bucket for this upstream is empty: try again after the interval.
    case rateLimited(retryAfter: Double)
    /// The circuit breaker is open after repeated failures.
    case circuitOpen(retryAfter: Double)
    /// The host had every connection busy until the request's deadline: nothing was sent.
    case hostBusy(retryAfter: Double)
    case invalidRequest(String)
    case other(String)

    /// The HTTP status a client should see: 504 for timeouts, 503 for our own
    /// protective refusals, 502 for the rest.
    public var clientStatus: Int {
        if isOwnRefusal { return 503 }
        return self == .timeout ? 504 : 502
    }

    /// Refused by this replica before any request left for the upstream: the upstream was
    /// not asked, so it said nothing about itself and cost nothing.
    public var isOwnRefusal: Bool {
        switch self {
        case .rateLimited, .circuitOpen, .hostBusy, .cancelledWhileQueued: return true
        default: return false
        }
    }

    /// Every `code` this type answers: what a shared failure marker read back may name.
    public static let codes: Set<String> = [
        "upstream_dns_failure", "upstream_connect_failure", "upstream_tls_failure", "upstream_timeout", "upstream_http_error",
        "upstream_body_too_large", "upstream_connection_lost", "upstream_too_many_redirects", "upstream_protocol_not_allowed",
        "upstream_forbidden_address", "upstream_cancelled", "upstream_rate_limited", "upstream_unavailable",
        "upstream_invalid_request", "upstream_error", "upstream_host_busy",
    ]

    /// A stable machine-readable code for JSON errors and metrics.
    public var code: String {
        switch self {
        case .dnsFailure: return "upstream_dns_failure"
        case .connectFailure: return "upstream_connect_failure"
        case .tlsFailure: return "upstream_tls_failure"
        case .timeout: return "upstream_timeout"
        case .httpStatus: return "upstream_http_error"
        case .bodyTooLarge: return "upstream_body_too_large"
        case .connectionLost: return "upstream_connection_lost"
        case .tooManyRedirects: return "upstream_too_many_redirects"
        case .protocolNotAllowed: return "upstream_protocol_not_allowed"
        case .forbiddenAddress: return "upstream_forbidden_address"
        case .cancelled: return "upstream_cancelled"
        case .cancelledWhileQueued: return "upstream_cancelled"
        case .rateLimited: return "upstream_rate_limited"
        case .circuitOpen: return "upstream_unavailable"
        case .hostBusy: return "upstream_host_busy"
        case .invalidRequest: return "upstream_invalid_request"
        case .other: return "upstream_error"
        }
    }

    /// A short, safe description (never paths or internal details).
    public var description: String {
        switch self {
        case .dnsFailure: return "could not resolve the upstream host"
        case .connectFailure: return "could not connect to the upstream"
        case .tlsFailure: return "TLS handshake with the upstream failed"
        case .timeout: return "the upstream did not answer in time"
        case .httpStatus(let s): return "the upstream answered HTTP \(s)"
        case .bodyTooLarge: return "the upstream response was too large"
        case .connectionLost: return "the upstream closed the connection"
        case .tooManyRedirects: return "the upstream redirected too many times"
        case .protocolNotAllowed: return "the upstream redirected to a disallowed scheme"
        case .forbiddenAddress: return "the upstream address is not allowed"
        case .cancelled: return "the request was cancelled"
        case .cancelledWhileQueued: return "the request was cancelled before it was sent"
        case .rateLimited: return "the upstream rate limit is reached"
        case .circuitOpen: return "the upstream is failing; retrying later"
        case .hostBusy: return "every connection to the upstream's host stayed busy"
        case .invalidRequest: return "the upstream request could not be built"
        case .other: return "the upstream request failed"
        }
    }

    /// Failures that count against an upstream's health (circuit breaker) and allow a retry.
    var isUpstreamFault: Bool {
        switch self {
        case .dnsFailure, .connectFailure, .tlsFailure, .timeout, .connectionLost: return true
        case .httpStatus(let s): return s >= 500
        default: return false
        }
    }

    var isRetryable: Bool {
        switch self {
        case .connectFailure, .connectionLost: return true
        case .httpStatus(let s): return s == 502 || s == 503 || s == 504
        default: return false
        }
    }
}
