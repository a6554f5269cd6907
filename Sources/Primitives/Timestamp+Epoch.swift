extension Timestamp {
    /// Unix seconds as an upstream sends them (a JSON number, perhaps with a fraction): the
    /// whole second, or nil when it is not finite or falls outside `range`.
    public static func epoch(seconds: Double) -> Int? {
        guard seconds.isFinite, seconds >= Double(range.lowerBound), seconds < Double(range.upperBound) + 1 else { return nil }
        return Int(seconds.rounded(.down))
    }

    /// Milliseconds since 1970, as JavaScript and many JSON APIs (GeoJSON feeds among them)
    /// send times: the whole second, or nil when not finite or outside `range`.
    public static func epoch(milliseconds: Double) -> Int? {
        guard milliseconds.isFinite else { return nil }
        return epoch(seconds: (milliseconds / 1000).rounded(.down))
    }

    /// Unix seconds written as decimal digits (a query parameter, a text field): nil unless
    /// 1 to 12 digits (a sign or spaces are not digits) within `range`.
    public static func epoch(secondsText text: some StringProtocol) -> Int? {
        guard (1...12).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }), let seconds = Int(text) else { return nil }
        return range.contains(seconds) ? seconds : nil
    }
}
