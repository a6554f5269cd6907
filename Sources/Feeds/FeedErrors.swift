import Primitives

/// The feed layer's client errors: parameter validation and unreadable upstream answers.
extension ClientError {
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
