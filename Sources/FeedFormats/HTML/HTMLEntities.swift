/// HTML5 named character references (the generated table in HTMLEntityTable.swift).
package enum HTMLEntities {
    /// The longest name, `CounterClockwiseContourIntegral;`.
    package static let longestName = 32
    /// The longest name that also works without its `;` (`middot`, `frac34`, …).
    package static let longestLegacyName = 6

    /// The text for a name as written after `&`, with its `;` (`"aacute;"` → "á");
    /// without one only for the legacy names HTML still accepts that way (`"amp"`).
    package static func value(named name: String) -> String? { byName[name] }

    private static let byName: [String: String] = {
        var table: [String: String] = [:]
        table.reserveCapacity(count)
        for line in HTMLEntities.table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let name = fields.first else { continue }
            var value = String.UnicodeScalarView()
            for hex in fields.dropFirst() {
                if let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) { value.append(scalar) }
            }
            table[String(name)] = String(value)
        }
        return table
    }()
}
