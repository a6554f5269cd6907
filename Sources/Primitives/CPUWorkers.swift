/// Threads for CPU work long enough to matter (a feed parsed and encoded, a large body
/// compressed), used as a task executor: `await CPUWorkers.shared.run { … }`.
///
/// Swift's cooperative pool has one thread per core. A parse that holds one of them for a
/// second holds half the pool on two cores, and every await beside it (a stream's first event,
/// a caller's deadline, a Redis reply) waits in the pool's queue as long: under load that was
/// seconds (issue 66). These threads are the kernel's to schedule beside the pool's, so the
/// pool keeps its turns while they work; at most `threads` such jobs run at once.
public final class CPUWorkers: TaskExecutor, Sendable {
    public static let shared = CPUWorkers(threads: NativeThread.processorCount, name: "fp-cpu")

    private struct Queue {
        var jobs: [UnownedJob] = []
        var head = 0
    }
    private let queue = Locked(Queue())
    private let wake = WakeSignal()
    public let threads: Int

    public init(threads: Int, name: String) {
        self.threads = max(1, min(threads, 64))
        for i in 0..<self.threads {
            _ = NativeThread.start(name: "\(name)-\(i)") { [self] in work() }
        }
    }

    /// Runs `body` on one of these threads and resumes the caller with its result.
    public func run<T: Sendable, Failure: Error>(_ body: () throws(Failure) -> T) async throws(Failure) -> T {
        try await withTaskExecutorPreference(self) { () async throws(Failure) -> T in try body() }
    }

    /// Work over `bytes` of input: here when it is small (the hop, and a queue behind long
    /// work, cost more than the work: a storm of small feeds waited behind each other), on these
    /// threads from `longWorkBytes` (a big feed, a large body).
    public func run<T: Sendable, Failure: Error>(over bytes: Int, _ body: () throws(Failure) -> T) async throws(Failure) -> T {
        if bytes < Self.longWorkBytes { return try body() }
        return try await run(body)
    }

    /// Input from which work leaves the cooperative pool: about a millisecond of parsing.
    public static let longWorkBytes = 256 << 10

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        wake.signal()
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            let job = queue.withLock { q -> UnownedJob? in
                guard q.head < q.jobs.count else { return nil }
                let job = q.jobs[q.head]
                q.head += 1
                if q.head == q.jobs.count {
                    q.jobs.removeAll(keepingCapacity: q.jobs.count <= 1024)
                    q.head = 0
                }
                return job
            }
            guard let job else {
                wake.wait(timeout: 5)
                continue
            }
            // Another thread may be needed for the rest of the queue.
            if queue.withLock({ $0.head < $0.jobs.count }) { wake.signal() }
            job.runSynchronously(on: executor)
        }
    }
}
