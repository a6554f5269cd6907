/// Timestamps normalised to ISO-8601 UTC (`2025-11-03T14:20:05Z`) without
/// Foundation formatters (fast, thread-safe, and strict about what they accept).
///
/// Every date here comes from a feed anyone can publish, so the ranges are the
/// formats' own and are checked before any arithmetic: years 1–9999 (RFC 3339's
/// four digits), real calendar days, UTC offsets within ±18:00 (what RFC 3339 and
/// RFC 5322 zones need; the widest any zone has had is ±14:00). Inside those ranges
/// the epoch arithmetic cannot overflow; outside them a date is `nil`, never a trap.
public enum Timestamp {
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range `format` can write in four digits.
    public static let range = -62_135_596_800...253_402_300_799
    /// ±18:00, in seconds.
    static let maxOffset = 18 * 3600

    /// Parses RFC 3339 / ISO-8601 date-times with `Z`, `±HH:MM` or `±HHMM` offsets
    /// (or none, read as UTC), and optional fractional seconds; returns UTC or nil.
    public static func iso8601UTC(_ text: String?) -> String? {
        guard let text, let epoch = parseISO8601(text) else { return nil }
        return format(epoch)
    }

    /// Seconds since 1970 of an ISO 8601 / RFC 3339 time as upstreams and apps write it: a
    /// date-time (`T` or a space; seconds, a fraction and an offset optional, no offset read as
    /// UTC) or a calendar date alone (its midnight UTC); nil for anything else or out of `range`.
    public static func parseISO8601(_ text: String) -> Int? {
        guard (10...64).contains(text.utf8.count) else { return nil }
        let b = Array(text.utf8)
        func num(_ from: Int, _ len: Int) -> Int? {
            guard from + len <= b.count else { return nil }
            var v = 0
            for i in from..<(from + len) {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)  // at most 4 digits: no overflow
            }
            return v
        }
        guard let year = num(0, 4), b[4] == UInt8(ascii: "-"), let month = num(5, 2), b[7] == UInt8(ascii: "-"), let day = num(8, 2) else { return nil }
        if b.count == 10 { return epoch(year: year, month: month, day: day, hour: 0, minute: 0, second: 0) }
        guard b.count >= 16, b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
            let hour = num(11, 2), b[13] == UInt8(ascii: ":"), let minute = num(14, 2)
        else { return nil }
        var second = 0
        var i = 16
        if i < b.count && b[i] == UInt8(ascii: ":") {
            guard let s = num(17, 2) else { return nil }
            second = s
            i = 19
        }
        if i == 19 && i < b.count && (b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",")) {
            i += 1
            while i < b.count && (48...57).contains(b[i]) { i += 1 }
        }
        var offset = 0
        if i < b.count {
            switch b[i] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                i += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                let negative = b[i] == UInt8(ascii: "-")
                guard let oh = num(i + 1, 2) else { return nil }
                var j = i + 3
                if j < b.count && b[j] == UInt8(ascii: ":") { j += 1 }
                // `±HH` alone is an offset too (ISO 8601's reduced form).
                let om = j == i + 3 && j == b.count ? 0 : num(j, 2)
                guard let om, let o = utcOffset(negative: negative, hours: oh, minutes: om) else { return nil }
                offset = o
                i = j == b.count ? j : j + 2
            default:
                return nil
            }
        }
        guard i == b.count else { return nil }
        return epoch(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// A UTC offset in seconds, or nil unless it is within ±18:00 with minutes below 60.
    public static func utcOffset(negative: Bool, hours: Int, minutes: Int) -> Int? {
        guard (0...18).contains(hours), (0...59).contains(minutes) else { return nil }
        let seconds = hours * 3600 + minutes * 60
        guard seconds <= maxOffset else { return nil }
        return negative ? -seconds : seconds
    }

    /// Seconds since 1970 for a civil time at a UTC offset (local = UTC + offset); nil when
    /// a field is out of range (years 1–9999, real calendar days, leap second 60 allowed)
    /// or the UTC result falls outside `range`.
    public static func epoch(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, offset: Int = 0) -> Int? {
        guard (1...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second), (-maxOffset...maxOffset).contains(offset)
        else {
            return nil
        }
        // Days from civil (Howard Hinnant's algorithm); every term is bounded by the checks above.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        let result = days * 86400 + hour * 3600 + minute * 60 + second - offset
        return range.contains(result) ? result : nil
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Now, in Unix seconds (the wall clock).
    public static func now() -> Int { Int(Span.now() / 1_000_000_000) }

    /// `epoch` as `YYYY-MM-DDTHH:MM:SSZ`; values outside `range` are clamped to it.
    public static func format(_ epoch: Int) -> String {
        let epoch = min(max(epoch, range.lowerBound), range.upperBound)
        let days = epoch >= 0 ? epoch / 86400 : (epoch - 86399) / 86400
        let secs = epoch - days * 86400
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secs / 3600, 2)):\(pad(secs % 3600 / 60, 2)):\(pad(secs % 60, 2))Z"
    }
}
