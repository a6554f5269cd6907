import Primitives
import Upstream

/// Validated access to query parameters: each accessor either returns a clean value
/// or throws the 400 the client should see. Unknown parameters are ignored.
public struct QueryParameters: Sendable {
    private let items: [(name: String, value: String)]

    public init(_ items: [(name: String, value: String)]) {
        self.items = items
    }

    /// The first value of `name`, trimmed; nil only when the parameter is absent.
    /// A present but empty value is kept, so typed parameters can reject it.
    public func value(_ name: String) -> String? {
        #if DEBUG
            Self.reads?.note(name)
        #endif
        return items.first(where: { $0.name == name })?.value.trimmingWhitespace()
    }

    /// Like `value`, but blank counts as absent (for free-text parameters).
    public func string(_ name: String) -> String? {
        guard let v = value(name), !v.isEmpty else { return nil }
        return v
    }

    /// Every value of a repeatable parameter, comma-separated lists split, trimmed,
    /// empty ones dropped (`country=PE&country=ke,MX` → PE, ke, MX).
    public func list(_ name: String) -> [String] {
        #if DEBUG
            Self.reads?.note(name)
        #endif
        return items.filter { $0.name == name }.flatMap { $0.value.split(separator: ",") }.map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    public func int(_ name: String, in range: ClosedRange<Int>, default fallback: Int) throws(ClientError) -> Int {
        guard let text = value(name) else { return fallback }
        guard text.utf8.count <= 10, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(text), range.contains(value) else {
            throw .invalidParameter("\(name) must be an integer between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    /// A decimal number (`4.5`, `-12.25`, `3`): an optional sign, digits and at most one point,
    /// 24 characters at most (no exponent, hex, `nan` or `inf`, all of which `Double(_:)` would
    /// take), within `range`.
    public func decimal(_ name: String, in range: ClosedRange<Double>, default fallback: Double? = nil) throws(ClientError) -> Double? {
        guard let text = value(name) else { return fallback }
        let bytes = text.utf8
        let digits = bytes.drop { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") }
        guard (1...24).contains(bytes.count), bytes.count - digits.count <= 1, digits.contains(where: { (48...57).contains($0) }),
            digits.allSatisfy({ (48...57).contains($0) || $0 == UInt8(ascii: ".") }), digits.filter({ $0 == UInt8(ascii: ".") }).count <= 1,
            let value = Double(text), value.isFinite, range.contains(value)
        else {
            throw .invalidParameter("\(name) must be a decimal number between \(Self.shown(range.lowerBound)) and \(Self.shown(range.upperBound))")
        }
        return value
    }

    /// A point in time as apps send one: an ISO 8601 / RFC 3339 time (`2025-11-03T14:20:05Z`,
    /// an offset, a date alone: `Timestamp.parseISO8601`) or Unix seconds, in seconds since
    /// 1970 within `Timestamp.range`. An unescaped `+` of an offset, read as a space, is put back.
    public func time(_ name: String) throws(ClientError) -> Int? {
        guard var text = value(name) else { return nil }
        if let seconds = Timestamp.epoch(secondsText: text) { return seconds }
        if text.utf8.count > 19, let space = text.lastIndex(of: " "), text.distance(from: text.startIndex, to: space) >= 16 {
            text.replaceSubrange(space...space, with: "+")
        }
        guard let epoch = Timestamp.parseISO8601(text) else {
            throw .invalidParameter("\(name) must be an ISO 8601 time (2025-11-03T14:20:05Z) or Unix seconds")
        }
        return epoch
    }

    /// A bound as a message shows it: `10`, not `10.0`.
    private static func shown(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    public func choice(_ name: String, _ allowed: [String]) throws(ClientError) -> String? {
        guard let text = value(name)?.lowercased() else { return nil }
        guard allowed.contains(text) else {
            throw .invalidParameter("\(name) must be one of: \(allowed.joined(separator: ", "))")
        }
        return text
    }
}

#if DEBUG
    extension QueryParameters {
        /// Where the names read go while a test listens (debug builds only): a test matches
        /// what each route reads against the parameters its API description declares, so a
        /// parameter parsed but left out of the description is found.
        @TaskLocal public static var reads: QueryReads?
    }

    /// The parameter names read under `QueryParameters.reads`, and what the feeds prepared
    /// from them name as their source and their first request's upstream.
    public final class QueryReads: Sendable {
        private let read = Locked<Set<String>>([])
        private let named = Locked<[(source: String, upstream: String)]>([])

        public init() {}

        func note(_ name: String) {
            read.withLock { _ = $0.insert(name) }
        }

        /// A feed prepared from what was read: the source its answer is counted under, and the
        /// upstream its request is budgeted and queued as.
        public func note(_ prepared: PreparedFeed) {
            named.withLock { $0.append((prepared.source, prepared.upstreamRequest.upstream)) }
        }

        public var names: Set<String> { read.withLock { $0 } }
        public var prepared: [(source: String, upstream: String)] { named.withLock { $0 } }
    }
#endif

extension String {
    /// `self` with `query` appended after `?`, or `&` when the URL already has a query.
    func addingQuery(_ query: String) -> String {
        self + (firstIndex(of: "?") == nil ? "?" : "&") + query
    }

    /// Percent-encodes for a query component, spaces as `+` (form encoding).
    package func formEncoded() -> String {
        var out = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return out
    }
}
