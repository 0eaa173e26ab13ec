// The lock every shared mutable object uses is `Mutex` from Synchronization. On Linux its lock
// and unlock are futex(2) calls and atomics inside the standard library, which is not built with
// ThreadSanitizer: TSan sees no happens-before edge from one critical section to the next, and
// reports a race inside `withLock` bodies at every handover of a lock between threads. Built with
// `-DTHUMBD_TSAN` (README, "Benchmarks, fuzzing, sanitizers"), this module declares a `Mutex` of
// the same shape on pthread_mutex(3), which TSan intercepts, and each module that locks has a
// `Mutex+ThreadSanitizer.swift` with `typealias Mutex = Locking.Mutex` (a module's own
// declaration shadows an imported one), so that every `Mutex` there is this one. Without the flag
// nothing is declared, and every `Mutex` is Synchronization's.
import Synchronization

#if THUMBD_TSAN
#if canImport(Glibc)
import Glibc
#endif

/// Synchronization's `Mutex` API (`init`, `withLock`) on a pthread mutex, for ThreadSanitizer
/// builds only: TSan understands pthread_mutex_lock/unlock, so reports left are real races.
/// Locking: the value is read and written only between `pthread_mutex_lock` and `_unlock`.
public struct Mutex<Value>: ~Copyable, @unchecked Sendable {
    private final class Storage {
        let lock: UnsafeMutablePointer<pthread_mutex_t>
        var value: Value

        init(_ value: Value) {
            self.value = value
            lock = .allocate(capacity: 1)
            pthread_mutex_init(lock, nil)
        }

        deinit {
            pthread_mutex_destroy(lock)
            lock.deallocate()
        }
    }

    private let storage: Storage

    /// A lock guarding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        storage = Storage(initialValue)
    }

    /// Runs `body` with the value while holding the lock; rethrows what `body` throws.
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(storage.lock)
        defer { pthread_mutex_unlock(storage.lock) }
        return try body(&storage.value)
    }
}
#endif
