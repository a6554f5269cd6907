import Glibc

/// A value behind a pthread mutex. Used instead of `Synchronization.Mutex`
/// because ThreadSanitizer on this toolchain cannot see Mutex's futex-based
/// happens-before edges and reports false races; pthread mutexes it understands.
/// Copies share one value and one mutex, so closures can capture it.
///
/// Mutex and value live in one allocation (`LockedStorage`): a stream holds two of these for
/// hours, and an object, a mutex and a value allocated apart cost three heap chunks each.
/// The value is reached through a pointer, not a stored `var`: the mutex already makes each
/// access exclusive, and a class's stored `var` handed out `inout` costs a run-time
/// exclusivity check per lock in every module that has them on (~120 instructions, more
/// than the lock itself).
public struct Locked<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline let storage: LockedStorage<Value>
    /// Both point into `storage`, which the struct keeps alive (a `ManagedBuffer`'s header and
    /// elements do not move).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    public init(_ value: consuming Value) {
        let storage = LockedStorage<Value>.make()
        (mutex, self.value) = storage.withUnsafeMutablePointers { ($0, $1) }
        self.value.initialize(to: value)
        pthread_mutex_init(mutex, nil)
        self.storage = storage
    }

    /// Inlinable: callers in other modules get it specialised, not a generic call per lock.
    @inlinable public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

/// A `Locked` value's one allocation: the mutex as the header, the value as its one element.
public final class LockedStorage<Value: ~Copyable>: ManagedBuffer<pthread_mutex_t, Value> {
    static func make() -> LockedStorage<Value> {
        // `create` makes an instance of the class it is called on: this one (whose deinit
        // tears down what `Locked.init` set up).
        let buffer = create(minimumCapacity: 1) { _ in pthread_mutex_t() }
        return unsafeDowncast(buffer, to: LockedStorage<Value>.self)
    }

    deinit {
        withUnsafeMutablePointers { mutex, value in
            pthread_mutex_destroy(mutex)
            _ = value.deinitialize(count: 1)
        }
    }
}
