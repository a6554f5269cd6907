/// Independent work over many items spread over the machine's cores: the caller's thread and
/// helper threads of their own take parts until none is left, then the caller waits only for
/// the parts already being worked on. The helpers are not a pool anything else needs (Swift's
/// cooperative threads, which carry every request's deadline, or the event loops): long work
/// there held up timers and answers. For long work that splits evenly (a big feed's show notes).
public enum ParallelWork {
    /// `transform` of every index below `count`, in at most `parts` parts run at once, the
    /// results in index order.
    public static func map<T: Sendable>(_ count: Int, parts: Int = NativeThread.processorCount, _ transform: @escaping @Sendable (Int) -> T) -> [T] {
        let n = max(1, min(parts, count))
        guard n > 1 else { return (0..<count).map(transform) }
        let run = PartRun(count: count, parts: n, transform: transform)
        for i in 1..<n where !NativeThread.start(name: "fp-part-\(i)", { run.work() }) { break }
        run.work()
        return run.results()
    }
}

/// One `ParallelWork.map`: its parts, taken one at a time by whichever thread comes.
private final class PartRun<T: Sendable>: Sendable {
    private let count: Int
    private let parts: Int
    private let transform: @Sendable (Int) -> T
    private let state: Locked<(next: Int, done: Int, results: [[T]])>
    private let finished = WakeSignal()

    init(count: Int, parts: Int, transform: @escaping @Sendable (Int) -> T) {
        self.count = count
        self.parts = parts
        self.transform = transform
        state = Locked((0, 0, Array(repeating: [], count: parts)))
    }

    /// Takes parts until none is left.
    func work() {
        while let part = take() {
            let results = ((count * part / parts)..<(count * (part + 1) / parts)).map(transform)
            let last = state.withLock { st -> Bool in
                st.results[part] = results
                st.done += 1
                return st.done == parts
            }
            if last { finished.signal() }
        }
    }

    private func take() -> Int? {
        state.withLock { st -> Int? in
            guard st.next < parts else { return nil }
            defer { st.next += 1 }
            return st.next
        }
    }

    /// Every part's results in order, once the parts being worked on elsewhere are done.
    func results() -> [T] {
        while !state.withLock({ $0.done == parts }) { _ = finished.wait(timeout: 1) }
        return state.withLock { $0.results.flatMap { $0 } }
    }
}
