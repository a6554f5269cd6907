import Glibc

/// A fixed set of pthread mutexes shared by many small objects, each object guarded by the one
/// its identity picks: a value held by thousands of long-lived objects (an open stream's
/// position) is guarded without a mutex (40 bytes) and a heap block of its own each. Two
/// objects on one stripe wait for each other; a critical section must not take a stripe again.
public final class LockStripes: @unchecked Sendable {
    private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
    private let count: Int

    public init(count: Int = 64) {
        self.count = max(1, count)
        mutexes = .allocate(capacity: self.count)
        for i in 0..<self.count {
            (mutexes + i).initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutexes + i, nil)
        }
    }

    deinit {
        for i in 0..<count { pthread_mutex_destroy(mutexes + i) }
        mutexes.deinitialize(count: count)
        mutexes.deallocate()
    }

    /// Runs `body` holding `object`'s stripe.
    @inlinable public func withLock<R>(for object: AnyObject, _ body: () throws -> R) rethrows -> R {
        let mutex = stripe(ObjectIdentifier(object))
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    @usableFromInline func stripe(_ id: ObjectIdentifier) -> UnsafeMutablePointer<pthread_mutex_t> {
        // Objects are 16-byte aligned: the low bits say nothing.
        mutexes + Int((UInt(bitPattern: id) >> 4) % UInt(count))
    }
}
