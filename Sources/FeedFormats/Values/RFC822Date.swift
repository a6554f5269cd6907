import Primitives

/// RSS dates (RFC 822 / RFC 2822 and the variants feeds really use) → epoch seconds.
package enum RFC822Date {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let zones: [String: Int] = [
        "gmt": 0, "ut": 0, "utc": 0, "z": 0,
        "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
    ]

    /// Parses `Mon, 03 Nov 2025 14:20:05 +0000`, `3 Nov 2025 14:20 GMT`, `Mon, 03 Nov 25 …`,
    /// named US zones, a missing zone (UTC), and falls back to ISO-8601. Every number is
    /// read as at most a few ASCII digits and range-checked by `Timestamp` (years 1–9999,
    /// offsets within ±18:00): anything else is nil, never a trap.
    package static func parse(_ text: String) -> Int? {
        let cleaned = text.trimmingWhitespace()
        guard cleaned.utf8.count <= 64 else { return nil }  // no real date is longer; bounds the work
        if let iso = Timestamp.parseISO8601(cleaned) { return iso }
        var tokens = cleaned.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map { String($0).lowercased() }
        if let first = tokens.first, weekdays.contains(String(first.prefix(3))) {
            tokens.removeFirst()
        }
        guard tokens.count >= 4 else { return nil }
        // Either "03 nov 2025" or "nov 03 2025".
        var day: Int?, monthIndex: Int?
        if let d = digits(tokens[0], max: 2), let m = months.firstIndex(of: String(tokens[1].prefix(3))) {
            day = d
            monthIndex = m
        } else if let m = months.firstIndex(of: String(tokens[0].prefix(3))), let d = digits(tokens[1], max: 2) {
            day = d
            monthIndex = m
        }
        guard let day, let monthIndex, tokens[2].count >= 2, var year = digits(tokens[2], max: 4) else { return nil }
        // RFC 5322's obsolete years: two digits (00–49 → 20xx) and three (+1900).
        if tokens[2].count == 2 { year += year < 50 ? 2000 : 1900 } else if tokens[2].count == 3 { year += 1900 }
        let timeParts = tokens[3].split(separator: ":", omittingEmptySubsequences: false).map { digits(String($0), max: 2) }
        guard (2...3).contains(timeParts.count), timeParts.allSatisfy({ $0 != nil }) else { return nil }
        let hour = timeParts[0] ?? 0, minute = timeParts[1] ?? 0
        let second = timeParts.count > 2 ? (timeParts[2] ?? 0) : 0
        var offset = 0
        if tokens.count > 4 {
            guard let zone = zoneOffset(tokens[4]) else { return nil }
            offset = zone
        }
        return Timestamp.epoch(year: year, month: monthIndex + 1, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    /// `+0530`, `-08:00` or a named zone → seconds east of UTC; nil outside ±18:00.
    package static func zoneOffset(_ zone: String) -> Int? {
        if let hours = zones[zone] { return hours * 3600 }
        guard let sign = zone.first, sign == "+" || sign == "-" else { return nil }
        let rest = zone.dropFirst()
        let hh: Substring, mm: Substring
        if rest.count == 4 {
            hh = rest.prefix(2)
            mm = rest.suffix(2)
        } else if rest.count == 5, rest[rest.index(rest.startIndex, offsetBy: 2)] == ":" {
            hh = rest.prefix(2)
            mm = rest.suffix(2)
        } else {
            return nil
        }
        guard let h = digits(String(hh), max: 2), let m = digits(String(mm), max: 2) else { return nil }
        return Timestamp.utcOffset(negative: sign == "-", hours: h, minutes: m)
    }

    /// 1 to `max` ASCII digits as a number (no sign, no overflow possible).
    package static func digits(_ text: String, max: Int) -> Int? {
        let u = text.utf8
        guard !u.isEmpty, u.count <= max, u.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return u.reduce(0) { $0 * 10 + Int($1 - 48) }
    }
}
