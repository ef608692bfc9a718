/// A growable column of plain values for the formatter: an append is a capacity check
/// and a store, without the uniqueness check an `Array` makes on every append.
final class Column<Element: BitwiseCopyable> {
    private(set) var count = 0
    private var capacity = 1024
    private var storage: UnsafeMutablePointer<Element>

    init() {
        storage = LargeAllocation.allocate(Element.self, capacity: capacity)
    }

    deinit { LargeAllocation.deallocate(storage, capacity: capacity) }

    @inline(__always)
    func append(_ value: Element) {
        if count == capacity { grow(to: capacity * 2) }
        (storage + count).initialize(to: value)
        count += 1
    }

    /// The value at `index` (below `count`), read and changed where it is stored (a field
    /// of a stored struct is changed alone, not the struct copied out and back).
    @inline(__always)
    subscript(index: Int) -> Element {
        unsafeAddress { UnsafePointer(storage + index) }
        unsafeMutableAddress { storage + index }
    }

    /// The last value, if there is one.
    var last: Element? {
        @inline(__always) get { count > 0 ? storage[count - 1] : nil }
    }

    /// Keeps the first `total` values (no more than there are).
    @inline(__always)
    func truncate(to total: Int) {
        count = min(count, total)
    }

    @inline(never)
    private func grow(to total: Int) {
        storage = LargeAllocation.resize(storage, count: count, capacity: capacity, to: total)
        capacity = total
    }
}
