#if canImport(Glibc)
import Glibc
#endif

/// Memory for the formatter's growable buffers. Buffers of 4 MiB and more (the text of an
/// object `--sort-keys` holds, and its notes) come straight from the kernel and ask for transparent
/// huge pages, where the system offers them on request: filling tens of megabytes then
/// costs one page fault per 2 MiB instead of one per 4 KiB, and the faults, not the
/// copying, were most of the time those buffers took. Smaller ones come from `malloc`.
enum LargeAllocation {
    static let threshold = 4 << 20

    /// `count` elements of `T`, uninitialised.
    static func allocate<T>(_ type: T.Type, capacity count: Int) -> UnsafeMutablePointer<T> {
        guard let allocated = tryAllocate(type, capacity: count) else {
            fatalError("out of memory: cannot map \(count * MemoryLayout<T>.stride) bytes")
        }
        return allocated
    }

    /// `count` elements of `T`, uninitialised; nil when the kernel refuses a mapping that
    /// large (a reservation ahead of need may ask more than a strict overcommit allows).
    static func tryAllocate<T>(_ type: T.Type, capacity count: Int) -> UnsafeMutablePointer<T>? {
        let bytes = count * MemoryLayout<T>.stride
        guard bytes >= threshold else { return .allocate(capacity: count) }
        guard let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED else {
            return nil
        }
        // Advice only: without huge pages on offer the mapping works as it is.
        _ = madvise(mapped, bytes, MADV_HUGEPAGE)
        return mapped.bindMemory(to: T.self, capacity: count)
    }

    /// Moves the first `count` elements of `pointer` (allocated for `capacity`) to a new
    /// allocation for `newCapacity`, frees the old one and returns the new one.
    static func resize<T>(_ pointer: UnsafeMutablePointer<T>, count: Int, capacity: Int, to newCapacity: Int) -> UnsafeMutablePointer<T> {
        let bigger = allocate(T.self, capacity: newCapacity)
        bigger.moveInitialize(from: pointer, count: count)
        deallocate(pointer, capacity: capacity)
        return bigger
    }

    /// Drops the first `total` of the `count` plain values at `pointer` (no more than there
    /// are), moving the rest to the front; returns how many are left.
    static func removeFirst<T: BitwiseCopyable>(_ total: Int, of count: Int, at pointer: UnsafeMutablePointer<T>) -> Int {
        let removed = min(max(total, 0), count)
        if removed > 0, removed < count { memmove(pointer, pointer + removed, (count - removed) * MemoryLayout<T>.stride) }
        return count - removed
    }

    /// Frees what `allocate` returned for the same `capacity`.
    static func deallocate<T>(_ pointer: UnsafeMutablePointer<T>, capacity count: Int) {
        let bytes = count * MemoryLayout<T>.stride
        guard bytes >= threshold else { return pointer.deallocate() }
        munmap(UnsafeMutableRawPointer(pointer), bytes)
    }
}
