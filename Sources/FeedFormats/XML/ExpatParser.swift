import CExpat

/// What a streaming XML consumer is told. Returning `false` stops the parse.
package protocol XMLStreamHandler: AnyObject {
    func startElement(_ name: XMLName, _ attributes: XMLAttributes) -> Bool
    func endElement() -> Bool
    func characters(_ utf8: UnsafeBufferPointer<UInt8>)
}

/// An element name as expat reports it with namespaces on: `uri \u{1} local`.
package struct XMLName {
    package let uri: UnsafeBufferPointer<UInt8>
    package let local: UnsafeBufferPointer<UInt8>

    package init(_ name: UnsafePointer<CChar>) {
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), count: cStringLength(name))
        if let separator = bytes.firstIndex(of: ExpatParser.namespaceSeparator) {
            uri = UnsafeBufferPointer(rebasing: bytes[..<separator])
            local = UnsafeBufferPointer(rebasing: bytes[(separator + 1)...])
        } else {
            uri = UnsafeBufferPointer(start: nil, count: 0)
            local = bytes
        }
    }
}

/// The attribute list of a start tag (`name, value, …, NULL`), read only on demand.
package struct XMLAttributes {
    package let list: UnsafeMutablePointer<UnsafePointer<CChar>?>?

    /// The value of an attribute without a namespace prefix.
    package subscript(_ name: StaticString) -> String? {
        guard let list else { return nil }
        let wanted = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        var i = 0
        while let key = list[i] {
            let keyBytes = UnsafeBufferPointer(start: UnsafeRawPointer(key).assumingMemoryBound(to: UInt8.self), count: cStringLength(key))
            if keyBytes.elementsEqual(wanted) { return list[i + 1].map { String(cString: $0) } }
            i += 2
        }
        return nil
    }
}

private func cStringLength(_ s: UnsafePointer<CChar>) -> Int {
    var n = 0
    while s[n] != 0 { n += 1 }
    return n
}

/// libexpat, hardened for third-party bytes: no DTD or external entity is ever loaded,
/// documents that declare entities are refused (no entity expansion to bound), and
/// charsets expat lacks are decoded through generated single-byte tables.
package final class ExpatParser {
    package static let namespaceSeparator: UInt8 = 0x01

    package enum Failure: Equatable {
        /// The consumer stopped the parse.
        case stopped
        case declaresEntities
        case unknownEncoding
        /// expat's error, with where it happened (1-based).
        case malformed(line: Int, column: Int, byteIndex: Int)
    }

    private let parser: XML_Parser
    private let handler: any XMLStreamHandler
    private var refusedEntities = false

    package init?(encoding: String?, handler: any XMLStreamHandler) {
        guard let parser = XML_ParserCreateNS(encoding, CChar(bitPattern: Self.namespaceSeparator)) else { return nil }
        self.parser = parser
        self.handler = handler
        configure()
    }

    deinit { XML_ParserFree(parser) }

    /// Feeds the document in slices so expat's own buffer stays small however large the feed.
    package func parse(_ bytes: [UInt8]) -> Failure? {
        withExtendedLifetime(self) {
            bytes.withUnsafeBufferPointer { buffer -> Failure? in
                let sliceSize = 64 << 10
                var offset = 0
                repeat {
                    let count = min(sliceSize, buffer.count - offset)
                    let isFinal: Int32 = offset + count == buffer.count ? 1 : 0
                    let start = buffer.baseAddress.map { UnsafeRawPointer($0 + offset).assumingMemoryBound(to: CChar.self) }
                    if XML_Parse(parser, start, Int32(count), isFinal) == XML_STATUS_ERROR { return failure() }
                    offset += count
                } while offset < buffer.count
                return nil
            }
        }
    }

    private func failure() -> Failure {
        let code = XML_GetErrorCode(parser)
        if refusedEntities { return .declaresEntities }
        if code == XML_ERROR_ABORTED { return .stopped }
        if code == XML_ERROR_UNKNOWN_ENCODING { return .unknownEncoding }
        return .malformed(
            line: Int(XML_GetCurrentLineNumber(parser)), column: Int(XML_GetCurrentColumnNumber(parser)) + 1,
            byteIndex: Int(XML_GetCurrentByteIndex(parser)))
    }

    private func stop() { XML_StopParser(parser, XML_Bool(0)) }

    private static func driver(_ userData: UnsafeMutableRawPointer?) -> ExpatParser? {
        userData.map { Unmanaged<ExpatParser>.fromOpaque($0).takeUnretainedValue() }
    }

    private func configure() {
        XML_SetUserData(parser, Unmanaged.passUnretained(self).toOpaque())
        XML_SetParamEntityParsing(parser, XML_PARAM_ENTITY_PARSING_NEVER)
        XML_SetElementHandler(
            parser,
            { userData, name, attributes in
                guard let driver = ExpatParser.driver(userData), let name else { return }
                if !driver.handler.startElement(XMLName(name), XMLAttributes(list: attributes)) { driver.stop() }
            },
            { userData, _ in
                guard let driver = ExpatParser.driver(userData) else { return }
                if !driver.handler.endElement() { driver.stop() }
            })
        XML_SetCharacterDataHandler(parser) { userData, text, length in
            guard let driver = ExpatParser.driver(userData), let text, length > 0 else { return }
            driver.handler.characters(UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: Int(length)))
        }
        // Entities (internal or external) are how billion-laughs and XXE documents work; feeds do not need them.
        XML_SetEntityDeclHandler(parser) { userData, _, _, _, _, _, _, _, _ in
            guard let driver = ExpatParser.driver(userData) else { return }
            driver.refusedEntities = true
            driver.stop()
        }
        XML_SetExternalEntityRefHandler(parser) { _, _, _, _, _ in Int32(XML_STATUS_ERROR.rawValue) }  // never fetched
        // A feed naming an external DTD (RSS 0.91's) may use its HTML entities: decode those, keep others as written.
        XML_SetSkippedEntityHandler(parser) { userData, name, isParameter in
            guard let driver = ExpatParser.driver(userData), let name, isParameter == 0 else { return }
            let entity = String(cString: name)
            let text = Array((HTMLEntities.value(named: entity + ";") ?? "&\(entity);").utf8)
            text.withUnsafeBufferPointer { driver.handler.characters($0) }
        }
        XML_SetUnknownEncodingHandler(
            parser,
            { _, name, info in
                guard let name, let info, let charset = SingleByteCharset.named(String(cString: name)) else { return Int32(XML_STATUS_ERROR.rawValue) }
                charset.map.withUnsafeBufferPointer { map in map.baseAddress.map { cexpat_set_single_byte_map(info, $0) } }
                return Int32(XML_STATUS_OK.rawValue)
            }, nil)
    }
}
