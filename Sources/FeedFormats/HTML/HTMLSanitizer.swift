import CGumbo
import Primitives

/// Show notes as HTML an app can insert: parsed by libgumbo (the HTML5 parsing algorithm,
/// so what is checked is what a browser would build), then rebuilt from the tree through an
/// allow-list, as bleach (on html5lib) and DOMPurify (on the browser's parser) do.
///
/// - Elements kept: the text markup podcast apps show (`allowedElements`, the set bleach
///   and feedparser accept for show notes, without tables and forms). Every other element
///   is unwrapped (its text kept), except those whose content is not text for a reader
///   (`droppedWithContent`: scripts, styles, frames, embedded objects, SVG/MathML, forms' controls).
/// - Attributes kept: `a href title`, `img src alt width height`, `abbr title`, `q cite`,
///   `ol start`, `time datetime`; every other one (style, event handlers, class, id) is dropped.
///   `href` must be absolute `http(s)` (relative ones resolved against the feed) or `mailto:`;
///   `src` absolute `http(s)`; otherwise a link is unwrapped and an image dropped. Links get
///   `rel="nofollow noopener noreferrer"`.
/// - Text is escaped on the way out (entities decoded once, by the parser); comments are
///   dropped; every element is closed; the output is bounded (`maxOutputBytes`), and so is
///   the depth walked.
package enum HTMLSanitizer {
    package static let allowedElements: Set<String> = [
        "a", "abbr", "b", "blockquote", "br", "cite", "code", "dd", "del", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
        "i", "img", "ins", "li", "ol", "p", "pre", "q", "s", "small", "strong", "sub", "sup", "time", "u", "ul",
    ]
    package static let droppedWithContent: Set<String> = [
        "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math", "template", "noscript", "noembed",
        "noframes", "textarea", "select", "option", "button", "input", "form", "title", "xmp", "plaintext", "audio", "video", "source",
        "track", "canvas", "map", "head", "meta", "link", "base",
    ]
    static let voidElements: Set<String> = ["br", "hr", "img"]
    static let blockElements: Set<String> = [
        "div", "section", "article", "aside", "header", "footer", "main", "nav", "figure", "figcaption", "table", "tr", "td", "th", "center",
        "address", "details", "summary",
    ]
    /// Input beyond this is not parsed (a show note is a few KiB; a feed's 1 MiB one is not).
    package static let maxInputBytes = 256 * 1024
    package static let maxOutputBytes = 64 * 1024
    static let maxDepth = 64
    /// Start tags parsed at most: bounds the tree's depth (libgumbo frees it recursively) and
    /// its size; show notes have a few hundred.
    package static let maxTags = 1024

    /// `html` sanitized; links resolved against `base`. nil when nothing visible is left.
    /// `imageSource`: where an image's (absolute) address is sent instead (the image proxy).
    /// Notes with only harmless markup, nested as written, take `HTMLFastSanitizer` (the same
    /// output, without the tree); `fastPath: false` parses every input (tests, fuzzing).
    package static func sanitize(_ html: String, base: String?, imageSource: (@Sendable (String) -> String)? = nil, fastPath: Bool = true) -> String? {
        if fastPath, case .sanitized(let notes) = HTMLFastSanitizer.sanitize(html, base: base, imageSource: imageSource) { return notes }
        var input = Array(html.utf8.prefix(maxInputBytes))
        var tags = 0
        if let cut = input.firstIndex(where: { b in
            if b == UInt8(ascii: "<") { tags += 1 }
            return tags > maxTags
        }) {
            input.removeSubrange(cut...)
        }
        input.append(0)
        guard
            let output = input.withUnsafeBufferPointer({ buffer in
                buffer.baseAddress.map { cgumbo_parse(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self), buffer.count - 1) }
            }) ?? nil
        else { return nil }
        defer { cgumbo_free(output) }
        guard let body = Self.body(of: output.pointee.root) else { return nil }
        var writer = Writer(base: base, imageSource: imageSource)
        writer.children(of: body, depth: 0)
        writer.closeAll()
        let text = String(decoding: writer.out, as: UTF8.self)
        return writer.visible ? text : nil
    }

    /// `<body>` of the parsed document (gumbo always builds html, head and body).
    private static func body(of root: UnsafeMutablePointer<GumboNode>?) -> UnsafeMutablePointer<GumboNode>? {
        guard let root, root.pointee.type == GUMBO_NODE_ELEMENT else { return nil }
        for child in children(root) where child.pointee.type == GUMBO_NODE_ELEMENT && tagName(child) == "body" { return child }
        return nil
    }

    static func children(_ node: UnsafeMutablePointer<GumboNode>) -> [UnsafeMutablePointer<GumboNode>] {
        let vector = node.pointee.v.element.children
        guard let data = vector.data else { return [] }
        return (0..<Int(vector.length)).compactMap { data[$0]?.assumingMemoryBound(to: GumboNode.self) }
    }

    static func tagName(_ node: UnsafeMutablePointer<GumboNode>) -> String {
        let element = node.pointee.v.element
        if element.tag == GUMBO_TAG_UNKNOWN { return "" }
        return gumbo_normalized_tagname(element.tag).map { String(cString: $0) } ?? ""
    }

    static func attribute(_ node: UnsafeMutablePointer<GumboNode>, _ name: String) -> String? {
        let vector = node.pointee.v.element.attributes
        guard let data = vector.data else { return nil }
        for i in 0..<Int(vector.length) {
            guard let attr = data[i]?.assumingMemoryBound(to: GumboAttribute.self), attr.pointee.attr_namespace == GUMBO_ATTR_NAMESPACE_NONE,
                let n = attr.pointee.name, String(cString: n) == name, let v = attr.pointee.value
            else { continue }
            return String(cString: v)
        }
        return nil
    }

    /// The attributes an allowed element keeps, in the order they are written, from
    /// `attribute` (its value by name, the first when the name is repeated, entities decoded).
    /// nil when the element goes: a link to nowhere safe (unwrapped: its text stays) or an
    /// image without a valid source (dropped). The full path and the fast one both call it.
    static func keptAttributes(
        of name: String, base: String?, imageSource: (@Sendable (String) -> String)?, _ attribute: (String) -> String?
    ) -> [(String, String)]? {
        var attributes: [(String, String)] = []
        switch name {
        case "a":
            guard let href = attribute("href").flatMap({ URLReference.absolute($0, base: base) ?? URLReference.mailto($0) }) else { return nil }
            attributes.append(("href", href))
            if let title = attribute("title") { attributes.append(("title", title)) }
            attributes.append(("rel", "nofollow noopener noreferrer"))
        case "img":
            guard let src = attribute("src").flatMap({ URLReference.absolute($0, base: base) }) else { return nil }
            attributes.append(("src", imageSource?(src) ?? src))
            if let alt = attribute("alt") { attributes.append(("alt", alt)) }
            for dimension in ["width", "height"] {
                if let v = attribute(dimension), let n = Int(v.trimmingASCIIWhitespace()), (1...10_000).contains(n) {
                    attributes.append((dimension, String(n)))
                }
            }
        case "abbr":
            if let title = attribute("title") { attributes.append(("title", title)) }
        case "q":
            if let cite = attribute("cite").flatMap({ URLReference.absolute($0, base: base) }) { attributes.append(("cite", cite)) }
        case "ol":
            if let v = attribute("start"), let n = Int(v.trimmingASCIIWhitespace()), (-1_000_000...1_000_000).contains(n) {
                attributes.append(("start", String(n)))
            }
        case "time":
            if let v = attribute("datetime") { attributes.append(("datetime", v)) }
        default:
            break
        }
        return attributes
    }

    /// The rebuilt markup, with the elements still open (closed in order, or at the end).
    struct Writer {
        let base: String?
        let imageSource: (@Sendable (String) -> String)?
        var out: [UInt8] = []
        var open: [String] = []
        var full = false
        /// Text or an image was written: not just empty tags.
        var visible = false

        init(base: String?, imageSource: (@Sendable (String) -> String)?) {
            self.base = base
            self.imageSource = imageSource
        }

        mutating func children(of node: UnsafeMutablePointer<GumboNode>, depth: Int) {
            for child in HTMLSanitizer.children(node) {
                guard !full else { return }
                visit(child, depth: depth)
            }
        }

        mutating func visit(_ node: UnsafeMutablePointer<GumboNode>, depth: Int) {
            switch node.pointee.type {
            case GUMBO_NODE_TEXT, GUMBO_NODE_CDATA, GUMBO_NODE_WHITESPACE:
                guard let text = node.pointee.v.text.text else { return }
                let s = String(cString: text)
                if node.pointee.type != GUMBO_NODE_WHITESPACE, s.contains(where: { !$0.isWhitespace }) { visible = true }
                escaped(s, attribute: false)
            case GUMBO_NODE_ELEMENT:
                element(node, depth: depth)
            default:
                return  // comments, documents, templates
            }
        }

        mutating func element(_ node: UnsafeMutablePointer<GumboNode>, depth: Int) {
            // SVG and MathML are not text; below four times the kept depth nothing is walked.
            guard node.pointee.v.element.tag_namespace == GUMBO_NAMESPACE_HTML, depth < 4 * HTMLSanitizer.maxDepth else { return }
            let name = HTMLSanitizer.tagName(node)
            if HTMLSanitizer.droppedWithContent.contains(name) { return }
            // Past the depth bound, only the text below is kept.
            guard HTMLSanitizer.allowedElements.contains(name), depth < HTMLSanitizer.maxDepth else {
                let before = out.count
                children(of: node, depth: depth + 1)
                // An unwrapped block (div, table cell, section…) still ends its line.
                if HTMLSanitizer.blockElements.contains(name), out.count > before, !full { out.append(contentsOf: "<br>".utf8) }
                return
            }
            guard let attributes = HTMLSanitizer.keptAttributes(of: name, base: base, imageSource: imageSource, { HTMLSanitizer.attribute(node, $0) })
            else {
                if name == "a" { children(of: node, depth: depth + 1) }  // a link to nowhere safe: its text stays
                return  // an image without a valid source goes
            }
            if name == "img" { visible = true }
            let start = out.count
            out.append(UInt8(ascii: "<"))
            out.append(contentsOf: name.utf8)
            for (key, value) in attributes {
                out.append(UInt8(ascii: " "))
                out.append(contentsOf: key.utf8)
                out.append(contentsOf: "=\"".utf8)
                escaped(value, attribute: true)
                out.append(UInt8(ascii: "\""))
            }
            out.append(UInt8(ascii: ">"))
            if HTMLSanitizer.voidElements.contains(name) {
                if out.count > HTMLSanitizer.maxOutputBytes {
                    out.removeSubrange(start...)
                    full = true
                }
                return
            }
            open.append(name)
            children(of: node, depth: depth + 1)
            if open.last == name {
                open.removeLast()
                closeTag(name)
            }
        }

        mutating func closeTag(_ name: String) {
            out.append(contentsOf: "</".utf8)
            out.append(contentsOf: name.utf8)
            out.append(UInt8(ascii: ">"))
        }

        mutating func closeAll() {
            while let name = open.popLast() { closeTag(name) }
        }

        /// Escapes `& < > "` (and `'`), stopping once the output is full.
        mutating func escaped(_ text: String, attribute: Bool) {
            for b in text.utf8 {
                guard out.count < HTMLSanitizer.maxOutputBytes else {
                    full = true
                    return
                }
                if b != 0 { HTMLSanitizer.appendEscaped(b, to: &out) }
            }
        }
    }
}

