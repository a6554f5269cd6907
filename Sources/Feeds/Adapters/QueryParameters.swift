import Primitives

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
        items.first(where: { $0.name == name })?.value.trimmingWhitespace()
    }

    /// Like `value`, but blank counts as absent (for free-text parameters).
    public func string(_ name: String) -> String? {
        guard let v = value(name), !v.isEmpty else { return nil }
        return v
    }

    /// Every value of a repeatable parameter, comma-separated lists split, trimmed,
    /// empty ones dropped (`country=PE&country=ke,MX` → PE, ke, MX).
    public func list(_ name: String) -> [String] {
        items.filter { $0.name == name }.flatMap { $0.value.split(separator: ",") }.map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    public func int(_ name: String, in range: ClosedRange<Int>, default fallback: Int) throws(ClientError) -> Int {
        guard let text = value(name) else { return fallback }
        guard text.utf8.count <= 10, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(text), range.contains(value) else {
            throw .invalidParameter("\(name) must be an integer between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    public func choice(_ name: String, _ allowed: [String]) throws(ClientError) -> String? {
        guard let text = value(name)?.lowercased() else { return nil }
        guard allowed.contains(text) else {
            throw .invalidParameter("\(name) must be one of: \(allowed.joined(separator: ", "))")
        }
        return text
    }
}

extension String {
    /// `self` with `query` appended after `?`, or `&` when the URL already has a query.
    func addingQuery(_ query: String) -> String {
        self + (firstIndex(of: "?") == nil ? "?" : "&") + query
    }

    /// Percent-encodes for a query component, spaces as `+` (form encoding).
    func formEncoded() -> String {
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
