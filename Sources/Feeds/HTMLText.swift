/// Turns HTML from feed descriptions into plain text: tags dropped, block tags
/// become spaces, entities decoded, whitespace collapsed.
enum HTMLText {
    static func plain(_ html: String) -> String {
        var out = String.UnicodeScalarView()
        var inTag = false
        var entity: String.UnicodeScalarView?
        for ch in html.unicodeScalars {
            if inTag {
                if ch == ">" {
                    inTag = false
                    out.append(" ")
                }
                continue
            }
            if var e = entity {
                if ch == ";" {
                    out.append(contentsOf: (decode(String(e)) ?? "&\(String(e));").unicodeScalars)
                    entity = nil
                } else if e.count < 10, ch.isASCII, ch.properties.isAlphabetic || ("0"..."9").contains(ch) || ch == "#" {
                    e.append(ch)
                    entity = e
                } else {
                    out.append("&")
                    out.append(contentsOf: e)
                    entity = nil
                    if ch == "<" { inTag = true } else { out.append(ch) }
                }
                continue
            }
            switch ch {
            case "<": inTag = true
            case "&": entity = String.UnicodeScalarView()
            default: out.append(ch)
            }
        }
        if let e = entity {
            out.append("&")
            out.append(contentsOf: e)
        }
        return collapseWhitespace(String(out))
    }

    /// Runs of whitespace become one space; leading and trailing whitespace go.
    /// Works on bytes (Character.isWhitespace is slow); ASCII whitespace and U+00A0 count.
    static func collapseWhitespace(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        var previous: UInt8 = 0
        for b in text.utf8 {
            let isSpace = b == 0x20 || (0x09...0x0D).contains(b)
            if isSpace || (previous == 0xC2 && b == 0xA0) {
                if previous == 0xC2 && b == 0xA0 {
                    out.removeLast()  // the lead byte of U+00A0
                    if out.last == 0x20 { out.removeLast() }  // a separator flushed just before it
                }
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace {
                    out.append(0x20)
                    pendingSpace = false
                }
                out.append(b)
            }
            previous = b
        }
        return String(decoding: out, as: UTF8.self)
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
