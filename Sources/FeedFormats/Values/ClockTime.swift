/// A point in an episode written as a clock: `HH:MM:SS.mmm`, `MM:SS.mmm` or `SS.mmm`
/// (Podlove's normal play time, WebVTT and SubRip cue times; SubRip writes `,` for `.`)
/// → seconds. The first part may exceed 59; later parts may not. Nothing past
/// `maxSeconds` is a point in a real episode.
package enum ClockTime {
    package static let maxSeconds = 31.0 * 86400

    package static func seconds(_ text: some StringProtocol) -> Double? {
        var parts = text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let last = parts.popLast() else { return nil }
        var total = 0
        for (i, part) in parts.enumerated() {
            guard let v = digits(part), i == 0 || v < 60 else { return nil }
            total = total * 60 + v  // at most three 9-digit parts: far from overflow
        }
        let split = last.split(omittingEmptySubsequences: false) { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: ",") }
        guard (1...2).contains(split.count), let whole = digits(split[0]), parts.isEmpty || whole < 60 else { return nil }
        var fraction = 0.0
        if split.count == 2 {
            guard let f = digits(split[1]), split[1].count <= 9 else { return nil }
            fraction = Double(f) / pow10(split[1].count)
        }
        let value = Double(total * 60 + whole) + fraction
        return value <= maxSeconds ? value : nil
    }

    private static func digits(_ bytes: some Collection<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 9 else { return nil }
        var v = 0
        for b in bytes {
            guard (0x30...0x39).contains(b) else { return nil }
            v = v * 10 + Int(b - 0x30)
        }
        return v
    }

    private static func pow10(_ n: Int) -> Double { (0..<n).reduce(1.0) { p, _ in p * 10 } }
}
