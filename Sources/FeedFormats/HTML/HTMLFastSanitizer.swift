/// The fast path of `HTMLSanitizer.sanitize`: show notes whose markup is a handful of harmless
/// tags, each closed by its own end tag (or at the end), are rebuilt straight from their bytes
/// without libgumbo's tree. It returns exactly what the full path returns for the same input,
/// or declines, and the full path runs (tests and `make fuzz` run the two against each other).
///
/// It accepts only input whose HTML5 tree is its naive nesting: nothing the tree builder would
/// close, reopen, move or insert on its own, and no character reference it would read
/// differently. So it declines, among others:
/// - any NUL, CR or other control character but tab, LF and FF (HTML5 rewrites them);
/// - `<!`, `<?`, `</` not followed by a letter (comments, doctypes, bogus comments);
/// - an element outside `Kind` (p br b strong i em u s a code small sub sup span ul ol li
///   blockquote h1–h6 hr img), an end tag that does not close the innermost open element
///   (`</br>`, a stray `</p>`), self-closing syntax on a non-void element, attributes on an end tag;
/// - what HTML5 closes implicitly: a block (p ul ol li blockquote h1–h6 hr) while a `p` is open,
///   an `li` not directly in a `ul` or `ol`, a heading inside a heading, an `a` inside an `a`;
/// - deeper than `maxDepth`, more than `HTMLSanitizer.maxTags` `<`, input past
///   `HTMLSanitizer.maxInputBytes`, output that comes near `HTMLSanitizer.maxOutputBytes`;
/// - character references other than `&amp; &lt; &gt; &quot; &apos; &nbsp;` and numeric ones
///   with their `;` for a printable character outside 0x80–0x9F; an `&` followed by letters or
///   digits that any HTML5 name starts (`&copy`, `&amp` without `;` are references too). An `&`
///   that starts none is text, as a `<` followed by neither a letter nor `! ? /` is.
///
/// What it writes is what `HTMLSanitizer.Writer` writes: leading whitespace dropped (as the
/// tree builder does before the body starts), text escaped the same way, the kept attributes
/// from the same function (`HTMLSanitizer.keptAttributes`: the same URL checks, the same image
/// proxy), `span` and links to nowhere safe unwrapped, images without a valid source dropped,
/// every element closed; nil when nothing visible is left (the same test, per text node).
package enum HTMLFastSanitizer {
    package enum Outcome: Equatable {
        /// Not for the fast path: the full one must run.
        case declined
        /// What the full path returns.
        case sanitized(String?)
    }

    /// Open elements at most (the full path's bound is deeper; show notes nest a few levels).
    package static let maxDepth = 32

    package static func sanitize(_ html: String, base: String?, imageSource: (@Sendable (String) -> String)?) -> Outcome {
        guard html.utf8.count <= HTMLSanitizer.maxInputBytes else { return .declined }
        var html = html
        return html.withUTF8 { bytes in
            var builder = Builder(bytes: bytes, base: base, imageSource: imageSource)
            return builder.run().map(Outcome.sanitized) ?? .declined
        }
    }

    /// The elements the fast path knows; all but `span` are in `HTMLSanitizer.allowedElements`.
    package enum Kind: UInt8, CaseIterable {
        case p, br, b, strong, i, em, u, s, a, code, small, sub, sup, span, ul, ol, li, blockquote, h1, h2, h3, h4, h5, h6, hr, img

        package var name: String { Self.names[Int(rawValue)] }
        /// Appends the name's bytes (from a StaticString: no String, no reference counting).
        package func appendName(to out: inout [UInt8]) {
            let name: StaticString =
                switch self {
                case .p: "p"
                case .br: "br"
                case .b: "b"
                case .strong: "strong"
                case .i: "i"
                case .em: "em"
                case .u: "u"
                case .s: "s"
                case .a: "a"
                case .code: "code"
                case .small: "small"
                case .sub: "sub"
                case .sup: "sup"
                case .span: "span"
                case .ul: "ul"
                case .ol: "ol"
                case .li: "li"
                case .blockquote: "blockquote"
                case .h1: "h1"
                case .h2: "h2"
                case .h3: "h3"
                case .h4: "h4"
                case .h5: "h5"
                case .h6: "h6"
                case .hr: "hr"
                case .img: "img"
                }
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        }
        var isVoid: Bool { self == .br || self == .hr || self == .img }
        /// A start tag HTML5 closes an open `p` before.
        var closesParagraph: Bool {
            switch self {
            case .p, .ul, .ol, .li, .blockquote, .h1, .h2, .h3, .h4, .h5, .h6, .hr: true
            default: false
            }
        }
        var isHeading: Bool { (Kind.h1.rawValue...Kind.h6.rawValue).contains(rawValue) }
        /// Has attributes `HTMLSanitizer.keptAttributes` may keep.
        var hasAttributes: Bool { self == .a || self == .img || self == .ol }

        static let names = allCases.map { "\($0)" }
        /// Each name packed in a word (`blockquote`, the one longer than 8 bytes, apart).
        private static let keys = allCases.map { $0 == .blockquote ? 0 : key($0.name.utf8) }
        private static func key(_ name: some Collection<UInt8>) -> UInt64 { name.reduce(0) { $0 << 8 | UInt64($1) } }

        /// The element named by `name` (ASCII, any case).
        init?(_ name: UnsafeBufferPointer<UInt8>.SubSequence) {
            let lower = name.lazy.map { (65...90).contains($0) ? $0 | 0x20 : $0 }
            if name.count == 10, lower.elementsEqual("blockquote".utf8) {
                self = .blockquote
            } else if (1...8).contains(name.count), let i = Self.keys.firstIndex(of: Self.key(lower)) {
                self = Self.allCases[i]
            } else {
                return nil
            }
        }
    }

    private struct Builder {
        let bytes: UnsafeBufferPointer<UInt8>
        let base: String?
        let imageSource: (@Sendable (String) -> String)?
        var i = 0
        var out: [UInt8] = []
        var open: [(kind: Kind, written: Bool)] = []
        var paragraphs = 0, links = 0, headings = 0, tags = 0
        var visible = false
        /// Where the current text node's output starts.
        var textStart = 0

        init(bytes: UnsafeBufferPointer<UInt8>, base: String?, imageSource: (@Sendable (String) -> String)?) {
            self.bytes = bytes
            self.base = base
            self.imageSource = imageSource
            out.reserveCapacity(bytes.count + bytes.count / 8 + 64)
        }

        static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0C }
        static func isLetter(_ b: UInt8) -> Bool { (65...90).contains(b) || (97...122).contains(b) }
        static func isAlphanumeric(_ b: UInt8) -> Bool { isLetter(b) || (48...57).contains(b) }
        /// Bytes HTML5 keeps as they are in text and attribute values, but for `&`, `<` and
        /// the escaped ones (checked apart): not NUL, CR, other controls, DEL, C1 (U+0080–U+009F)
        /// or noncharacters (U+FDD0–U+FDEF, U+nFFFE and U+nFFFF: libgumbo makes them U+FFFD).
        /// The input is valid UTF-8 (a String's), so a lead byte has its continuation bytes.
        func isPlain(_ at: Int) -> Bool {
            let b = bytes[at]
            switch b {
            case ..<0x20: return b == 0x09 || b == 0x0A || b == 0x0C
            case 0x7F: return false
            case 0xC2: return !(0x80...0x9F).contains(bytes[at + 1])
            case 0xEF: return !(bytes[at + 1] == 0xB7 && (0x90...0xAF).contains(bytes[at + 2])) && !(bytes[at + 1] == 0xBF && bytes[at + 2] >= 0xBE)
            case 0xF0...: return !(bytes[at + 1] & 0x0F == 0x0F && bytes[at + 2] == 0xBF && bytes[at + 3] >= 0xBE)
            default: return true
            }
        }
        /// The bytes `isPlain` looks at more closely.
        static func needsCheck(_ b: UInt8) -> Bool { b < 0x20 || b == 0x7F || b == 0xC2 || b >= 0xEF }

        /// The sanitized notes (nil: nothing visible), or nil when declined.
        mutating func run() -> String?? {
            // Before the body starts, HTML5 drops whitespace.
            while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
            textStart = out.count
            while i < bytes.count {
                let b = bytes[i]
                switch b {
                case UInt8(ascii: "<"):
                    tags += 1
                    guard tags <= HTMLSanitizer.maxTags else { return nil }
                    let next = i + 1 < bytes.count ? bytes[i + 1] : 0x20
                    guard Self.isLetter(next) || next == UInt8(ascii: "/") || next == UInt8(ascii: "!") || next == UInt8(ascii: "?") else {
                        out.append(contentsOf: "&lt;".utf8)  // text
                        i += 1
                        continue
                    }
                    endOfText()
                    guard next == UInt8(ascii: "/") ? endTag() : startTag(), out.count < HTMLSanitizer.maxOutputBytes - 1024 else { return nil }
                    textStart = out.count
                case UInt8(ascii: "&"):
                    guard let decoded = reference(inAttribute: false) else { return nil }
                    escape(decoded)
                case UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"):
                    escape(CollectionOfOne(b))
                    i += 1
                default:
                    // A run of plain text, copied whole.
                    let start = i
                    while i < bytes.count {
                        let c = bytes[i]
                        if c == UInt8(ascii: "<") || c == UInt8(ascii: "&") || c == UInt8(ascii: ">") || c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                            break
                        }
                        if Self.needsCheck(c), !isPlain(i) { return nil }
                        i += 1
                    }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
                }
            }
            endOfText()
            while let top = open.popLast() {
                if top.written { closeTag(top.kind) }
            }
            guard out.count <= HTMLSanitizer.maxOutputBytes - 16 else { return nil }
            return .some(visible ? String(decoding: out, as: UTF8.self) : nil)
        }

        /// A text node ends: visible when it has a character that is not whitespace (the
        /// full path's test on the node's text, which is what was written unless it is ASCII).
        mutating func endOfText() {
            guard !visible, textStart < out.count else { return }
            var nonASCII = false
            for b in out[textStart...] {
                if (0x21...0x7E).contains(b) {
                    visible = true
                    return
                }
                if b >= 0x80 { nonASCII = true }
            }
            // Only whitespace and non-ASCII: nothing was escaped, the output is the text.
            if nonASCII, String(decoding: out[textStart...], as: UTF8.self).contains(where: { !$0.isWhitespace }) { visible = true }
        }

        /// Escapes `& < > " '` as `Writer.escaped` does.
        mutating func escape(_ text: some Collection<UInt8>) {
            for b in text { HTMLSanitizer.appendEscaped(b, to: &out) }
        }

        /// `escape` of a String (an attribute's value): runs without those bytes appended whole.
        mutating func escape(_ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                var start = 0
                for (i, b) in utf8.enumerated()
                where b == UInt8(ascii: "&") || b == UInt8(ascii: "<") || b == UInt8(ascii: ">") || b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                    escape(CollectionOfOne(b))
                    start = i + 1
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
            }
        }

        mutating func closeTag(_ kind: Kind) {
            out.append(contentsOf: "</".utf8)
            kind.appendName(to: &out)
            out.append(UInt8(ascii: ">"))
        }

        // MARK: character references

        /// The names the fast path decodes (with their `;`), and what they stand for.
        static let supported: [(name: [UInt8], value: [UInt8])] = {
            let pairs: [(String, String)] = [("amp;", "&"), ("lt;", "<"), ("gt;", ">"), ("quot;", "\""), ("apos;", "'"), ("nbsp;", "\u{A0}")]
            return pairs.map { (Array($0.0.utf8), Array($0.1.utf8)) }
        }()

        /// At `&`: the text it stands for (itself when it starts no reference), past it; nil to decline.
        mutating func reference(inAttribute: Bool) -> [UInt8]? {
            let start = i + 1
            guard start < bytes.count, Self.isAlphanumeric(bytes[start]) || bytes[start] == UInt8(ascii: "#") else {
                i += 1
                return [UInt8(ascii: "&")]
            }
            if bytes[start] == UInt8(ascii: "#") { return numericReference() }
            var end = start
            while end < bytes.count, end - start <= HTMLEntities.longestName, Self.isAlphanumeric(bytes[end]) { end += 1 }
            let semicolon = end < bytes.count && bytes[end] == UInt8(ascii: ";")
            if semicolon {
                let name = bytes[start...end]
                for s in Self.supported where s.name.elementsEqual(name) {
                    guard !inAttribute || s.name == Self.supported[0].name else { return nil }
                    i = end + 1
                    return s.value
                }
            }
            // Any HTML5 name at its start (with its `;`, or a legacy one without) is a reference.
            for length in 1...(end - start) {
                let name = String(decoding: bytes[start..<(start + length)], as: UTF8.self)
                if HTMLEntities.value(named: name) != nil { return nil }
                if length == end - start, semicolon, HTMLEntities.value(named: name + ";") != nil { return nil }
            }
            i += 1
            return [UInt8(ascii: "&")]
        }

        /// `&#…;` or `&#x…;` for a printable character outside the ones HTML5 remaps
        /// (0x80–0x9F, surrogates, NUL, past U+10FFFF), controls and noncharacters.
        mutating func numericReference() -> [UInt8]? {
            var j = i + 2
            let hex = j < bytes.count && bytes[j] | 0x20 == UInt8(ascii: "x")
            if hex { j += 1 }
            let digits = j
            var value: UInt32 = 0
            while j < bytes.count, j - digits < 8 {
                let b = bytes[j], lower = b | 0x20
                if (48...57).contains(b) {
                    value = value * (hex ? 16 : 10) + UInt32(b - 48)
                } else if hex, (97...102).contains(lower) {
                    value = value * 16 + UInt32(lower - 87)
                } else {
                    break
                }
                j += 1
            }
            guard j > digits, j < bytes.count, bytes[j] == UInt8(ascii: ";") else { return nil }
            let printable =
                (0x21...0x7E).contains(value) || (0xA0...0xD7FF).contains(value) || (0xE000...0xFDCF).contains(value)
                || ((0xFDF0...0x10_FFFF).contains(value) && value & 0xFFFE != 0xFFFE)
            guard printable, let scalar = Unicode.Scalar(value) else { return nil }
            i = j + 1
            return Array(String(scalar).utf8)
        }

        // MARK: tags

        /// At `<` and a letter, `!` or `?`: a start tag of a known element, nested as HTML5 would.
        mutating func startTag() -> Bool {
            i += 1
            let nameStart = i
            while i < bytes.count, !Self.isSpace(bytes[i]), bytes[i] != UInt8(ascii: "/"), bytes[i] != UInt8(ascii: ">") { i += 1 }
            guard let kind = Kind(bytes[nameStart..<i]) else { return false }  // also `<!` and `<?`
            var attributes: [(String, String)] = []
            var selfClosing = false
            while true {
                while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
                guard i < bytes.count else { return false }
                if bytes[i] == UInt8(ascii: ">") {
                    i += 1
                    break
                }
                if bytes[i] == UInt8(ascii: "/") {
                    guard i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: ">") else { return false }
                    selfClosing = true
                    i += 2
                    break
                }
                guard attribute(keepingIn: &attributes, kind.hasAttributes) else { return false }
            }
            guard kind.isVoid || !selfClosing else { return false }
            guard !(kind.closesParagraph && paragraphs > 0), !(kind.isHeading && headings > 0), !(kind == .a && links > 0) else { return false }
            if kind == .li { guard let parent = open.last?.kind, parent == .ul || parent == .ol else { return false } }
            guard kind.isVoid || open.count < HTMLFastSanitizer.maxDepth else { return false }
            var written = kind != .span
            if written {
                var kept: [(String, String)]? = []
                if kind.hasAttributes {
                    kept = HTMLSanitizer.keptAttributes(of: kind.name, base: base, imageSource: imageSource) { name in attributes.first { $0.0 == name }?.1 }
                }
                if let kept {
                    out.append(UInt8(ascii: "<"))
                    kind.appendName(to: &out)
                    for (key, value) in kept {
                        out.append(UInt8(ascii: " "))
                        out.append(contentsOf: key.utf8)
                        out.append(contentsOf: "=\"".utf8)
                        escape(value)
                        out.append(UInt8(ascii: "\""))
                    }
                    out.append(UInt8(ascii: ">"))
                    if kind == .img { visible = true }
                } else {
                    written = false  // a link unwrapped, an image dropped
                }
            }
            guard !kind.isVoid else { return true }
            open.append((kind, written))
            if kind == .p { paragraphs += 1 }
            if kind == .a { links += 1 }
            if kind.isHeading { headings += 1 }
            return true
        }

        /// An attribute at `i`, added to `attributes` when `keep` (its name lowercased, its
        /// value with references decoded; the first of a name wins, as in HTML5). false to
        /// decline: a name of other characters, an unquoted value HTML5 reads oddly, no
        /// whitespace after a quoted value, the tag unfinished.
        mutating func attribute(keepingIn attributes: inout [(String, String)], _ keep: Bool) -> Bool {
            let nameStart = i
            while i < bytes.count,
                Self.isAlphanumeric(bytes[i]) || bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "_") || bytes[i] == UInt8(ascii: ":")
            {
                i += 1
            }
            guard i > nameStart else { return false }
            let nameEnd = i
            var j = i
            while j < bytes.count, Self.isSpace(bytes[j]) { j += 1 }
            var value: [UInt8] = []
            var valueStart = i, valueEnd = i
            var decoded = false  // a reference in the value: `value` has it, else it is bytes[valueStart..<valueEnd]
            if j < bytes.count, bytes[j] == UInt8(ascii: "=") {
                i = j + 1
                while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
                guard i < bytes.count else { return false }
                let quote = bytes[i]
                let quoted = quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'")
                if quoted { i += 1 }
                valueStart = i
                while i < bytes.count {
                    let b = bytes[i]
                    if quoted {
                        if b == quote { break }
                    } else {
                        if Self.isSpace(b) || b == UInt8(ascii: ">") { break }
                        guard b != 0x22, b != 0x27, b != 0x3C, b != 0x3D, b != 0x60 else { return false }  // " ' < = `
                    }
                    guard isPlain(i) else { return false }
                    if b == UInt8(ascii: "&") {
                        if !decoded {
                            value = Array(bytes[valueStart..<i])
                            decoded = true
                        }
                        guard let text = reference(inAttribute: true) else { return false }
                        value += text
                    } else {
                        if decoded { value.append(b) }
                        i += 1
                    }
                }
                valueEnd = i
                if quoted {
                    guard i + 1 < bytes.count else { return false }
                    i += 1
                    let after = bytes[i]
                    guard Self.isSpace(after) || after == UInt8(ascii: ">") || after == UInt8(ascii: "/") else { return false }
                } else {
                    guard valueEnd > valueStart else { return false }
                }
            }
            guard keep else { return true }
            let nameBytes = UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd])
            // Names are nearly always written in lowercase: then read in place (a lazily mapped
            // sequence is decoded byte by byte).
            let name =
                nameBytes.contains(where: { (65...90).contains($0) })
                ? String(decoding: nameBytes.lazy.map { (65...90).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
                : String(decoding: nameBytes, as: UTF8.self)
            guard !attributes.contains(where: { $0.0 == name }) else { return true }  // the first one wins
            let text =
                decoded ? String(decoding: value, as: UTF8.self) : String(decoding: UnsafeBufferPointer(rebasing: bytes[valueStart..<valueEnd]), as: UTF8.self)
            attributes.append((name, text))
            return true
        }

        /// At `</` and a letter: the end tag of the innermost open element, or nil to decline.
        mutating func endTag() -> Bool {
            i += 2
            let nameStart = i
            guard i < bytes.count, Self.isLetter(bytes[i]) else { return false }
            while i < bytes.count, !Self.isSpace(bytes[i]), bytes[i] != UInt8(ascii: "/"), bytes[i] != UInt8(ascii: ">") { i += 1 }
            guard let kind = Kind(bytes[nameStart..<i]) else { return false }
            while i < bytes.count, Self.isSpace(bytes[i]) { i += 1 }
            guard i < bytes.count, bytes[i] == UInt8(ascii: ">"), let top = open.last, top.kind == kind else { return false }
            i += 1
            open.removeLast()
            if top.written { closeTag(kind) }
            if kind == .p { paragraphs -= 1 }
            if kind == .a { links -= 1 }
            if kind.isHeading { headings -= 1 }
            return true
        }
    }
}
