import TestSupport
import Testing
@testable import Primitives

@Suite(.offPool) struct TimestampTests {
    @Test(arguments: [
        ("2025-11-03T14:20:05Z", "2025-11-03T14:20:05Z"),
        ("2025-11-03T06:12:33-08:00", "2025-11-03T14:12:33Z"),
        ("2025-11-03T23:59:59+09:00", "2025-11-03T14:59:59Z"),
        ("2025-12-31T23:30:00-01:00", "2026-01-01T00:30:00Z"),
        ("2024-02-29T12:00:00+0530", "2024-02-29T06:30:00Z"),
        ("2025-11-03T14:20:05.123Z", "2025-11-03T14:20:05Z"),
        ("2025-11-03 14:20:05", "2025-11-03T14:20:05Z"),
        ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),
        // The variants upstreams and apps also write: a date alone, no seconds, a comma
        // before the fraction, a lower-case t, an offset of hours alone.
        ("2025-11-03", "2025-11-03T00:00:00Z"),
        ("2025-11-03T14:20Z", "2025-11-03T14:20:00Z"),
        ("2025-11-03T14:20+01:00", "2025-11-03T13:20:00Z"),
        ("2025-11-03T14:20:05,5Z", "2025-11-03T14:20:05Z"),
        ("2025-11-03t14:20:05z", "2025-11-03T14:20:05Z"),
        ("2025-11-03T14:20:05+01", "2025-11-03T13:20:05Z"),
    ])
    func normalises(_ input: String, _ expected: String) {
        #expect(Timestamp.iso8601UTC(input) == expected)
    }

    @Test(arguments: [
        "", "yesterday", "2025-13-01T00:00:00Z", "2025-11-03T25:00:00Z", "2025-11-03T14:20:05+5", "2025-11-03T14:20:05Zjunk", "2025-02-30",
        "2025-11-03T14", "2025-11-03T14:20.5Z", "2025-11-03T14:20:05+19", "2025-11-03T14:20:05." + String(repeating: "1", count: 60),
    ])
    func rejects(_ input: String) {
        #expect(Timestamp.iso8601UTC(input) == nil)
    }

    /// Epoch times as upstreams send them, range-checked once: a fraction is cut to the whole
    /// second (down, also before 1970), and what no four-digit year can write is nil.
    @Test func epochSecondsAndMillisecondsAreRangeChecked() {
        #expect(Timestamp.epoch(seconds: 1_762_179_605.9) == 1_762_179_605)
        #expect(Timestamp.epoch(seconds: -0.5) == -1)
        #expect(Timestamp.epoch(milliseconds: 1_762_179_605_123) == 1_762_179_605)
        #expect(Timestamp.epoch(milliseconds: -1) == -1)
        for bad in [Double.nan, .infinity, -.infinity, 1e300, -1e300, 253_402_300_800] { #expect(Timestamp.epoch(seconds: bad) == nil) }
        #expect(Timestamp.epoch(milliseconds: 1e300) == nil)
        #expect(Timestamp.epoch(milliseconds: .nan) == nil)
        #expect(Timestamp.epoch(secondsText: "1762179605") == 1_762_179_605)
        for bad in ["", "-5", "+5", " 5", "1e9", "999999999999", "9999999999999", "12345678901234567890123"] {
            #expect(Timestamp.epoch(secondsText: bad) == nil, "\(bad)")
        }
        #expect(Timestamp.epoch(secondsText: "253402300799") == Timestamp.range.upperBound)
    }
}
