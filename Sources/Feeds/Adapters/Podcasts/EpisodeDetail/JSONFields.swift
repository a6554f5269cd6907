import FeedFormats
import Primitives

/// Reading a stranger's JSON field by field: a value of the wrong type is no value.
extension JSONValue {
    subscript(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A finite number, or a string holding one (publishers write `"startTime": "12.5"`).
    var finiteNumber: Double? {
        let text: String
        switch self {
        case .number(let t): text = t
        case .string(let t) where t.utf8.count <= 32: text = t
        default: return nil
        }
        guard let v = Double(text.trimmingWhitespace()), v.isFinite else { return nil }
        return v
    }

    var text: String? {
        guard case .string(let s) = self else { return nil }
        return s
    }

    var flag: Bool? {
        guard case .bool(let b) = self else { return nil }
        return b
    }

    var elements: [JSONValue] {
        guard case .array(let items) = self else { return [] }
        return items
    }
}
