import Primitives

/// Numbers read from feeds and upstream answers, range-checked where they are parsed:
/// out of range, non-finite or malformed reads as nil (the field becomes `null`),
/// never a trap and never an encoding failure.
package enum FeedNumber {
    /// A positive whole number written as 1–18 ASCII digits (episode and season numbers,
    /// enclosure lengths): signs, fractions and anything past 10^18 are nil.
    package static func positive(_ text: String) -> Int? {
        let u = text.trimmingWhitespace().utf8
        guard !u.isEmpty, u.count <= 18, u.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let value = u.reduce(0) { $0 * 10 + Int($1 - 48) }
        return value > 0 ? value : nil
    }

    /// A count (items, lenders, borrowers, total loans): 0...Int32.max, else nil.
    package static func count(_ value: Int?) -> Int? {
        guard let value, (0...Int(Int32.max)).contains(value) else { return nil }
        return value
    }

    /// Largest money amount kept: no loan or amount in any currency comes near it, and
    /// below it every Double prints as an ordinary JSON number.
    package static let maxAmount = 1e15

    /// A money amount: finite, 0...maxAmount (`-0` reads as 0), else nil.
    package static func amount(_ value: Double?) -> Double? {
        guard let value, value.isFinite, value >= 0, value <= maxAmount else { return nil }
        return value == 0 ? 0 : value
    }
}
