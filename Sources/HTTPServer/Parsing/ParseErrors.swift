import Primitives

/// The client errors the request parser and the server answer with themselves.
extension ClientError {
    static func badRequest(_ message: String) -> ClientError { ClientError(status: 400, code: "bad_request", message: message) }
    static let uriTooLong = ClientError(status: 414, code: "uri_too_long", message: "request line exceeds the limit")
    static let headersTooLarge = ClientError(status: 431, code: "headers_too_large", message: "header section exceeds the limit")
    static let bodyTooLarge = ClientError(status: 413, code: "payload_too_large", message: "request body exceeds the limit")
    static let requestTimeout = ClientError(status: 408, code: "request_timeout", message: "the request body did not arrive in time")
    static let tooManyConnections = ClientError(
        status: 503, code: "too_many_connections", message: "server is at its connection limit", retryAfter: 1)
    static let versionNotSupported = ClientError(status: 505, code: "http_version_not_supported", message: "only HTTP/1.0 and HTTP/1.1 are supported")
}
