import Dispatch

/// Independent work over many items spread over the machine's cores, the caller's thread among
/// them: libdispatch's `concurrentPerform`, which never waits for a free thread (the caller can
/// run every part itself), so it cannot deadlock when every worker is busy. For long work that
/// splits evenly and is already off the event loops (a big feed's show notes).
public enum ParallelWork {
    /// `transform` of every index below `count`, in at most `parts` parts run at once, the
    /// results in index order.
    public static func map<T: Sendable>(_ count: Int, parts: Int = NativeThread.processorCount, _ transform: @Sendable (Int) -> T) -> [T] {
        let n = max(1, min(parts, count))
        guard n > 1 else { return (0..<count).map(transform) }
        let done = Locked([[T]](repeating: [], count: n))
        DispatchQueue.concurrentPerform(iterations: n) { part in
            let results = ((count * part / n)..<(count * (part + 1) / n)).map(transform)
            done.withLock { $0[part] = results }
        }
        return done.withLock { $0.flatMap { $0 } }
    }
}
