import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// `--sort-keys` as a rewrite of formatted text. The writer formats every token in the
/// document's own order, as without sorting; the sorter notes where each object member's
/// text starts and ends and what its key is. When the outermost open object ends, its text
/// is rewritten with every object's members in key order (stably, so duplicate keys keep
/// their order). Until then that text is held at the end of the writer's buffer, from
/// `heldStart`: memory holds one outermost object's formatted text (one record of an array
/// of records) and a few words per member. An object whose keys came in order and that
/// holds none that did not is not rewritten at all.
///
/// Nothing is rewritten before an outermost object ends, so text that is let go unsorted
/// (past the sort limit, or at a syntax error) is exactly what formatting without sorting
/// writes.
struct KeySorter {
    /// An object of the held text.
    struct Frame {
        /// How many containers are open in the document while it is (the writer's depth): a
        /// comma at this depth separates this object's members.
        let depth: Int
        let parent: Int
        /// Its first and last members (indices into `members`, linked by `Member.next`).
        var first = -1
        var last = -1
        /// The index after its last descendant in `frames` (frames are in opening order).
        var subtreeEnd = 0
        /// Its own keys came out of order.
        var unsorted = false
        /// It or an object inside it must be rewritten.
        var needsWork = false
        var childNeedsWork = false
    }

    /// A member of an object: where its text (key, colon and value, without separators)
    /// lies, relative to `heldStart`; its key's token in `keys`; the objects opened inside
    /// its value (`children..<childrenEnd` in `frames`).
    struct Member {
        let start: Int
        var end: Int
        let key: Int
        var keyLength = 0
        /// The key text's first eight bytes as a number that orders as they do (see
        /// `prefix(of:)`), and whether the text holds an escape (then its bytes alone do not
        /// order it).
        var prefix: UInt64 = 0
        var escaped = false
        var next = -1
        let children: Int
        var childrenEnd: Int
    }

    let frames = Column<Frame>()
    let members = Column<Member>()
    /// The held members' key tokens, back to back.
    let keys = ByteBuffer()
    /// The rewritten text, before it replaces the held text.
    let scratch = ByteBuffer()
    /// Member orders while objects are rewritten (one stretch per level of nesting).
    let order = Column<Int>()
    /// Where the outermost open object's text starts in the writer's buffer; nil when no
    /// object is open.
    var heldStart: Int?
    /// The innermost open object (an index into `frames`), or -1.
    private(set) var current = -1
    /// The innermost open object's depth (`Frame.depth`): a comma at it separates members;
    /// -1 when no object is open.
    private(set) var objectDepth = -1
    /// The member whose key is arriving (a long key comes in pieces), or -1.
    private(set) var keyMember = -1

    /// Whether an object is open (then its text is held).
    var holding: Bool {
        @inline(__always) get { current >= 0 }
    }

    /// An outermost object opens at `depth` (counting itself); its text will start at
    /// `position`.
    mutating func openOutermost(at position: Int, depth: Int) {
        heldStart = position
        objectDepth = depth
        frames.append(Frame(depth: depth, parent: -1))
        current = 0
    }

    /// An object opens inside the held one, at `depth` (counting itself).
    @inline(__always)
    mutating func openObject(depth: Int) {
        objectDepth = depth
        frames.append(Frame(depth: depth, parent: current))
        current = frames.count - 1
    }

    /// A key starts a member of the innermost object; its text starts at `position`.
    @inline(__always)
    mutating func beginMember(at position: Int) {
        let relative = position - (heldStart ?? 0)
        let index = members.count
        members.append(Member(start: relative, end: relative, key: keys.count, children: frames.count, childrenEnd: frames.count))
        let last = frames[current].last
        if last >= 0 {
            members[last].next = index
        } else {
            frames[current].first = index
        }
        frames[current].last = index
        keyMember = index
    }

    /// Keeps a piece of the arriving key.
    @inline(__always)
    func keyPiece(_ bytes: UnsafeRawBufferPointer) {
        keys.append(contentsOf: bytes)
    }

