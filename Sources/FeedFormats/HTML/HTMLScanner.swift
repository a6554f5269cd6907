/// One pass over HTML bytes for HTMLText: a small subset of the HTML5 tokenizer
/// (tags, comments, raw-text elements, character references), enough to extract text.
package struct HTMLScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var out: CollapsingWriter
    private var i = 0

    /// Tags that start a new line or box in a browser: they separate words.
    private static let blockTags: Set<String> = [
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption", "figure", "footer", "h1", "h2", "h3",
        "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul", "img", "title",
        "option", "tbody", "thead", "tfoot", "caption",
    ]

    package init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        out = CollapsingWriter(capacity: bytes.count)
    }

    package mutating func run() -> String {
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "<"): tag()
            case UInt8(ascii: "&"): reference()
            case 0xC2 where i + 1 < bytes.count && bytes[i + 1] == 0xA0:
                out.space()
                i += 2
            default:
                if CollapsingWriter.isSpace(b) {
                    out.space()
                    i += 1
                } else {
                    // A run of text to copy whole: up to markup, whitespace or a possible NBSP.
                    // A single space between two such bytes stays in it (collapsing leaves it).
                    let start = i
                    i += 1
                    while i < bytes.count {
                        let c = bytes[i]
                        if c == 0x20, i + 1 < bytes.count, !Self.endsRun(bytes[i + 1]) {
                            i += 2
                            continue
                        }
                        if Self.endsRun(c) { break }
                        i += 1
                    }
                    out.bytes(UnsafeBufferPointer(rebasing: bytes[start..<i]))
                }
            }
        }
        return out.string
    }

    // MARK: tags

    /// Markup, whitespace or a possible NBSP.
    private static func endsRun(_ c: UInt8) -> Bool {
        c == UInt8(ascii: "<") || c == UInt8(ascii: "&") || c == 0xC2 || c == 0x20 || (0x09...0x0D).contains(c)
    }

    private static func isLetter(_ b: UInt8) -> Bool { (65...90).contains(b) || (97...122).contains(b) }
    private static func isDigit(_ b: UInt8) -> Bool { (48...57).contains(b) }

    /// At `<`: a tag, comment or declaration is dropped; a `<` that starts none of them is text.
    private mutating func tag() {
        let start = i
        i += 1
        guard i < bytes.count else { return out.byte(UInt8(ascii: "<")) }
        switch bytes[i] {
        case UInt8(ascii: "!"):
            if matches("!--", at: i) {
                i = find(Array("-->".utf8), from: i + 3).map { $0 + 3 } ?? bytes.count
            } else {
                skipPast(UInt8(ascii: ">"))
            }
            return
        case UInt8(ascii: "?"):
            return skipPast(UInt8(ascii: ">"))
        case UInt8(ascii: "/"):
            i += 1
            guard i < bytes.count, Self.isLetter(bytes[i]) else { return skipPast(UInt8(ascii: ">")) }
            let kind = tagKind()
            skipAttributes()
            if kind.block { out.space() }
        default:
            guard Self.isLetter(bytes[i]) else {
                i = start + 1
                return out.byte(UInt8(ascii: "<"))
            }
            let kind = tagKind()
            skipAttributes()
            if kind.block { out.space() }
            if let name = kind.rawText { skipRawText(name) }
        }
    }

    private mutating func tagName() -> String {
        let start = i
        while i < bytes.count, !CollapsingWriter.isSpace(bytes[i]), bytes[i] != UInt8(ascii: "/"), bytes[i] != UInt8(ascii: ">") { i += 1 }
        return String(decoding: bytes[start..<i].lazy.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// Past a tag's name: whether it is a block tag (`blockTags`), and whether it is `script`
    /// or `style`; names of up to 8 bytes are compared packed in a word, without a String.
    private mutating func tagKind() -> (block: Bool, rawText: String?) {
        let start = i
        while i < bytes.count, !CollapsingWriter.isSpace(bytes[i]), bytes[i] != UInt8(ascii: "/"), bytes[i] != UInt8(ascii: ">") { i += 1 }
        guard i - start <= 8 else {
            i = start
            let name = tagName()
            return (Self.blockTags.contains(name), nil)
        }
        let key = Self.packed(bytes[start..<i].lazy.map { (65...90).contains($0) ? $0 + 32 : $0 })
        if key == Self.script { return (false, "script") }
        if key == Self.style { return (false, "style") }
        return (Self.packedBlockTags.contains(key), nil)
    }

    private static func packed(_ name: some Collection<UInt8>) -> UInt64 { name.reduce(0) { $0 << 8 | UInt64($1) } }
    private static let packedBlockTags = Set(blockTags.filter { $0.utf8.count <= 8 }.map { packed($0.utf8) })
    private static let script = packed("script".utf8), style = packed("style".utf8)

    /// Up to and past the `>` that ends the tag; a quoted attribute value may contain `>`.
    private mutating func skipAttributes() {
        var afterEquals = false
        while i < bytes.count {
            let b = bytes[i]
            i += 1
            if b == UInt8(ascii: ">") { return }
            if afterEquals && (b == UInt8(ascii: "\"") || b == UInt8(ascii: "'")) {
                while i < bytes.count, bytes[i] != b { i += 1 }
                i = min(i + 1, bytes.count)
                afterEquals = false
            } else if b == UInt8(ascii: "=") {
                afterEquals = true
            } else if !CollapsingWriter.isSpace(b) {
                afterEquals = false
            }
        }
    }

    /// `script` and `style` content is not text: skip to the matching end tag (or the end).
    private mutating func skipRawText(_ name: String) {
        let closing = Array("</\(name)".utf8)
        while let at = find(closing, from: i, ignoringCase: true) {
            let after = at + closing.count
            if after >= bytes.count || CollapsingWriter.isSpace(bytes[after]) || bytes[after] == UInt8(ascii: "/") || bytes[after] == UInt8(ascii: ">") {
                i = after
                return skipPast(UInt8(ascii: ">"))
            }
            i = after
        }
        i = bytes.count
    }

    private mutating func skipPast(_ b: UInt8) {
        while i < bytes.count, bytes[i] != b { i += 1 }
        i = min(i + 1, bytes.count)
    }

    private func matches(_ s: StaticString, at index: Int) -> Bool {
        let pattern = UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)
        return index + pattern.count <= bytes.count && bytes[index..<(index + pattern.count)].elementsEqual(pattern)
    }

    private func find(_ pattern: [UInt8], from start: Int, ignoringCase: Bool = false) -> Int? {
        guard let first = pattern.first, pattern.count <= bytes.count else { return nil }
        var k = start
        while k + pattern.count <= bytes.count {
            if bytes[k] == first {
                var j = 1
                while j < pattern.count, Self.fold(bytes[k + j], ignoringCase) == Self.fold(pattern[j], ignoringCase) { j += 1 }
                if j == pattern.count { return k }
            }
            k += 1
        }
        return nil
    }

    private static func fold(_ b: UInt8, _ ignoringCase: Bool) -> UInt8 { ignoringCase && (65...90).contains(b) ? b + 32 : b }

    // MARK: character references

    /// At `&`: a named or numeric reference is decoded; anything else is text.
    private mutating func reference() {
        let start = i
        i += 1
        if i < bytes.count, bytes[i] == UInt8(ascii: "#") {
            i += 1
            if let scalar = numeric() { return out.scalar(scalar) }
        } else if let value = named() {
            return out.text(value)
        }
        i = start + 1
        out.byte(UInt8(ascii: "&"))
    }

    /// `&#233;` or `&#xE9;` (the `;` is optional, as in HTML). Out-of-range values, surrogates
    /// and NUL become U+FFFD; 0x80–0x9F are read as Windows-1252, as HTML5 says.
    private mutating func numeric() -> Unicode.Scalar? {
        var hex = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "x") || bytes[i] == UInt8(ascii: "X") {
            hex = true
            i += 1
        }
        let digitsStart = i
        var value: UInt32 = 0
        while i < bytes.count, let digit = Self.digit(bytes[i], hex: hex) {
            value = min(value &* (hex ? 16 : 10) &+ digit, 0x11_0000)
            i += 1
        }
        guard i > digitsStart else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ";") { i += 1 }
        if (0x80...0x9F).contains(value), Int(value - 0x80) < Self.windows1252.count, Self.windows1252[Int(value - 0x80)] >= 0 {
            value = UInt32(Self.windows1252[Int(value - 0x80)])
        }
        if value == 0 || value > 0x10_FFFF || (0xD800...0xDFFF).contains(value) { return "\u{FFFD}" }
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }

    private static let windows1252: [Int32] = Array((SingleByteCharset.named("windows-1252")?.upper ?? []).prefix(32))

    private static func digit(_ b: UInt8, hex: Bool) -> UInt32? {
        if isDigit(b) { return UInt32(b - 48) }
        guard hex else { return nil }
        if (97...102).contains(b) { return UInt32(b - 87) }
        if (65...70).contains(b) { return UInt32(b - 55) }
        return nil
    }

    /// The HTML5 name at `i`: `&name;` from the full list, else the longest legacy name
    /// written without its `;` (`&copy2025` → ©2025).
    private mutating func named() -> String? {
        var end = i
        while end < bytes.count, end - i < HTMLEntities.longestName, Self.isLetter(bytes[end]) || Self.isDigit(bytes[end]) { end += 1 }
        guard end > i else { return nil }
        if end < bytes.count, bytes[end] == UInt8(ascii: ";"), let value = HTMLEntities.value(named: String(decoding: bytes[i...end], as: UTF8.self)) {
            i = end + 1
            return value
        }
        var length = min(end - i, HTMLEntities.longestLegacyName)
        while length > 0 {
            if let value = HTMLEntities.value(named: String(decoding: bytes[i..<(i + length)], as: UTF8.self)) {
                i += length
                return value
            }
            length -= 1
        }
        return nil
    }
}
