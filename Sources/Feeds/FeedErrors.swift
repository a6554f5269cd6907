import Primitives

/// The feed layer's client errors: parameter validation and unreadable upstream answers.
extension ClientError {
    /// Every code the feed adapters throw: with `UpstreamError.codes`, what a shared failure
    /// marker read back may name.
    public static let feedCodes: Set<String> = [
        "invalid_parameter", "missing_parameter", "bad_upstream_response", "podcast_not_found", "feed_unavailable", "loan_not_found",
        "internal_error", "encoding_failed",
    ]

    public static func invalidParameter(_ message: String) -> ClientError {
        ClientError(status: 400, code: "invalid_parameter", message: message)
    }

    public static func missingParameter(_ name: String) -> ClientError {
        ClientError(status: 400, code: "missing_parameter", message: "\(name) is required")
    }

    public static func badUpstreamResponse(_ source: String) -> ClientError {
        ClientError(status: 502, code: "bad_upstream_response", message: "\(source) returned a response that could not be read")
    }
}
