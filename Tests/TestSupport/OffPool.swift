import Foundation
import Primitives
import Testing

/// Runs blocking test code (sockets read with timeouts, child processes waited for, sleeps)
/// on a thread of its own. Swift Testing runs tests in parallel on the cooperative pool,
/// which has one thread per core: on a 2-core machine two blocking tests would hold the
/// whole pool, and every awaiting test beside them (timers, deadlines, continuations) would
/// stall as long. The body stays in the test's task (a task-executor preference, not a bare
/// thread), so its expectations are still recorded against the test.
public func offPool<T: Sendable>(_ body: () throws -> T) async throws -> T {
    try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try body() }
}

/// `offPool` for a body that awaits and also blocks between its awaits (child processes
/// spawned and waited for, `redis-cli` polled inside `eventually`): every job of the body
/// runs on a thread of its own, so no blocking call holds one of the pool's threads. Child
/// tasks inherit the preference; unstructured `Task { }`s do not (they stay on the pool).
public func offPoolAsync<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await body() }
}

/// Every job runs at once on a thread of its own: an idle one when there is one, else a new
/// one (idle threads end after 10 s). A job that blocks holds only its own thread, and a test
/// that starts 500 child tasks reuses threads instead of starting 500.
final class ThreadPerJobExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = ThreadPerJobExecutor()

    /// Guarded by `lock`.
    private var jobs: [UnownedJob] = []
    private var idle = 0
    private let lock = NSLock()
    private let available = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        jobs.append(job)
        let woken = idle > 0
        if woken { idle -= 1 }
        lock.unlock()
        if woken {
            available.signal()
        } else if !NativeThread.start(name: "test-blocking", { [self] in work() }) {
            // No thread to be had: run the oldest job here rather than none.
            lock.lock()
            let oldest = jobs.isEmpty ? nil : jobs.removeFirst()
            lock.unlock()
            oldest?.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            lock.lock()
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                lock.unlock()
                job.runSynchronously(on: executor)
                continue
            }
            idle += 1
            lock.unlock()
            if available.wait(timeout: .now() + 10) == .timedOut {
                lock.lock()
                // Still counted idle: nobody is about to signal for this thread, so it ends.
                if idle > 0 {
                    idle -= 1
                    lock.unlock()
                    return
                }
                lock.unlock()
                available.wait()  // an enqueue counted on this thread: its signal is on the way
            }
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

/// `@Suite(.offPool)`: every test of the suite runs as `offPool` does. For suites of pure
/// computation (parsers, encoders, images, fuzz-like loops): in a debug build their tests hold
/// a thread for seconds, and on the cooperative pool two of them stopped every server, timer and
/// stream of the tests running beside them for 10 s (make test-under-load, issue 66).
public struct OffPoolTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }  // the suite itself: nothing to move
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OffPoolTrait {
    public static var offPool: Self { OffPoolTrait() }
}
