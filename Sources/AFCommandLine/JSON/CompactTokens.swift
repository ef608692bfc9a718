import AFEngine

/// The tokens of a document kept compactly for `--sort-keys`: the bytes of every value
/// token in one buffer and, per token, a byte for its length. Nothing else is kept: commas
/// and colons are implied by the structure, a token's kind by its first byte, and whether a
/// string is a key by where it stands in its object; a token starts where the one before it
/// ends, so offsets are summed as the tokens are walked. About the document's size plus a
/// byte a token; a token of 255 bytes or more keeps its length in a table of its own.
struct CompactTokens: JSONTokenSink {
    /// Every kept token's bytes, back to back.
    let bytes = ByteBuffer()
    /// Each token's length, or `longLength` when it is in `longLengths`.
    let lengths = Column<UInt8>()
    /// The lengths of the tokens of 255 bytes or more, by token index.
    private(set) var longLengths: [Int: Int] = [:]
    /// The length so far of a string still arriving in pieces.
    private var pendingLength = 0
    private var pending = false
    /// A comma or colon that came after the last kept token (only `replay` needs it: the
    /// scanner has consumed it, so it will not come again).
    private var trailing: JSONTokenKind?
    /// How many objects the kept tokens leave open (arrays do not count).
    private var objectsOpen = 0
    /// How many of the kept tokens, and of their bytes, end at the last point where no
    /// object was open: those can be emitted sorted now (`SortedKeys.Stream`), whatever
    /// follows.
    private(set) var ready = 0
    private var readyBytes = 0

    static let longLength: UInt8 = 255
    /// The most of a size hint that is reserved: a hint is the server's word, not a
    /// promise, so a lying Content-Length reserves (untouched, address space only) about
    /// 40 MiB at most; a larger document grows the buffers as it arrives.
    static let reservationLimit = 32 << 20

    /// Reserves room for a document of `expectedSize` bytes: its bytes, and a kept token per
    /// four bytes (dense JSON; the column grows past that when needed). Reserved pages cost
    /// nothing until written, and nothing is copied as the buffers fill.
    init(expectedSize: Int? = nil) {
        guard let expectedSize, expectedSize > 0 else { return }
        let size = min(expectedSize, Self.reservationLimit)
        bytes.reserveCapacity(size)
        lengths.reserveCapacity(size / 4 + 1)
    }

    /// The number of tokens kept.
    var count: Int { lengths.count }

