import Primitives

/// The feed layer's client errors: parameter validation and unreadable upstream answers.
extension ClientError {
    /// Every code the feed adapters throw: with `UpstreamError.codes`, what a shared failure
    /// marker read back may name.
    public static let feedCodes: Set<String> = [
        "invalid_parameter", "missing_parameter", "bad_upstream_response", "podcast_not_found", "feed_unavailable", "loan_not_found",
        "internal_error", "encoding_failed", "episode_not_found", "chapters_unreadable", "transcript_unreadable",
        "bad_signature", "unsupported_image_type", "image_too_large", "image_undecodable", "image_timed_out", "image_decoders_busy",
    ]

    public static func invalidParameter(_ message: String) -> ClientError {
        ClientError(status: 400, code: "invalid_parameter", message: message)
    }

    public static func missingParameter(_ name: String) -> ClientError {
        ClientError(status: 400, code: "missing_parameter", message: "\(name) is required")
    }

    public static func badUpstreamResponse(_ source: String) -> ClientError {
        unreadable("\(source) returned a response that could not be read")
    }

    /// Data a replica cached that does not read back (damaged, or from another version).
    public static func unreadableCachedData(_ source: String) -> ClientError {
        unreadable("\(source): the cached data could not be read")
    }

    /// `bad_upstream_response`: what came from upstream (or was made of it) cannot be used.
    static func unreadable(_ message: String) -> ClientError {
        ClientError(status: 502, code: "bad_upstream_response", message: message)
    }
}
