/// RSS dates (RFC 822 / RFC 2822 and the variants feeds really use) → epoch seconds.
enum RFC822Date {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let zones: [String: Int] = [
        "gmt": 0, "ut": 0, "utc": 0, "z": 0,
        "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
    ]

    /// Parses `Mon, 03 Nov 2025 14:20:05 +0000`, `3 Nov 2025 14:20 GMT`, `Mon, 03 Nov 25 …`,
    /// named US zones, a missing zone (UTC), and falls back to ISO-8601.
    static func parse(_ text: String) -> Int? {
        let cleaned = text.trimmingWhitespace()
        if let iso = Timestamp.parseISO8601(cleaned) { return iso }
        var tokens = cleaned.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map { String($0).lowercased() }
        if let first = tokens.first, weekdays.contains(String(first.prefix(3))) {
            tokens.removeFirst()
        }
        guard tokens.count >= 4 else { return nil }
        // Either "03 nov 2025" or "nov 03 2025".
        var day: Int?, monthIndex: Int?
        if let d = Int(tokens[0]), let m = months.firstIndex(of: String(tokens[1].prefix(3))) {
            day = d
            monthIndex = m
        } else if let m = months.firstIndex(of: String(tokens[0].prefix(3))), let d = Int(tokens[1]) {
            day = d
            monthIndex = m
        }
        guard let day, let monthIndex, var year = Int(tokens[2]) else { return nil }
        if tokens[2].count == 2 { year += year < 50 ? 2000 : 1900 }
        let timeParts = tokens[3].split(separator: ":").map { Int($0) }
        guard timeParts.count >= 2, timeParts.allSatisfy({ $0 != nil }) else { return nil }
        let hour = timeParts[0] ?? 0, minute = timeParts[1] ?? 0
        let second = timeParts.count > 2 ? (timeParts[2] ?? 0) : 0
        var offset = 0
        if tokens.count > 4 {
            let zone = tokens[4]
            if let hours = zones[zone] {
                offset = hours * 3600
            } else if zone.count == 5, let sign = zone.first, sign == "+" || sign == "-", let v = Int(zone.dropFirst()) {
                offset = (sign == "-" ? -1 : 1) * ((v / 100) * 3600 + (v % 100) * 60)
            } else if zone.count == 6, let sign = zone.first, sign == "+" || sign == "-" {
                let parts = zone.dropFirst().split(separator: ":")
                guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]) else { return nil }
                offset = (sign == "-" ? -1 : 1) * (h * 3600 + m * 60)
            } else {
                return nil
            }
        }
        return Timestamp.epoch(year: year, month: monthIndex + 1, day: day, hour: hour, minute: minute, second: second).map { $0 - offset }
    }
}

/// `itunes:duration` as `HH:MM:SS`, `MM:SS` or plain seconds (fractions dropped) → seconds.
enum EpisodeDuration {
    static func seconds(_ text: String) -> Int? {
        let t = text.trimmingWhitespace()
        guard !t.isEmpty else { return nil }
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 3 else { return nil }
        var total = 0
        for (i, part) in parts.enumerated() {
            let whole = i == parts.count - 1 ? part.split(separator: ".", maxSplits: 1).first.map(String.init) ?? "" : String(part)
            guard !whole.isEmpty, whole.count <= 9, whole.allSatisfy(\.isASCIIDigit), let v = Int(whole) else { return nil }
            total = total * 60 + v
        }
        return total
    }
}
