import Glibc
import Primitives

/// Renders log lines as bytes straight into a buffer: no Foundation formatting,
/// no intermediate strings. One JSON object per line.
@usableFromInline package enum LogLine {
    /// `{"ts":"2026-11-30T10:41:48.123Z","level":"info","msg":` — the start of every line.
    @inlinable package static func appendHead<Sink: ByteSink & ~Copyable>(level: LogLevel, clock: inout TimestampCache, into out: inout Sink) {
        out.append(literal: #"{"ts":""#)
        clock.appendNow(into: &out)
        switch level {
        case .debug: out.append(literal: #"","level":"debug","msg":"#)
        case .info: out.append(literal: #"","level":"info","msg":"#)
        case .warn: out.append(literal: #"","level":"warn","msg":"#)
        case .error: out.append(literal: #"","level":"error","msg":"#)
        }
    }

    /// `,"key":` with the key quoted.
    @inlinable package static func appendKey<Sink: ByteSink & ~Copyable>(_ key: String, into out: inout Sink) {
        out.append(UInt8(ascii: ","))
        appendString(key, into: &out)
        out.append(UInt8(ascii: ":"))
    }

    @inlinable package static func appendString<Sink: ByteSink & ~Copyable>(_ s: String, into out: inout Sink) { JSONBytes.appendQuoted(s, to: &out) }

    /// A quoted address; IPv4 (the common case) digit by digit, without a String.
    @inlinable package static func appendAddress<Sink: ByteSink & ~Copyable>(_ ip: IPAddress, into out: inout Sink) {
        guard ip.isIPv4 else { return appendString(ip.description, into: &out) }
        let v = UInt(UInt32(truncatingIfNeeded: ip.low))
        out.append(UInt8(ascii: "\""))
        out.append(decimal: v >> 24)
        out.append(UInt8(ascii: "."))
        out.append(decimal: v >> 16 & 0xff)
        out.append(UInt8(ascii: "."))
        out.append(decimal: v >> 8 & 0xff)
        out.append(UInt8(ascii: "."))
        out.append(decimal: v & 0xff)
        out.append(UInt8(ascii: "\""))
    }

    /// A number with three decimals (`12.345`), `null` when not finite.
    @inlinable package static func appendMillis<Sink: ByteSink & ~Copyable>(_ value: Double, into out: inout Sink) {
        guard value.isFinite, value.magnitude < 1e15 else {
            out.append(literal: "null")
            return
        }
        let thousandths = Int((value * 1000).rounded())
        if thousandths < 0 { out.append(UInt8(ascii: "-")) }
        let m = thousandths.magnitude
        out.append(decimal: m / 1000)
        out.append(UInt8(ascii: "."))
        let frac = m % 1000
        out.append(0x30 + UInt8(frac / 100))
        out.append(0x30 + UInt8(frac / 10 % 10))
        out.append(0x30 + UInt8(frac % 10))
    }

    @inlinable package static func appendValue<Sink: ByteSink & ~Copyable>(_ value: LogValue, into out: inout Sink) {
        switch value {
        case .string(let s): appendString(s, into: &out)
        case .int(let i): out.append(decimal: i)
        case .double(let d): appendMillis(d, into: &out)
        case .bool(let b): b ? out.append(literal: "true") : out.append(literal: "false")
        }
    }
}
