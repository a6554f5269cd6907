/// Timestamps normalised to ISO-8601 UTC (`2025-11-03T14:20:05Z`) without
/// Foundation formatters (fast, thread-safe, and strict about what they accept).
public enum Timestamp {
    /// Parses RFC 3339 / ISO-8601 date-times with `Z`, `±HH:MM` or `±HHMM` offsets
    /// (or none, read as UTC), and optional fractional seconds; returns UTC or nil.
    public static func iso8601UTC(_ text: String?) -> String? {
        guard let text, let epoch = parseISO8601(text) else { return nil }
        return format(epoch)
    }

    public static func parseISO8601(_ text: String) -> Int? {
        let b = Array(text.utf8)
        guard b.count >= 19 else { return nil }
        func num(_ from: Int, _ len: Int) -> Int? {
            guard from + len <= b.count else { return nil }
            var v = 0
            for i in from..<(from + len) {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard let year = num(0, 4), b[4] == UInt8(ascii: "-"), let month = num(5, 2), b[7] == UInt8(ascii: "-"), let day = num(8, 2),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "),
            let hour = num(11, 2), b[13] == UInt8(ascii: ":"), let minute = num(14, 2), b[16] == UInt8(ascii: ":"), let second = num(17, 2)
        else { return nil }
        var i = 19
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count && (48...57).contains(b[i]) { i += 1 }
        }
        var offset = 0
        if i < b.count {
            switch b[i] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                i += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                guard let oh = num(i + 1, 2) else { return nil }
                var j = i + 3
                if j < b.count && b[j] == UInt8(ascii: ":") { j += 1 }
                guard let om = num(j, 2) else { return nil }
                offset = sign * (oh * 3600 + om * 60)
                i = j + 2
            default:
                return nil
            }
        }
        guard i == b.count else { return nil }
        return epoch(year: year, month: month, day: day, hour: hour, minute: minute, second: second).map { $0 - offset }
    }

    /// Seconds since 1970 for a UTC civil time; nil when a field is out of range.
    static func epoch(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else {
            return nil
        }
        // Days from civil (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        return days * 86400 + hour * 3600 + minute * 60 + second
    }

    public static func format(_ epoch: Int) -> String {
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