extension HTMLSanitizer {
    /// `b`, or its entity for `& < > " '`: how both sanitizer paths write text and attribute values.
    @inline(__always) static func appendEscaped(_ b: UInt8, to out: inout [UInt8]) {
        switch b {
        case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
        case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
        case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
        case UInt8(ascii: "\""): out.append(contentsOf: "&quot;".utf8)
        case UInt8(ascii: "'"): out.append(contentsOf: "&#39;".utf8)
        default: out.append(b)
        }
    }
}

extension HTMLSanitizer {
    /// What is wrong with `html` as sanitizer output, parsed as a browser would; nil: nothing
    /// (every element allowed, every attribute allowed for it, every URL absolute http(s) or mailto).
    package static func violation(in html: String) -> String? {
        var input = Array(html.utf8)
        input.append(0)
        guard
            let output = input.withUnsafeBufferPointer({ b in
                b.baseAddress.map { cgumbo_parse(UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self), b.count - 1) }
            }) ?? nil,
            let body = body(of: output.pointee.root)
        else { return "unparsable" }
        defer { cgumbo_free(output) }
        let allowedAttributes: [String: Set<String>] = [
            "a": ["href", "title", "rel"], "img": ["src", "alt", "width", "height"], "abbr": ["title"], "q": ["cite"], "ol": ["start"], "time": ["datetime"],
        ]
        var pending = children(body)
        var seen = 0
        while let node = pending.popLast(), seen < 100_000 {
            seen += 1
            guard node.pointee.type == GUMBO_NODE_ELEMENT else { continue }
            let name = tagName(node)
            guard node.pointee.v.element.tag_namespace == GUMBO_NAMESPACE_HTML, allowedElements.contains(name) else { return "has <\(name)>" }
            let vector = node.pointee.v.element.attributes
            if let data = vector.data {
                for i in 0..<Int(vector.length) {
                    guard let attr = data[i]?.assumingMemoryBound(to: GumboAttribute.self), let n = attr.pointee.name else { continue }
                    let key = String(cString: n), value = attr.pointee.value.map { String(cString: $0) } ?? ""
                    guard allowedAttributes[name]?.contains(key) == true else { return "has \(name) \(key)" }
                    if ["href", "src", "cite"].contains(key) {
                        let lower = value.lowercased()
                        let proxied = key == "src" && lower.hasPrefix("/images?")  // the image proxy, relative to the service
                        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") || (key == "href" && lower.hasPrefix("mailto:")) || proxied else {
                            return "has \(key)=\(value)"
                        }
                    }
                }
            }
            pending.append(contentsOf: children(node))
        }
        return nil
    }
}
