import Primitives

/// Reads an OPML 1.0/2.0 subscription list (what podcast apps export) over expat: every
/// `<outline>` at any depth that names a feed (`xmlUrl`), in document order, with its text. A
/// stranger's file: no DTD or entity is loaded (`ExpatParser`), nesting, outlines and
/// attribute lengths are bounded, and the reader stops rather than grow past them.
package enum OPMLReader {
    /// One outline that names a feed, as written (nothing checked yet but lengths).
    package struct Outline: Sendable, Equatable {
        package var text: String?
        package var xmlUrl: String
        package var htmlUrl: String?
        package var type: String?
    }

    package struct Result: Sendable, Equatable {
        package var title: String?
        package var outlines: [Outline]
        /// Outlines that name a feed beyond `maxOutlines`: left out.
        package var leftOut: Int
    }

    package enum Failure: Error, Equatable {
        /// Not XML, or XML that is not OPML (no `<opml>` root).
        case notOPML(String)
        /// Nested deeper than `maxDepth`.
        case tooDeep
    }

    /// Nesting no exporter writes (folders of folders); a document deeper than this is refused.
    package static let maxDepth = 64
    /// The longest attribute kept; longer ones are cut (a URL this long is refused later).
    package static let maxAttributeBytes = 4096

    package static func read(_ bytes: [UInt8], maxOutlines: Int) throws(Failure) -> Result {
        let encoding = XMLEncoding.resolve(bytes, contentType: nil)
        let handler = Handler(maxOutlines: maxOutlines)
        guard let parser = ExpatParser(encoding: encoding.parserArgument, handler: handler) else { throw .notOPML("the XML parser could not be created") }
        let failure = parser.parse(bytes)
        if handler.tooDeep { throw .tooDeep }
        switch failure {
        case nil: break
        case .stopped: throw .notOPML("the document is not OPML")
        case .declaresEntities: throw .notOPML("the document declares XML entities, which are not accepted")
        case .unknownEncoding: throw .notOPML("the document is in an encoding that cannot be decoded (\(encoding.name.prefix(40)))")
        case .malformed(let line, let column, _): throw .notOPML("the document is not well-formed XML (line \(line), column \(column))")
        }
        guard handler.sawRoot else { throw .notOPML("the document is not OPML (no <opml> element)") }
        return Result(title: handler.title, outlines: handler.outlines, leftOut: handler.leftOut)
    }

    private final class Handler: XMLStreamHandler {
        let maxOutlines: Int
        var depth = 0
        var sawRoot = false
        var tooDeep = false
        var inHeadTitle = false
        var titleBytes: [UInt8] = []
        var outlines: [Outline] = []
        var leftOut = 0

        init(maxOutlines: Int) {
            self.maxOutlines = maxOutlines
        }

        var title: String? {
            let text = String(decoding: titleBytes, as: UTF8.self).trimmingWhitespace()
            return text.isEmpty ? nil : text
        }

        func startElement(_ name: XMLName, _ attributes: XMLAttributes) -> Bool {
            depth += 1
            if depth > OPMLReader.maxDepth {
                tooDeep = true
                return false
            }
            let local = name.local
            if depth == 1 {
                sawRoot = local.elementsEqual("opml".utf8)
                return sawRoot
            }
            inHeadTitle = depth == 3 && local.elementsEqual("title".utf8)
            guard local.elementsEqual("outline".utf8) else { return true }
            var xmlUrl: String?, text: String?, title: String?, htmlUrl: String?, type: String?
            attributes.forEach { key, value in
                // Exporters differ in case (xmlUrl, xmlurl, XMLURL).
                switch key.lowercased() {
                case "xmlurl": xmlUrl = value
                case "text": text = value
                case "title": title = value
                case "htmlurl": htmlUrl = value
                case "type": type = value
                default: break
                }
            }
            guard let xmlUrl else { return true }  // a folder, or a link that is not a feed
            guard outlines.count < maxOutlines else {
                leftOut += 1
                return true
            }
            outlines.append(
                Outline(
                    text: Self.cleaned(text) ?? Self.cleaned(title), xmlUrl: xmlUrl.trimmingWhitespace(), htmlUrl: Self.cleaned(htmlUrl),
                    type: Self.cleaned(type)))
            return true
        }

        func endElement() -> Bool {
            depth -= 1
            inHeadTitle = false
            return true
        }

        func characters(_ utf8: UnsafeBufferPointer<UInt8>) {
            guard inHeadTitle, titleBytes.count < OPMLReader.maxAttributeBytes else { return }
            titleBytes += utf8.prefix(OPMLReader.maxAttributeBytes - titleBytes.count)
        }

        static func cleaned(_ value: String?) -> String? {
            guard let value else { return nil }
            let text = value.trimmingWhitespace()
            return text.isEmpty ? nil : text
        }
    }
}

extension XMLAttributes {
    /// Each attribute as (name, value), values cut to `OPMLReader.maxAttributeBytes`.
    package func forEach(_ body: (String, String) -> Void) {
        guard let list else { return }
        var i = 0
        while let key = list[i] {
            if let value = list[i + 1] {
                var length = 0
                while value[length] != 0, length < OPMLReader.maxAttributeBytes { length += 1 }
                let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: length)
                body(String(cString: key), String(decoding: bytes, as: UTF8.self))
            }
            i += 2
        }
    }
}