    /// The arriving key is complete.
    @inline(__always)
    mutating func endKey() {
        let index = keyMember
        keyMember = -1
        let start = members[index].key
        let length = keys.count - start
        guard length >= 2, let base = keys.written.baseAddress else { return }
        let text = UnsafeRawBufferPointer(start: base + start + 1, count: length - 2)
        members[index].keyLength = length
        if text.count <= 8, let textStart = text.baseAddress {
            // Most keys are short: one load of eight bytes (the buffer keeps `ByteBuffer.padding`
            // bytes of room past what it holds), the bytes past the key masked off.
            let keep: UInt64 = text.count == 8 ? ~0 : (1 << (8 * UInt64(text.count))) &- 1
            let word = UInt64(littleEndian: textStart.loadUnaligned(as: UInt64.self)) & keep
            members[index].prefix = word.byteSwapped
            // A byte equal to `\` becomes zero; the masked-off ones do not.
            let probe = word ^ 0x5C5C_5C5C_5C5C_5C5C
            members[index].escaped = (probe &- 0x0101_0101_0101_0101) & ~probe & 0x8080_8080_8080_8080 != 0
        } else {
            members[index].prefix = Self.prefix(of: text)
            members[index].escaped = Self.holdsBackslash(text)
        }
    }

    /// A comma of the innermost object (one at `objectDepth`) ends its last member, whose
    /// text ends at `position`.
    @inline(__always)
    mutating func comma(at position: Int) {
        endLastMember(of: current, at: position)
    }

    /// The innermost object ends; its last member's text ends at `position`.
    mutating func closeObject(at position: Int) {
        let index = current
        endLastMember(of: index, at: position)
        let unsorted = !inOrder(frames[index])
        let needsWork = unsorted || frames[index].childNeedsWork
        frames[index].subtreeEnd = frames.count
        frames[index].unsorted = unsorted
        frames[index].needsWork = needsWork
        let parent = frames[index].parent
        current = parent
        guard parent >= 0 else {
            objectDepth = -1
            return
        }
        if needsWork { frames[parent].childNeedsWork = true }
        objectDepth = frames[parent].depth
    }

    @inline(__always)
    private func endLastMember(of frame: Int, at position: Int) {
        let last = frames[frame].last
        guard last >= 0 else { return }
        members[last].end = position - (heldStart ?? 0)
        members[last].childrenEnd = frames.count
    }

    /// After the outermost object ended (its text the last in `out`): rewrites its text
    /// with members in key order where that differs, and forgets it.
    mutating func rewrite(_ out: ByteBuffer) {
        defer { reset() }
        guard let held = heldStart, frames.count > 0, frames[0].needsWork, let base = out.written.baseAddress else { return }
        let root = frames[0]
        let start = members[root.first].start, end = members[root.last].end
        scratch.removeAll()
        scratch.reserveCapacity(end - start)
        emit(0, text: base + held)
        // Reordering keeps every byte; were it ever not so, the text stays in its own order
        // rather than be cut or overrun.
        guard scratch.count == end - start else {
            assertionFailure("a rewritten object changed its length")
            return
        }
        out.overwrite(at: held + start, with: scratch.written)
    }

    /// Forgets the held text (written sorted, or let go as it is).
    mutating func reset() {
        frames.truncate(to: 0)
        members.truncate(to: 0)
        keys.removeAll()
        heldStart = nil
        current = -1
        objectDepth = -1
        keyMember = -1
    }

    /// Appends the text of object `index` (its first member's start to its last member's
    /// end) with its members in order, each rewritten as needed. `text` is where the held
    /// text starts.
    private func emit(_ index: Int, text: UnsafeRawPointer) {
        let frame = frames[index]
        let base = order.count
        var member = frame.first
        while member >= 0 {
            order.append(member)
            member = members[member].next
        }
        if frame.unsorted { sortOrder(from: base) }
        // Every separator of an object is the same text (a comma and a new line indented
        // to its depth): the one after its first member.
        let first = members[frame.first]
        let separator = first.next >= 0 ? UnsafeRawBufferPointer(start: text + first.end, count: members[first.next].start - first.end) : UnsafeRawBufferPointer(start: nil, count: 0)
        for position in base..<order.count {
            if position > base { scratch.append(contentsOf: separator) }
            copyMember(order[position], text: text)
        }
        order.truncate(to: base)
    }

