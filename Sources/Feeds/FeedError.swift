/// A feed-level failure with the status, code and message the client sees.
public struct FeedError: Error, Sendable, Equatable {
    public let status: Int
    public let code: String
    public let message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public static func invalidParameter(_ message: String) -> FeedError {
        FeedError(status: 400, code: "invalid_parameter", message: message)
    }

    public static func missingParameter(_ name: String) -> FeedError {
        FeedError(status: 400, code: "missing_parameter", message: "\(name) is required")
    }

    public static func badUpstreamResponse(_ source: String) -> FeedError {
        FeedError(status: 502, code: "bad_upstream_response", message: "\(source) returned a response that could not be read")
    }
}
