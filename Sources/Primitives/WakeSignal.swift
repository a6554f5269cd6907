import Glibc

/// A wake-up flag behind a pthread condition variable: `signal()` from any thread,
/// `wait(timeout:)` on one consumer thread. A signal sent while nobody waits is kept,
/// so no wake-up is lost. Monotonic clock, so wall-clock steps do not stretch waits.
public final class WakeSignal: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var pending = false

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    public func signal() {
        pthread_mutex_lock(mutex)
        pending = true
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Returns when signalled (true) or after `timeout` seconds (false).
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanos = Int(deadline.tv_nsec) + Int(timeout * 1e9)
        deadline.tv_sec += nanos / 1_000_000_000
        deadline.tv_nsec = nanos % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !pending {
            if pthread_cond_timedwait(cond, mutex, &deadline) == ETIMEDOUT { break }
        }
        let woken = pending
        pending = false
        return woken
    }
}
