/// A failure that becomes a JSON error response: `{"error":{"status":…,"code":…,"message":…}}`.
public struct HTTPError: Error, Sendable, Equatable {
    public let status: Int
    public let code: String
    public let message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    static func badRequest(_ message: String) -> HTTPError { HTTPError(status: 400, code: "bad_request", message: message) }
    static let uriTooLong = HTTPError(status: 414, code: "uri_too_long", message: "request line exceeds the limit")
    static let headersTooLarge = HTTPError(status: 431, code: "headers_too_large", message: "header section exceeds the limit")
    static let bodyTooLarge = HTTPError(status: 413, code: "payload_too_large", message: "request body exceeds the limit")
    static let versionNotSupported = HTTPError(status: 505, code: "http_version_not_supported", message: "only HTTP/1.0 and HTTP/1.1 are supported")
}
