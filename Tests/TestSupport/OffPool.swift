import Foundation
import Primitives

/// Runs blocking test code (sockets read with timeouts, child processes waited for, sleeps)
/// on a thread of its own. Swift Testing runs tests in parallel on the cooperative pool,
/// which has one thread per core: on a 2-core machine two blocking tests would hold the
/// whole pool, and every awaiting test beside them (timers, deadlines, continuations) would
/// stall as long. The body stays in the test's task (a task-executor preference, not a bare
/// thread), so its expectations are still recorded against the test.
public func offPool<T: Sendable>(_ body: () throws -> T) async throws -> T {
    try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try body() }
}

/// Each job on a fresh thread: only tests use it, and only for bodies that block.
final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        if !NativeThread.start(name: "test-blocking", { job.runSynchronously(on: executor) }) {
            job.runSynchronously(on: executor)
        }
    }
}

/// Polls `condition` every 10 ms for up to `timeout` seconds without holding a pool thread.
public func eventually(_ timeout: Double = 10, _ condition: () -> Bool) async -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// `eventually` for blocking test bodies (inside `offPool`): polls `condition` until it holds
/// or `timeout` seconds pass; true when it held. For what the process does in its own time
/// (a log line flushed, a signal handled), never a bound on how long that may take.
public func waitUntil(_ timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