    @inline(__always)
    mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
        if kind.rawValue > JSONTokenKind.literal.rawValue {
            if kind != .whitespace { trailing = kind }
            return
        }
        trailing = nil
        self.bytes.append(contentsOf: bytes)
        if pending {
            pendingLength += bytes.count
            setLastLength(pendingLength)
        } else {
            if bytes.count < Int(Self.longLength) {
                lengths.append(UInt8(truncatingIfNeeded: bytes.count))
            } else {
                lengths.append(Self.longLength)
                longLengths[lengths.count - 1] = bytes.count
            }
            pendingLength = bytes.count
        }
        pending = !complete
        if kind == .beginObject {
            objectsOpen += 1
        } else if kind == .endObject {
            objectsOpen -= 1
        }
        if objectsOpen == 0, complete {
            ready = lengths.count
            readyBytes = self.bytes.count
        }
    }

    /// Forgets the tokens up to `ready` (they were emitted), moving the rest to the front.
    mutating func dropReady() {
        guard ready > 0 else { return }
        bytes.removeFirst(readyBytes)
        lengths.removeFirst(ready)
        if !longLengths.isEmpty {
            var kept: [Int: Int] = [:]
            for (index, length) in longLengths where index >= ready { kept[index - ready] = length }
            longLengths = kept
        }
        ready = 0
        readyBytes = 0
    }

    /// The last token grew (a string arriving in pieces).
    private mutating func setLastLength(_ length: Int) {
        if length < Int(Self.longLength) {
            lengths.replaceLast(with: UInt8(truncatingIfNeeded: length))
        } else {
            lengths.replaceLast(with: Self.longLength)
            longLengths[lengths.count - 1] = length
        }
    }

    /// Hands the kept tokens to `sink` in their own order, as the scanner gave them: with
    /// the commas and colons the structure implies, keys marked, a string still arriving
    /// given as unfinished, and a separator that came after the last token. `arrays` are
    /// the arrays already open where the kept tokens start, with how many values each has
    /// had (`SortedKeys.Stream.arrays`, when tokens before these were emitted).
    func replay<Sink: JSONTokenSink>(into sink: inout Sink, inside arrays: [Int] = []) {
        // Per open container: whether it is an object, and how many keys and values it holds.
        var open: [(object: Bool, count: Int)] = arrays.map { (object: false, count: $0) }
        guard let raw = bytes.written.baseAddress else {
            if let trailing { sink.token(trailing, trailing == .colon ? Self.colon : Self.comma, isKey: false, complete: true) }
            return
        }
        var offset = 0
        lengths.withUnsafeBufferPointer { lengths in
            for index in 0..<lengths.count {
                let short = lengths[index]
                let length = short == Self.longLength ? longLengths[index] ?? 0 : Int(short)
                let token = UnsafeRawBufferPointer(start: raw + offset, count: length)
                offset += length
                let kind = Self.kind(startingWith: raw.load(fromByteOffset: offset - length, as: UInt8.self))
                let last = index == lengths.count - 1
                if kind == .endObject || kind == .endArray {
                    _ = open.popLast()
                    sink.token(kind, token, isKey: false, complete: true)
                    continue
                }
                var isKey = false
                if let container = open.last {
                    if container.object, container.count % 2 == 1 {
                        sink.token(.colon, Self.colon, isKey: false, complete: true)
                    } else if container.count > 0 {
                        sink.token(.comma, Self.comma, isKey: false, complete: true)
                    }
                    isKey = container.object && container.count % 2 == 0
                    open[open.count - 1].count += 1
                }
                sink.token(kind, token, isKey: isKey, complete: !(last && pending))
                if kind == .beginObject || kind == .beginArray { open.append((kind == .beginObject, 0)) }
            }
        }
        if let trailing {
            sink.token(trailing, trailing == .colon ? Self.colon : Self.comma, isKey: false, complete: true)
        }
    }

    /// The separators a kept document does not hold, as bytes that need no reference
    /// counting (for `replay` and `SortedKeys`).
    static var comma: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: StaticString(",").utf8Start, count: 1) }
    static var colon: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: StaticString(":").utf8Start, count: 1) }

    /// A kept token's kind, from its first byte (the scanner has checked every token).
    @inline(__always)
    static func kind(startingWith byte: UInt8) -> JSONTokenKind {
        switch byte {
        case UInt8(ascii: "{"): .beginObject
        case UInt8(ascii: "}"): .endObject
        case UInt8(ascii: "["): .beginArray
        case UInt8(ascii: "]"): .endArray
        case UInt8(ascii: "\""): .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"): .literal
        default: .number
        }
    }
}

/// A growable column of plain values for `CompactTokens`: an append is a capacity check
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

    /// Replaces the last value (there must be one).
    @inline(__always)
    func replaceLast(with value: Element) {
        precondition(count > 0, "no value to replace")
        storage[count - 1] = value
    }

    /// The value at `index` (below `count`).
    @inline(__always)
    subscript(index: Int) -> Element {
        get { storage[index] }
        set { storage[index] = newValue }
    }

    /// Keeps the first `total` values (no more than there are).
    @inline(__always)
    func truncate(to total: Int) {
        count = min(count, total)
    }

    /// Removes the first `total` values (no more than there are), moving the rest down.
    func removeFirst(_ total: Int) {
        count = LargeAllocation.removeFirst(total, of: count, at: storage)
    }

    /// Makes room for `total` values in all.
    func reserveCapacity(_ total: Int) {
        if total > capacity { grow(to: total) }
    }

    @inline(never)
    private func grow(to total: Int) {
        storage = LargeAllocation.resize(storage, count: count, capacity: capacity, to: total)
        capacity = total
    }

    /// The values, for the duration of `body`.
    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) -> R) -> R {
        body(UnsafeBufferPointer(start: storage, count: count))
    }
}
