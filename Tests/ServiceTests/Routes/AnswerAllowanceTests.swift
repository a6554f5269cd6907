import Glibc
import Testing
@testable import Service

/// Issue 66: a storm's refreshes reach their deadline together, and composing them took the
/// last past it; the wait now leaves the recent composing time for the answer.
@Suite struct AnswerAllowanceTests {
    @Test func quietItIsNothingAndTheLoadsGetTheWholeDeadline() {
        #expect(AnswerAllowance(ceiling: 0.75).seconds(at: 100) == 0)
    }

    @Test func itIsTheLongestRecentComposeHalvedEveryHalfLife() {
        let a = AnswerAllowance(ceiling: 0.75)
        a.composed(waitEnded: 100, at: 100.4)
        #expect(abs(a.seconds(at: 100.4) - 0.4) < 1e-9)
        // A quicker answer does not lower it; the longest recent one holds, fading.
        a.composed(waitEnded: 100.5, at: 100.5)
        #expect(abs(a.seconds(at: 100.5) - 0.4 * exp2(-0.1 / AnswerAllowance.halfLife)) < 1e-9)
        #expect(abs(a.seconds(at: 100.5 + AnswerAllowance.halfLife) - 0.2 * exp2(-0.1 / AnswerAllowance.halfLife)) < 1e-9)
        #expect(a.seconds(at: 100.5 + 20 * AnswerAllowance.halfLife) < 1e-6)
    }

    /// Counted from when the wait was due to end: a timer that woke late under load is part
    /// of what the answer has to leave time for.
    @Test func aLateWakeUpCountsAndTheCeilingHolds() {
        let a = AnswerAllowance(ceiling: 0.75)
        a.composed(waitEnded: 10, at: 10.6)
        #expect(abs(a.seconds(at: 10.6) - 0.6) < 1e-9)
        a.composed(waitEnded: 11, at: 14)
        #expect(a.seconds(at: 14) == 0.75)
        a.composed(waitEnded: 20, at: .nan)
        #expect(a.seconds(at: 14) == 0.75)
    }
}
