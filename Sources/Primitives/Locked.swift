import Glibc

/// A value behind a pthread mutex. Used instead of `Synchronization.Mutex`
/// because ThreadSanitizer on this toolchain cannot see Mutex's futex-based
/// happens-before edges and reports false races; pthread mutexes it understands.
/// A class, so closures can capture it.
///
/// The value lives behind a pointer, not in a stored `var`: the mutex already makes each
/// access exclusive, and a class's stored `var` handed out `inout` costs a run-time
/// exclusivity check per lock in every module that has them on (~120 instructions, more
/// than the lock itself).
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    public init(_ value: consuming Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Inlinable: callers in other modules get it specialised, not a generic call per lock.
    @inlinable public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
