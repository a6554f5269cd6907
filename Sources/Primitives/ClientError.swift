/// The one shape a client is told something failed in, whichever layer found it (a bad
/// request, a feed's validation, an upstream failure): `status`, a stable `code`, a
/// human `message`, and for our own refusals how long until a retry makes sense. `body`
/// is the one JSON renderer: `{"error":{"status":…,"code":…,"message":…}}`, escaped.
public struct ClientError: Error, Sendable, Equatable {
    public let status: Int
    public let code: String
    public let message: String
    /// Seconds until a retry makes sense (`Retry-After`), for rate limits and open circuits.
    public let retryAfter: Double?

    public init(status: Int, code: String, message: String, retryAfter: Double? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    /// The JSON error body.
    public var body: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(48 + code.utf8.count + message.utf8.count)
        out.append(contentsOf: #"{"error":{"status":"#.utf8)
        out.append(contentsOf: String(status).utf8)
        out.append(contentsOf: #","code":"#.utf8)
        JSONBytes.appendQuoted(code, to: &out)
        out.append(contentsOf: #","message":"#.utf8)
        JSONBytes.appendQuoted(message, to: &out)
        out.append(contentsOf: "}}".utf8)
        return out
    }

    /// Equal when the client would see the same status, code and message.
    public static func == (a: ClientError, b: ClientError) -> Bool { a.status == b.status && a.code == b.code && a.message == b.message }
}
