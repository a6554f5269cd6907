import Primitives

/// `itunes:duration` as `HH:MM:SS`, `MM:SS` or plain seconds (fractions dropped) → seconds.
/// The first part may exceed 59 (`90:00`); later parts may not, and nothing longer than
/// `maxSeconds` is a real episode.
package enum EpisodeDuration {
    package static let maxSeconds = 31 * 86400

    package static func seconds(_ text: String) -> Int? {
        let t = text.trimmingWhitespace()
        guard !t.isEmpty else { return nil }
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 3 else { return nil }
        var total = 0
        for (i, part) in parts.enumerated() {
            let whole = i == parts.count - 1 ? part.split(separator: ".", maxSplits: 1).first.map(String.init) ?? "" : String(part)
            guard !whole.isEmpty, whole.count <= 9, whole.allSatisfy(\.isASCIIDigit), let v = Int(whole) else { return nil }
            guard i == 0 || v < 60 else { return nil }
            total = total * 60 + v  // at most three 9-digit parts: far from overflow
        }
        return total <= maxSeconds ? total : nil
    }
}
