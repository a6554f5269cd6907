/// JSON string literals written straight into a byte buffer: the response encoder and
/// the access log both use it.
public enum JSONBytes {
    @inlinable public static func appendQuoted<Sink: ByteSink & ~Copyable>(_ s: String, to out: inout Sink) {
        if s.utf8.withContiguousStorageIfAvailable({ appendQuoted($0, to: &out) }) != nil { return }
        var copy = s  // not contiguous (bridged): made native first
        copy.withUTF8 { appendQuoted($0, to: &out) }
    }

    /// UTF-8 bytes as a JSON string literal: runs without escapes are appended whole.
    @inlinable public static func appendQuoted<Sink: ByteSink & ~Copyable>(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout Sink) {
        out.append(UInt8(ascii: "\""))
        // Nearly every string (ids, paths, routes) needs no escape: checked eight bytes at a
        // time, then appended in one block.
        if !needsEscape(utf8) {
            out.append(bytes: utf8)
            return out.append(UInt8(ascii: "\""))
        }
        var runStart = 0
        var i = 0
        while i < utf8.count {
            // Eight bytes at a time up to the next byte to escape (notes with markup have quotes).
            if utf8.count &- i >= 8, let base = utf8.baseAddress, !hasSpecialByte(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) {
                i &+= 8
                continue
            }
            let b = utf8[i]
            i += 1
            guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
            out.append(bytes: UnsafeBufferPointer(rebasing: utf8[runStart..<(i - 1)]))
            runStart = i
            out.append(UInt8(ascii: "\\"))
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(b)
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            default:
                out.append(literal: "u00")
                out.append(hexDigit(b >> 4))
                out.append(hexDigit(b & 0xF))
            }
        }
        out.append(bytes: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any byte is a control character, `"` or `\\`: eight bytes per step (the
    /// classic "has a byte less than n / equal to c" word tests; exact for existence).
    @inlinable static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return false }
        let special = hasSpecialByte
        var i = 0
        while utf8.count &- i >= 8 {
            if special(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) { return true }
            i &+= 8
        }
        guard i < utf8.count else { return false }
        var tail: UInt64 = 0x4141_4141_4141_4141  // "AAAAAAAA": padding that needs no escape
        withUnsafeMutableBytes(of: &tail) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[i...])) }
        return special(tail)
    }

    /// Whether any of the eight bytes of `w` is a control character, `"` or `\\` (the
    /// classic "has a byte less than n / equal to c" word tests; exact for existence).
    @inlinable @inline(__always) static func hasSpecialByte(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let control = (w &- 0x20 &* ones) & ~w & highs
        let q = w ^ (0x22 &* ones), b = w ^ (0x5C &* ones)
        let quote = (q &- ones) & ~q & highs
        let backslash = (b &- ones) & ~b & highs
        return control | quote | backslash != 0
    }

    @usableFromInline static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 87 + v }
}
