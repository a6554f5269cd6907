/// Turns HTML from feed descriptions into plain text: tags dropped, block tags
/// become spaces, entities decoded, whitespace collapsed.
enum HTMLText {
    static func plain(_ html: String) -> String {
        var out = ""
        out.reserveCapacity(html.utf8.count)
        var inTag = false
        var entity: String?
        for ch in html {
            if inTag {
                if ch == ">" {
                    inTag = false
                    out.append(" ")
                }
                continue
            }
            if var e = entity {
                if ch == ";" {
                    out += decode(e) ?? "&\(e);"
                    entity = nil
                } else if e.count < 10, ch.isLetter || ch.isNumber || ch == "#" {
                    e.append(ch)
                    entity = e
                } else {
                    out += "&" + e
                    entity = nil
                    if ch == "<" { inTag = true } else { out.append(ch) }
                }
                continue
            }
            switch ch {
            case "<": inTag = true
            case "&": entity = ""
            default: out.append(ch)
            }
        }
        if let e = entity { out += "&" + e }
        return out.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "ndash": "–", "mdash": "—",
        "hellip": "…", "rsquo": "’", "lsquo": "‘", "rdquo": "”", "ldquo": "“", "copy": "©", "reg": "®",
    ]

    private static func decode(_ e: String) -> String? {
        if let v = named[e.lowercased()] { return v }
        guard e.hasPrefix("#") else { return nil }
        let digits = e.dropFirst()
        let value = digits.lowercased().hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
        guard let value, value != 0, let scalar = Unicode.Scalar(value) else { return nil }
        return String(Character(scalar))
    }
}
