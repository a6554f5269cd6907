/// `Accept-Encoding` (RFC 9110 §12.5.3), read byte by byte: every browser and app sends
/// it, so deciding "gzip or not" makes no substrings, no lowercased copies, no Doubles.
enum AcceptEncoding {
    /// Whether `gzip` (or `x-gzip`, or `*` when gzip is not named) has a weight above 0.
    static func acceptsGzip(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var starAccepted = false
        var start = 0
        while start < b.count {
            var end = start
            while end < b.count && b[end] != UInt8(ascii: ",") { end += 1 }
            var codingEnd = start
            while codingEnd < end && b[codingEnd] != UInt8(ascii: ";") { codingEnd += 1 }
            let coding = trimmed(b, start, codingEnd)
            let accepted = weightAboveZero(b, codingEnd, end)
            if equalsLowercase(b, coding, "gzip") || equalsLowercase(b, coding, "x-gzip") { return accepted }
            if equalsLowercase(b, coding, "*") { starAccepted = accepted }
            start = end + 1
        }
        return starAccepted
    }

    /// The parameters `b[from..<to]` (`;q=0.5`, …): false only for a weight of zero
    /// (`q=0`, `q=0.000`); a weight that is not a number is ignored, as before.
    private static func weightAboveZero(_ b: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Bool {
        var i = from
        while i < to {
            // One parameter: after the `;`, up to the next one.
            var end = i + 1
            while end < to && b[end] != UInt8(ascii: ";") { end += 1 }
            let p = trimmed(b, i + 1, end)
            if p.count >= 2, b[p.lowerBound] | 0x20 == UInt8(ascii: "q"), b[p.lowerBound + 1] == UInt8(ascii: "=") {
                let digits = (p.lowerBound + 2)..<p.upperBound
                let numeric = !digits.isEmpty && digits.allSatisfy { b[$0] == UInt8(ascii: ".") || (0x30...0x39).contains(b[$0]) }
                if numeric { return digits.contains { (0x31...0x39).contains(b[$0]) } }
            }
            i = end
        }
        return true
    }

    private static func trimmed(_ b: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Range<Int> {
        var lo = from, hi = to
        while lo < hi && (b[lo] == 0x20 || b[lo] == 0x09) { lo += 1 }
        while hi > lo && (b[hi - 1] == 0x20 || b[hi - 1] == 0x09) { hi -= 1 }
        return lo..<hi
    }

    private static func equalsLowercase(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>, _ word: StaticString) -> Bool {
        ASCII.equalsLowercase(UnsafeBufferPointer(rebasing: b[r]), word)
    }
}
