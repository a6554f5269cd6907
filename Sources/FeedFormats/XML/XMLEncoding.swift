import Primitives

/// Which encoding a feed's bytes are read in: its byte-order mark, else its XML
/// declaration, else the HTTP Content-Type charset, else UTF-8.
package struct XMLEncoding: Equatable {
    /// What to give `XML_ParserCreate`: nil lets expat read the BOM or the declaration itself
    /// (a non-nil name overrides the declaration, so it is only set when we know better).
    package let parserArgument: String?
    /// For error messages.
    package let name: String

    package static func resolve(_ bytes: [UInt8], contentType: String?) -> XMLEncoding {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return XMLEncoding(parserArgument: nil, name: "UTF-8") }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return XMLEncoding(parserArgument: nil, name: "UTF-16") }
        // UTF-16 without a BOM: expat recognises `<?` itself.
        if bytes.starts(with: [0x00, 0x3C]) || bytes.starts(with: [0x3C, 0x00]) { return XMLEncoding(parserArgument: nil, name: "UTF-16") }
        if let declared = declaredEncoding(bytes) {
            let known = canonical(declared)
            return XMLEncoding(parserArgument: known.argument == declared ? nil : known.argument, name: known.name)
        }
        if let charset = contentType.flatMap(charset(fromContentType:)) {
            let known = canonical(charset)
            return XMLEncoding(parserArgument: known.argument, name: known.name)
        }
        return XMLEncoding(parserArgument: nil, name: "UTF-8")
    }

    /// Labels expat decodes itself get its spelling; ISO-8859-1 is read as browsers read it;
    /// anything else goes to the unknown-encoding handler under its own label.
    package static func canonical(_ label: String) -> (argument: String, name: String) {
        switch SingleByteCharset.normalisedLabel(label) {
        case "utf8", "unicode11utf8": return ("UTF-8", "UTF-8")
        case "utf16": return ("UTF-16", "UTF-16")
        case "utf16le": return ("UTF-16LE", "UTF-16LE")
        case "utf16be": return ("UTF-16BE", "UTF-16BE")
        case "usascii", "ascii", "iso646us", "ansix341968", "us": return ("US-ASCII", "US-ASCII")
        case "iso88591", "latin1", "l1", "iso885911987", "cp819", "ibm819":
            return ("x-feedproxy-latin1", "ISO-8859-1")
        default:
            return (label, SingleByteCharset.named(label)?.name ?? label)
        }
    }

    /// `encoding="…"` from an ASCII-compatible `<?xml …?>` declaration at the very start.
    package static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        guard bytes.starts(with: Array("<?xml".utf8)) else { return nil }
        let head = bytes.prefix(256)
        guard let close = head.firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let declaration = String(decoding: head[..<close], as: UTF8.self)
        guard let key = declaration.firstRange(of: "encoding") else { return nil }
        var rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard rest.first == "=" else { return nil }
        rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        let value = rest.dropFirst().prefix { $0 != quote }
        return value.isEmpty ? nil : String(value)
    }

    /// `application/rss+xml; charset="ISO-8859-1"` → `ISO-8859-1`.
    package static func charset(fromContentType value: String) -> String? {
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, String(pair[0]).trimmingWhitespace().lowercased() == "charset" else { continue }
            var charset = String(pair[1]).trimmingWhitespace()
            if charset.count >= 2, charset.hasPrefix("\""), charset.hasSuffix("\"") { charset = String(charset.dropFirst().dropLast()) }
            return charset.isEmpty ? nil : charset
        }
        return nil
    }
}
