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
///
/// It is public only to importers of the `Locking` SPI (the command line, the tests), and its
/// methods are `@inlinable`, so that objects in other modules (the batch runner, its ordered
/// output) get them specialised for their state. As a `package` type its methods were
/// generic calls across the module boundary that copied every result through metadata
/// (Swift does not inline `package` declarations into other modules), about twenty a batch
/// line.
@_spi(Locking) public struct Protected<Value: Sendable>: Sendable {
    @usableFromInline let locked: Locked<Value>

    /// Creates a protected box holding `value`.
    @inlinable
    public init(_ value: Value) {
        locked = Locked(value)
    }

    /// Runs `body` with read access to the value while holding the lock.
    @inlinable
    public func read<T: Sendable, E: Error>(_ body: (Value) throws(E) -> T) throws(E) -> T {
        try locked.withLock { (value: inout Value) throws(E) -> T in try body(value) }
    }

    /// Runs `body` with write access to the value while holding the lock.
    @inlinable @discardableResult
    public func write<T: Sendable, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try locked.withLock(body)
    }

    /// A copy of the current value.
    @inlinable
    public var value: Value {
        read { $0 }
    }
}

/// A lock around state that is not `Sendable` itself (buffers, printers, file handles).
///
/// The lock is the only way in, which is what makes sharing it safe; the state must not be
/// let out of `withLock`.
@_spi(Locking) public final class Locked<Value>: @unchecked Sendable {
    /// Reached only through `withLock`, inside the mutex, which already makes every access
    /// exclusive (a nested `withLock` on the same lock would deadlock before it overlapped):
    /// the runtime's dynamic exclusivity check on top cost a tenth of a microsecond a call,
    /// twenty calls a batch line.
    @exclusivity(unchecked) @usableFromInline var value: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Protects `value`.
    @inlinable
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
