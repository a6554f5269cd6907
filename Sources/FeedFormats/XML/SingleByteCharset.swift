/// A single-byte, ASCII-compatible charset that expat decodes through its
/// unknown-encoding handler (the tables are generated, see SingleByteCharsetTable.swift).
package struct SingleByteCharset: Sendable {
    package let name: String
    package let labels: [String]
    /// Code points of bytes 0x80–0xFF; -1 where the charset defines none.
    package let upper: [Int32]

    /// All 256 bytes, as expat's `XML_Encoding.map` wants them.
    package var map: [Int32] {
        var map = (0..<128).map { Int32($0) }
        map.append(contentsOf: upper.prefix(128))
        while map.count < 256 { map.append(-1) }
        return map
    }

    /// Labels as feeds spell them, compared without case and punctuation: "ISO_8859-15" is "iso885915".
    package static func named(_ label: String) -> SingleByteCharset? {
        byLabel[normalisedLabel(label)]
    }

    package static func normalisedLabel(_ label: String) -> String {
        String(String.UnicodeScalarView(label.lowercased().unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }))
    }

    /// ISO-8859-1 as browsers read it (WHATWG): Windows-1252 in 0x80–0x9F, where real
    /// "Latin-1" feeds put their curly quotes, and the C1 controls where 1252 has nothing.
    package static let latin1AsWindows1252: SingleByteCharset = {
        let windows = all.first { $0.name == "windows-1252" }?.upper ?? []
        let upper = (0..<128).map { i in i < windows.count && windows[i] >= 0 ? windows[i] : Int32(0x80 + i) }
        return SingleByteCharset(name: "ISO-8859-1", labels: ["xfeedproxylatin1"], upper: upper)
    }()

    private static let byLabel: [String: SingleByteCharset] = {
        var table: [String: SingleByteCharset] = [:]
        for charset in all + [latin1AsWindows1252] {
            for label in charset.labels { table[label] = charset }
        }
        return table
    }()
}