    /// Appends a member's text, rewriting the objects inside its value that need it.
    private func copyMember(_ index: Int, text: UnsafeRawPointer) {
        let member = members[index]
        var position = member.start
        var child = member.children
        while child < member.childrenEnd {
            let frame = frames[child]
            if frame.needsWork {
                let start = members[frame.first].start
                scratch.append(contentsOf: UnsafeRawBufferPointer(start: text + position, count: start - position))
                emit(child, text: text)
                position = members[frame.last].end
            }
            child = frame.subtreeEnd
        }
        scratch.append(contentsOf: UnsafeRawBufferPointer(start: text + position, count: member.end - position))
    }

    /// Whether an object's keys came in order (each no earlier than the one before).
    private func inOrder(_ frame: Frame) -> Bool {
        guard frame.first >= 0 else { return true }
        var previous = frame.first
        var index = members[previous].next
        while index >= 0 {
            if precedes(index, previous) { return false }
            previous = index
            index = members[index].next
        }
        return true
    }

    /// Sorts `order[base...]` by key, keeping the order of equal keys.
    private func sortOrder(from base: Int) {
        let count = order.count - base
        guard count > 1 else { return }
        if count <= 32 {
            // Insertion sort: stable, and no allocation for the common small object.
            for position in (base + 1)..<order.count {
                let index = order[position]
                var slot = position
                while slot > base, precedes(index, order[slot - 1]) {
                    order[slot] = order[slot - 1]
                    slot -= 1
                }
                order[slot] = index
            }
        } else {
            let sorted = (base..<order.count).map { order[$0] }.enumerated().sorted { lhs, rhs in
                precedes(lhs.element, rhs.element) || (!precedes(rhs.element, lhs.element) && lhs.offset < rhs.offset)
            }
            for (offset, entry) in sorted.enumerated() { order[base + offset] = entry.element }
        }
    }

    /// A member's key text, between its quotes.
    @inline(__always)
    private func keyText(_ index: Int) -> UnsafeRawBufferPointer {
        let (key, length) = (members[index].key, members[index].keyLength)
        guard length >= 2, let base = keys.written.baseAddress else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base + key + 1, count: length - 2)
    }

    /// Whether member `a`'s key comes before member `b`'s: by their texts' Unicode scalars,
    /// as jq and HTTPie order keys (so `"a"` comes before `"a!"`, and `"\u0041"` with the
    /// `A`s). UTF-8 orders as its scalars do, so texts without escapes compare as they are,
    /// most by their first eight bytes alone; the rare escaped ones are compared resolved
    /// (`JSONStringText.unescaped`, which keeps invalid bytes as they are, so they still get
    /// one consistent place).
    @inline(__always)
    private func precedes(_ a: Int, _ b: Int) -> Bool {
        let (left, right) = (members[a].prefix, members[b].prefix)
        if left != right, !members[a].escaped, !members[b].escaped { return left < right }
        return precedesByText(a, b)
    }

    @inline(never)
    private func precedesByText(_ a: Int, _ b: Int) -> Bool {
        if members[a].escaped || members[b].escaped {
            return JSONStringText.unescaped(keyText(a)).lexicographicallyPrecedes(JSONStringText.unescaped(keyText(b)))
        }
        return Self.compare(keyText(a), keyText(b)) < 0
    }

    /// A text's first eight bytes, most significant first, zero-filled when it is shorter.
    /// When two prefixes differ they order the texts as their bytes do: at the first
    /// difference either both bytes are real, or the shorter text's zero fill meets a byte
    /// of the longer, which comes after it in byte order too. When they are equal, the
    /// bytes decide.
    private static func prefix(of text: UnsafeRawBufferPointer) -> UInt64 {
        guard let start = text.baseAddress else { return 0 }
        if text.count >= 8 { return UInt64(bigEndian: start.loadUnaligned(as: UInt64.self)) }
        var value: UInt64 = 0
        for index in 0..<text.count { value = value << 8 | UInt64(start.load(fromByteOffset: index, as: UInt8.self)) }
        return text.isEmpty ? 0 : value << (8 * UInt64(8 - text.count))
    }

    /// Looks for a backslash eight bytes at a time.
    private static func holdsBackslash(_ text: UnsafeRawBufferPointer) -> Bool {
        guard let start = text.baseAddress else { return false }
        var index = 0
        while index + 8 <= text.count {
            let word = start.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ 0x5C5C_5C5C_5C5C_5C5C
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { return true }
            index += 8
        }
        while index < text.count {
            if start.load(fromByteOffset: index, as: UInt8.self) == UInt8(ascii: "\\") { return true }
            index += 1
        }
        return false
    }

    /// Byte order of two texts (as `memcmp`, the shorter first when one is a prefix).
    private static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let order = Int(memcmp(left, right, common))
            if order != 0 { return order }
        }
        return a.count - b.count
    }
}

