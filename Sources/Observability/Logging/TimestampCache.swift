import Glibc
import Primitives

/// UTC `YYYY-MM-DDTHH:MM:SS.mmm` with the calendar part rendered once per second.
@usableFromInline package struct TimestampCache {
    @usableFromInline var second = Int.min
    @usableFromInline var text: [UInt8] = []

    @usableFromInline package init() {}

    @inlinable package mutating func appendNow<Sink: ByteSink & ~Copyable>(into out: inout Sink) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        if ts.tv_sec != second { render(ts.tv_sec) }
        text.withUnsafeBufferPointer { out.append(bytes: $0) }
        let ms = Int(ts.tv_nsec) / 1_000_000
        out.append(0x30 + UInt8(ms / 100))
        out.append(0x30 + UInt8(ms / 10 % 10))
        out.append(0x30 + UInt8(ms % 10))
        out.append(UInt8(ascii: "Z"))
    }

    /// Once a second: "2026-11-30T13:40:41." (the feeds' RFC 3339 formatter, its "Z" replaced).
    @usableFromInline mutating func render(_ seconds: Int) {
        second = seconds
        text = Array(Timestamp.format(seconds).utf8.dropLast())
        text.append(UInt8(ascii: "."))
    }
}
