import Primitives

/// Threads that decode images, off the event loops and the cooperative pool: at most
/// `threads` decodes at once (the cores), at most `maxQueued` waiting; more is `busy`.
public final class DecodePool: Sendable {
    private struct Job {
        let work: @Sendable () -> Void
    }
    private struct State {
        var queue: [Job] = []
        var head = 0
        var running = 0
        var waiting: Int { queue.count - head }
    }
    private let state = Locked(State())
    private let wakers: [WakeSignal]
    public let threads: Int
    public let maxQueued: Int

    public init(threads: Int, maxQueued: Int) {
        self.threads = max(1, min(threads, 64))
        self.maxQueued = max(0, maxQueued)
        wakers = (0..<self.threads).map { _ in WakeSignal() }
        for (i, waker) in wakers.enumerated() {
            _ = NativeThread.start(name: "fp-image-\(i)") { [state] in
                while true {
                    let job: Job? = state.withLock { s in
                        guard s.head < s.queue.count else { return nil }
                        let job = s.queue[s.head]
                        s.head += 1
                        if s.head > 64, s.head * 2 > s.queue.count {
                            s.queue.removeFirst(s.head)
                            s.head = 0
                        }
                        s.running += 1
                        return job
                    }
                    guard let job else {
                        waker.wait(timeout: 5)
                        continue
                    }
                    job.work()
                    state.withLock { $0.running -= 1 }
                }
            }
        }
    }

    /// Decodes waiting or running now (a gauge).
    public var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting) } }

    /// Queues `work` for a pool thread; false (and not queued) when the queue is full.
    public func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        let admitted = state.withLock { s -> Bool in
            guard s.waiting + s.running < threads + maxQueued else { return false }
            s.queue.append(Job(work: work))
            return true
        }
        if admitted { for waker in wakers { waker.signal() } }
        return admitted
    }
}
