import FeedFormats
import Primitives

/// Turns an expat failure into the 502 a client sees, saying why when the reason is
/// the feed's encoding or its entity declarations (things a publisher can fix).
enum FeedParseFailure {
    static func error(_ failure: ExpatParser.Failure, encoding: XMLEncoding, bytes: [UInt8]) -> ClientError {
        switch failure {
        case .stopped:
            return .badUpstreamResponse("the podcast feed")
        case .declaresEntities:
            return badFeed("the podcast feed declares XML entities, which are not accepted")
        case .unknownEncoding:
            return badFeed("the podcast feed is in an encoding that cannot be decoded (\(printable(encoding.name)))")
        case .malformed(let line, let column, let index):
            guard undecodable(bytes, at: index, encoding: encoding.name) else { return .badUpstreamResponse("the podcast feed") }
            return badFeed("the podcast feed is not valid \(printable(encoding.name)): undecodable bytes at line \(line), column \(column)")
        }
    }

    private static func badFeed(_ message: String) -> ClientError { .unreadable(message) }

    /// Whether expat stopped on bytes rather than on markup: a non-ASCII byte in the token it
    /// stopped at that the declared encoding cannot produce (invalid UTF-8, a byte a
    /// single-byte charset leaves undefined, or any high byte in US-ASCII).
    static func undecodable(_ bytes: [UInt8], at index: Int, encoding: String) -> Bool {
        guard index >= 0, index < bytes.count else { return false }
        if encoding.hasPrefix("UTF-16") { return false }
        var end = index
        while end < bytes.count, end - index < 512, bytes[end] != UInt8(ascii: "<") || end == index { end += 1 }
        let token = bytes[index..<end]
        guard token.contains(where: { $0 >= 0x80 }) else { return false }
        if encoding == "UTF-8" { return String(validating: token, as: UTF8.self) == nil }
        return true
    }

    /// Labels come from the feed: only short, plain ones are echoed back.
    private static func printable(_ label: String) -> String {
        label.count <= 40 && label.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" }) ? label : "its declared encoding"
    }
}
