import Synchronization

/// A value guarded by a single lock.
///
/// Every stateful engine object keeps all of its mutable state in one struct behind one
/// `Protected`, rather than a lock per field: a reader always sees a consistent snapshot and
/// a writer changes several fields atomically.
public final class Protected<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    /// Creates a protected box holding `value`.
    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with read access to the value while holding the lock.
    public func read<T: Sendable>(_ body: (Value) throws -> T) rethrows -> T {
        try mutex.withLock { value in try body(value) }
    }

    /// Runs `body` with write access to the value while holding the lock.
    @discardableResult
    public func write<T: Sendable>(_ body: (inout Value) throws -> T) rethrows -> T {
        try mutex.withLock { value in try body(&value) }
    }

    /// A copy of the current value.
    public var value: Value {
        read { $0 }
    }
}
