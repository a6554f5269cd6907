import Testing
@testable import Primitives

@Suite struct TimestampTests {
    @Test(arguments: [
        ("2025-11-03T14:20:05Z", "2025-11-03T14:20:05Z"),
        ("2025-11-03T06:12:33-08:00", "2025-11-03T14:12:33Z"),
        ("2025-11-03T23:59:59+09:00", "2025-11-03T14:59:59Z"),
        ("2025-12-31T23:30:00-01:00", "2026-01-01T00:30:00Z"),
        ("2024-02-29T12:00:00+0530", "2024-02-29T06:30:00Z"),
        ("2025-11-03T14:20:05.123Z", "2025-11-03T14:20:05Z"),
        ("2025-11-03 14:20:05", "2025-11-03T14:20:05Z"),
        ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),
    ])
    func normalises(_ input: String, _ expected: String) {
        #expect(Timestamp.iso8601UTC(input) == expected)
    }

    @Test(arguments: ["", "yesterday", "2025-13-01T00:00:00Z", "2025-11-03T25:00:00Z", "2025-11-03T14:20:05+5", "2025-11-03T14:20:05Zjunk"])
    func rejects(_ input: String) {
        #expect(Timestamp.iso8601UTC(input) == nil)
    }
}
