import Glibc
import HTTPServer
import Primitives

/// Renders log lines as bytes straight into a buffer: no Foundation formatting,
/// no intermediate strings. One JSON object per line.
enum LogLine {
    /// `{"ts":"2026-11-30T10:41:48.123Z","level":"info","msg":` — the start of every line.
    static func appendHead(level: LogLevel, clock: inout TimestampCache, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"ts":""#.utf8)
        clock.appendNow(into: &out)
        out.append(contentsOf: #"","level":""#.utf8)
        out.append(contentsOf: level.rawValue.utf8)
        out.append(contentsOf: #"","msg":"#.utf8)
    }

    /// `,"key":` with the key quoted.
    static func appendKey(_ key: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        appendString(key, into: &out)
        out.append(UInt8(ascii: ":"))
    }

    static func appendString(_ s: String, into out: inout [UInt8]) { JSONBytes.appendQuoted(s, to: &out) }

    /// A quoted address; IPv4 (the common case) digit by digit, without a String.
    static func appendAddress(_ ip: IPAddress, into out: inout [UInt8]) {
        guard ip.isIPv4 else { return appendString(ip.description, into: &out) }
        let v = UInt(UInt32(truncatingIfNeeded: ip.low))
        out.append(UInt8(ascii: "\""))
        appendUnsigned(v >> 24, into: &out)
        out.append(UInt8(ascii: "."))
        appendUnsigned(v >> 16 & 0xff, into: &out)
        out.append(UInt8(ascii: "."))
        appendUnsigned(v >> 8 & 0xff, into: &out)
        out.append(UInt8(ascii: "."))
        appendUnsigned(v & 0xff, into: &out)
        out.append(UInt8(ascii: "\""))
    }

    static func appendInt(_ value: Int, into out: inout [UInt8]) {
        if value < 0 {
            out.append(UInt8(ascii: "-"))
            // magnitude avoids the trap on Int.min.
            appendUnsigned(value.magnitude, into: &out)
        } else {
            appendUnsigned(UInt(value), into: &out)
        }
    }

    static func appendUnsigned(_ value: UInt, into out: inout [UInt8]) {
        if value < 10 {
            out.append(0x30 + UInt8(value))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var n = value, count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while n > 0 {
                d[23 - count] = 0x30 + UInt8(n % 10)
                n /= 10
                count += 1
            }
            out.append(contentsOf: d[(24 - count)...])
        }
    }

    /// A number with three decimals (`12.345`), `null` when not finite.
    static func appendMillis(_ value: Double, into out: inout [UInt8]) {
        guard value.isFinite, value.magnitude < 1e15 else {
            out.append(contentsOf: "null".utf8)
            return
        }
        let thousandths = Int((value * 1000).rounded())
        if thousandths < 0 { out.append(UInt8(ascii: "-")) }
        let m = thousandths.magnitude
        appendUnsigned(m / 1000, into: &out)
        out.append(UInt8(ascii: "."))
        let frac = m % 1000
        out.append(0x30 + UInt8(frac / 100))
        out.append(0x30 + UInt8(frac / 10 % 10))
        out.append(0x30 + UInt8(frac % 10))
    }

    static func appendValue(_ value: LogValue, into out: inout [UInt8]) {
        switch value {
        case .string(let s): appendString(s, into: &out)
        case .int(let i): appendInt(i, into: &out)
        case .double(let d): appendMillis(d, into: &out)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        }
    }
}
