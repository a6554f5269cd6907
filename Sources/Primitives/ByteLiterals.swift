/// Numbers and literals appended as bytes, each in one block: access-log lines and
/// response heads are written with these on every request, so no `String` is made and
/// no byte is appended on its own.
extension ByteSink where Self: ~Copyable {
    /// A literal's bytes. (Appending `"…".utf8` copies through the string's storage
    /// generically, several times the cost.)
    @inlinable public mutating func append(literal: StaticString) {
        literal.withUTF8Buffer { append(bytes: $0) }
    }

    /// `value` in decimal.
    @inlinable public mutating func append(decimal value: UInt) {
        // Up to eight digits packed into one register, then appended byte by byte (a
        // ByteBuffer's append is a compare and a store); larger values in blocks of eight.
        if value >= 100_000_000 {
            append(decimal: value / 100_000_000)
            return append(digits: value % 100_000_000, count: 8)
        }
        var count = 1
        var limit: UInt = 10
        while count < 8 && value >= limit {
            count &+= 1
            limit &*= 10
        }
        append(digits: value, count: count)
    }

    /// Exactly `count` (1–8) decimal digits of `value`, zero-padded.
    @inlinable mutating func append(digits value: UInt, count: Int) {
        var n = value
        var packed: UInt64 = 0  // the most significant digit ends up in the low byte
        for _ in 0..<count {
            packed = packed << 8 | UInt64(truncatingIfNeeded: 0x30 &+ n % 10)
            n /= 10
        }
        for i in 0..<count { append(UInt8(truncatingIfNeeded: packed >> (8 &* UInt64(i)))) }
    }

    /// `value` in decimal, with a `-` when negative (`Int.min` included).
    @inlinable public mutating func append(decimal value: Int) {
        if value < 0 { append(0x2D) }
        append(decimal: value.magnitude)
    }

    /// The low `digits` (1–16) hex digits of `value`, lowercase, zero-padded. Eight digits
    /// at a time in one register (nibbles spread to bytes, then mapped to ASCII), not a
    /// loop per digit: three 16-digit ids go into every access-log line.
    @inlinable public mutating func append(hex value: UInt64, digits count: Int = 16) {
        let count = Swift.min(Swift.max(count, 1), 16)
        var text = HexDigits.ascii(value)
        Swift.withUnsafeBytes(of: &text) { raw in
            raw.withMemoryRebound(to: UInt8.self) { digits in
                append(bytes: UnsafeBufferPointer(rebasing: digits[(16 - count)...]))
            }
        }
    }

}

/// Lowercase hex digits computed eight at a time in one register.
public enum HexDigits {
    /// The 16 ASCII hex digits of `value`, zero-padded, most significant first in memory.
    @inlinable public static func ascii(_ value: UInt64) -> (UInt64, UInt64) {
        (ascii(UInt32(truncatingIfNeeded: value >> 32)), ascii(UInt32(truncatingIfNeeded: value)))
    }

    /// Eight ASCII hex digits of `v`, most significant first in memory.
    @inlinable static func ascii(_ v: UInt32) -> UInt64 {
        var n = UInt64(v)
        n = (n | n << 16) & 0x0000_FFFF_0000_FFFF
        n = (n | n << 8) & 0x00FF_00FF_00FF_00FF
        n = (n | n << 4) & 0x0F0F_0F0F_0F0F_0F0F  // nibble i (from the low end) in byte i
        let letters = ((n &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101  // 1 where nibble > 9
        let ascii = n &+ 0x3030_3030_3030_3030 &+ letters &* 0x27  // '0' + n, or 'a' + n - 10
        return ascii.bigEndian  // the most significant digit first in memory, on any host
    }
}
