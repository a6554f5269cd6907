import Primitives
import Synchronization

/// One request's fan-out of independent pieces of work (a podcast each) answered by a
/// deadline: every piece runs in its own task, not a child of the request, so one still
/// running when the answer goes finishes for the next request to find; the answer takes what
/// arrived by `answerBy` (monotonic seconds), or everything as soon as everything has.
enum DeadlineGather {
    /// What `work(i)` gave, for each `i` in `0..<count` that finished by `answerBy`.
    static func run<T: Sendable>(_ count: Int, answerBy: Double, _ work: @escaping @Sendable (Int) async -> T) async -> [Int: T] {
        let results = Locked([Int: T]())
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        for i in 0..<count {
            Task {
                let value = await work(i)
                results.withLock { $0[i] = value }
                arrived.yield()
            }
        }
        // The deadline counts from when the request arrived, not from here.
        let timer = Task {
            let left = answerBy - NativeThread.monotonicSeconds()
            if left > 0 { try? await Task.sleep(for: .milliseconds(Saturating.int((left * 1000).rounded(.up), in: 0...Int(Int32.max)))) }
            arrived.finish()
        }
        var arrivedCount = 0
        for await _ in arrivals {
            arrivedCount += 1
            if arrivedCount == count { break }
        }
        timer.cancel()
        return results.withLock { $0 }
    }
}
