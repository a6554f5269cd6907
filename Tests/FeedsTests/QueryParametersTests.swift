import Primitives
import TestSupport
import Testing
@testable import Feeds

/// The shared value parsers every adapter reads its parameters with: each range-checked once,
/// each refusal a 400 that names the parameter.
@Suite(.offPool) struct QueryParametersTests {
    @Test(arguments: [("4.5", 4.5), ("-2.25", -2.25), ("3", 3), ("+0.5", 0.5), ("10.", 10), (".5", 0.5), (" 7 ", 7)])
    func decimalsAreRead(_ text: String, _ expected: Double) throws {
        #expect(try QueryParameters([("minmag", text)]).decimal("minmag", in: -10...10) == expected)
    }

    @Test(arguments: ["", "1e3", "0x10", "nan", "inf", "-inf", "1.2.3", "--1", "+-1", ".", "-", "10.5", "-10.01", String(repeating: "1", count: 25), "1,5"])
    func otherTextIsNoDecimal(_ text: String) {
        #expect(throws: ClientError.invalidParameter("minmag must be a decimal number between -10 and 10")) {
            try QueryParameters([("minmag", text)]).decimal("minmag", in: -10...10)
        }
    }

    @Test func anAbsentDecimalIsItsDefault() throws {
        #expect(try QueryParameters([]).decimal("minmag", in: 0...10, default: 2.5) == 2.5)
        #expect(try QueryParameters([]).decimal("minmag", in: 0...10) == nil)
        #expect(throws: ClientError.invalidParameter("r must be a decimal number between 0.5 and 2.25")) {
            try QueryParameters([("r", "3")]).decimal("r", in: 0.5...2.25)
        }
    }

    @Test(arguments: [
        ("1762179605", 1_762_179_605), ("2025-11-03T14:20:05Z", 1_762_179_605), ("2025-11-03T15:20:05+01:00", 1_762_179_605),
        // An unescaped `+` arrives as a space.
        ("2025-11-03T15:20:05 01:00", 1_762_179_605), ("2025-11-03T15:20 01:00", 1_762_179_600), ("2025-11-03", 1_762_128_000),
    ])
    func timesAreRead(_ text: String, _ expected: Int) throws {
        #expect(try QueryParameters([("since", text)]).time("since") == expected)
    }

    @Test(arguments: ["", "yesterday", "-5", "999999999999", "2025-11-03T14:20:05+19:00", "2025-02-29", "1e9"])
    func otherTextIsNoTime(_ text: String) {
        #expect(throws: ClientError.invalidParameter("since must be an ISO 8601 time (2025-11-03T14:20:05Z) or Unix seconds")) {
            try QueryParameters([("since", text)]).time("since")
        }
    }
}
