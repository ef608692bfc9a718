#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a single lock.
///
/// Every stateful engine object keeps all of its mutable state in one struct behind one
/// `Protected`, rather than a lock per field: a reader always sees a consistent snapshot and
/// a writer changes several fields atomically. A copy of a `Protected` is the same box (it
/// holds the one `Locked`), so it costs no allocation of its own. The lock is a pthread
/// mutex, which ThreadSanitizer understands (Synchronization's `Mutex` waits on a futex it
/// cannot see, so every use was reported as a race).
package struct Protected<Value: Sendable>: Sendable {
    private let locked: Locked<Value>

    /// Creates a protected box holding `value`.
    package init(_ value: Value) {
        locked = Locked(value)
    }

    /// Runs `body` with read access to the value while holding the lock.
    package func read<T: Sendable, E: Error>(_ body: (Value) throws(E) -> T) throws(E) -> T {
        try locked.withLock { (value: inout Value) throws(E) -> T in try body(value) }
    }

    /// Runs `body` with write access to the value while holding the lock.
    @discardableResult
    package func write<T: Sendable, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try locked.withLock(body)
    }

    /// A copy of the current value.
    package var value: Value {
        read { $0 }
    }
}

/// A lock around state that is not `Sendable` itself (buffers, printers, file handles).
///
/// The lock is the only way in, which is what makes sharing it safe; the state must not be
/// let out of `withLock`.
package final class Locked<Value>: @unchecked Sendable {
    /// Reached only through `withLock`, inside the mutex, which already makes every access
    /// exclusive (a nested `withLock` on the same lock would deadlock before it overlapped):
    /// the runtime's dynamic exclusivity check on top cost a tenth of a microsecond a call,
    /// twenty calls a batch line.
    @exclusivity(unchecked) private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Protects `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
