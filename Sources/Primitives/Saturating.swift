/// Double → Int without the trap: `Int(x)` traps in release builds when x is NaN, infinite
/// or past Int's range, and the seconds and rates it converts can come from configuration,
/// upstreams or Redis. One place for the clamped conversions every layer needs.
public enum Saturating {
    /// `value` truncated toward zero and clamped to `range`; NaN is `range.lowerBound`.
    public static func int(_ value: Double, in range: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)) -> Int {
        guard !value.isNaN else { return range.lowerBound }
        if value <= Double(range.lowerBound) { return range.lowerBound }
        if value >= Double(range.upperBound) { return range.upperBound }
        return Int(value)
    }

    /// Milliseconds in `seconds`, clamped to 0...2^31 ms (about 24 days).
    public static func milliseconds(_ seconds: Double) -> Int { int(seconds * 1000, in: 0...Int(Int32.max)) }

    /// Whole seconds for a `Retry-After` header: rounded up, at least 1, at most a day.
    public static func retryAfterSeconds(_ seconds: Double) -> Int { int(seconds.rounded(.up), in: 1...86_400) }
}