/// How `SortingWriter` hands a token to the writer.
protocol SortingLayout {
    static func write(_ writer: inout JSONFormatter.Writer, _ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool)
}

/// Re-indenting only.
enum PlainLayout: SortingLayout {
    @inline(__always)
    static func write(_ writer: inout JSONFormatter.Writer, _ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
        writer.token(kind, bytes, isKey: isKey, complete: complete)
    }
}

/// Colours or decoded escapes, compiled into the scanning loop as `JSONFormatter.Writer.Painted` is.
enum PaintedLayout: SortingLayout {
    @inline(__always)
    static func write(_ writer: inout JSONFormatter.Writer, _ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
        writer.paintedToken(kind, bytes, isKey: isKey, complete: complete)
    }
}

/// The writer with a key sorter taking notes: the scanner's sink for `--sort-keys`.
struct SortingWriter<Layout: SortingLayout>: JSONTokenSink {
    var writer: JSONFormatter.Writer
    var sorter: KeySorter

    /// Every token goes to the writer through one copy of its layout, compiled into the
    /// scanning loop; the sorter's notes on braces, objects' commas and keys are taken
    /// first, in a call, so that the loop stays nearly as small as without sorting.
    @inline(__always)
    mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
        // A comma is noted only when it is the innermost object's (not an array's).
        if isKey || kind == .beginObject || kind == .endObject || (kind == .comma && writer.depth == sorter.objectDepth) {
            note(kind, bytes, complete: complete)
        }
        Layout.write(&writer, kind, bytes, isKey: isKey, complete: complete)
    }

    /// Notes a brace, an object's comma or (a piece of) a key, before the writer writes it. What
    /// comes before a member or an object (a held-back bracket, a new line) is written
    /// first, so that its text starts where the writer then stands; the writer then has
    /// nothing more to write before it.
    @inline(never)
    private mutating func note(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, complete: Bool) {
        switch kind {
        case .string:
            if sorter.keyMember < 0 {
                writer.startValue()
                sorter.beginMember(at: writer.out.count)
            }
            sorter.keyPiece(bytes)
            if complete { sorter.endKey() }
        case .comma:
            sorter.comma(at: writer.out.count)
        case .beginObject:
            if sorter.holding {
                sorter.openObject(depth: writer.depth + 1)
            } else {
                writer.startValue()
                sorter.openOutermost(at: writer.out.count, depth: writer.depth + 1)
            }
        case .endObject:
            // The text rewritten ends with the last member: the writer's new line and
            // bracket after it are the same whatever the order.
            guard sorter.holding else { break }
            sorter.closeObject(at: writer.out.count)
            if !sorter.holding { sorter.rewrite(writer.out) }
        default:
            break
        }
    }
}
