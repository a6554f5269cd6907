/// A node of the API document, written as Swift literals where routes and models are declared.
/// Objects keep their members in the order written; the text sorts them, so the document's
/// bytes (and the shared-cache fingerprint made from them) do not depend on declaration order.
enum OpenAPIValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([OpenAPIValue])
    case object([(key: String, value: OpenAPIValue)])

    /// A member's value; nil when this is not an object or has no such member.
    subscript(key: String) -> OpenAPIValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// This object with `members` added, a member already present replaced in place.
    func merging(_ members: OpenAPIValue) -> OpenAPIValue {
        guard case .object(var mine) = self, case .object(let theirs) = members else { return self }
        for member in theirs {
            if let index = mine.firstIndex(where: { $0.key == member.key }) { mine[index].value = member.value } else { mine.append(member) }
        }
        return .object(mine)
    }

    /// Every `$ref` target in this tree.
    var references: [String] {
        switch self {
        case .array(let values): return values.flatMap(\.references)
        case .object(let members): return members.flatMap { $0.key == "$ref" ? [$0.value.stringValue ?? ""] : $0.value.references }
        default: return []
        }
    }

    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}

extension OpenAPIValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(nilLiteral: ()) { self = .null }
    init(arrayLiteral elements: OpenAPIValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, OpenAPIValue)...) { self = .object(elements.map { (key: $0.0, value: $0.1) }) }
}
