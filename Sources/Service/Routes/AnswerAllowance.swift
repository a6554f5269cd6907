import Glibc
import Primitives

/// How much sooner than its deadline a library refresh stops waiting for its loads, so that
/// its answer, composed after the wait, still leaves by the deadline. A storm sends hundreds
/// of refreshes that all reach their deadline together: composing them (merging, encoding,
/// compressing a hundred podcasts each) on two cores took the last past the deadline by half a
/// second. The allowance is the longest recent time from a wait's end (its due time, when a
/// timer woke it late) to its answer composed, forgetting half of it every `halfLife` seconds,
/// at most `ceiling`: quiet, it is near 0 and the loads get the whole deadline.
final class AnswerAllowance: Sendable {
    static let halfLife = 10.0

    private struct State {
        var seconds = 0.0
        var at = 0.0
    }

    private let state = Locked(State())
    let ceiling: Double

    /// `ceiling`: the most of a deadline given up for composing (a quarter of it, say).
    init(ceiling: Double) { self.ceiling = max(0, ceiling) }

    /// The allowance at `now` (monotonic seconds).
    func seconds(at now: Double) -> Double { state.withLock { Self.decayed($0, at: now) } }

    /// An answer composed at `now` whose wait ended (or was due to end) at `waitEnded`.
    func composed(waitEnded: Double, at now: Double) {
        let took = now - waitEnded
        guard took.isFinite else { return }
        state.withLock { s in
            s.seconds = min(ceiling, max(Self.decayed(s, at: now), took))
            s.at = now
        }
    }

    private static func decayed(_ s: State, at now: Double) -> Double {
        let elapsed = now - s.at
        guard elapsed > 0 else { return s.seconds }
        return s.seconds * exp2(-elapsed / halfLife)
    }
}
