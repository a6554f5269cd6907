/// The document as JSON text: keys sorted by code point, every character outside ASCII
/// escaped, `compact` without whitespace (served) or indented by two spaces (docs/openapi.json).
extension OpenAPIValue {
    func text(indented: Bool) -> String {
        var out = ""
        write(into: &out, indent: indented ? "\n" : nil)
        return out
    }

    private func write(into out: inout String, indent: String?) {
        let inner = indent.map { $0 + "  " }
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .string(let s): Self.quote(s, into: &out)
        case .array(let values):
            guard !values.isEmpty else { return out += "[]" }
            out += "["
            for (n, value) in values.enumerated() {
                if n > 0 { out += "," }
                if let inner { out += inner }
                value.write(into: &out, indent: inner)
            }
            out += (indent ?? "") + "]"
        case .object(let members):
            guard !members.isEmpty else { return out += "{}" }
            out += "{"
            for (n, member) in members.sorted(by: { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }).enumerated() {
                if n > 0 { out += "," }
                if let inner { out += inner }
                Self.quote(member.key, into: &out)
                out += indent == nil ? ":" : ": "
                member.value.write(into: &out, indent: inner)
            }
            out += (indent ?? "") + "}"
        }
    }

    private static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case " "..."\u{7F}": out.unicodeScalars.append(scalar)
            default:
                // UTF-16 code units, as \uXXXX (a surrogate pair above U+FFFF).
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            }
        }
        out += "\""
    }
}
