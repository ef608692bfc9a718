import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// `--sort-keys` as a rewrite of formatted text. The writer formats every token in the
/// document's own order, as without sorting; the sorter notes where each member of the open
/// objects starts and ends and what its key is. When an object ends, its text (which holds
/// its own objects' text, already rewritten) is rewritten with its members in key order,
/// stably (duplicate keys keep their order), unless they came in order; then its notes are
/// dropped. So memory holds the formatted text of the outermost open object (one record of
/// an array of records) and a few words per member of the objects still open.
///
/// Text let go unsorted (past the sort limit, or at a syntax error) is what formatting
/// without sorting writes, but for the objects in it that had ended, which are sorted.
struct KeySorter {
    /// An open object. Positions and indices are 32-bit: held text stays far below 2 GiB
    /// (the sort limit is at most 1 GiB, checked before every piece), and `overflowed`
    /// says if it did not.
    struct Frame {
        /// How many containers are open in the document while it is (the writer's depth): a
        /// comma at this depth separates this object's members.
        let depth: Int32
        /// Its members are `members[firstMember...]` (those of the objects inside it are
        /// dropped as each ends).
        let firstMember: Int32
    }

    /// A member of an open object: where its text (key, colon and value, without
    /// separators) lies, relative to `heldStart`, and its key's token in `keys`.
    struct Member {
        /// The key text's first eight bytes as a number that orders as they do (see
        /// `prefix(of:)`).
        var prefix: UInt64 = 0
        let start: Int32
        var end: Int32
        let key: Int32
        var keyLength: Int32 = 0
        /// Whether the key's text holds an escape (then its bytes alone do not order it).
        var escaped = false
    }

    /// The open objects, outermost first.
    let frames = Column<Frame>()
    let members = Column<Member>()
    /// The members' key tokens, back to back.
    let keys = ByteBuffer()
    /// The rewritten text, before it replaces the held text or goes out.
    let scratch = ByteBuffer()
    /// The order of the members of the object being rewritten.
    let order = Column<Int32>()
    /// Where the outermost open object's text starts in the writer's buffer; nil when no
    /// object is open.
    var heldStart: Int?
    /// The innermost open object's depth (`Frame.depth`): a comma at it separates members;
    /// -1 when no object is open.
    private(set) var objectDepth = -1
    /// The member whose key is arriving (a long key comes in pieces), or -1.
    private(set) var keyMember = -1
    /// The held text outgrew what 32-bit positions reach: it is let go as it is, and the
    /// formatter stops sorting (as past its limit).
    private(set) var overflowed = false
    /// Rewriting would have copied more than `rewriteBudget` allows (objects nested deep
    /// around a large value, each out of order, copy that value once per level): the rest
    /// is let go as it is, and the formatter stops sorting.
    private(set) var tooCostly = false
    /// The bytes rewritten since the outermost open object opened.
    private var rewritten = 0

    /// How many bytes rewriting may copy for an outermost object whose text has `held` bytes:
    /// sixteen times over, and 4 MiB more. An array of records copies each record once; a
    /// document nested five deep, each level out of order, five times.
    static func rewriteBudget(held: Int) -> Int {
        16 * held + (4 << 20)
    }

    /// An outermost object's text this large or larger is rewritten a piece at a time into
    /// `flush`, when there is one, instead of whole in memory.
    static let flushSize = 1 << 20

    /// Whether an object is open (then its text is held).
    var holding: Bool {
        @inline(__always) get { frames.count > 0 }
    }

    /// An outermost object opens at `depth` (counting itself); its text will start at
    /// `position`.
    mutating func openOutermost(at position: Int, depth: Int) {
        heldStart = position
        openObject(depth: depth)
    }

    /// An object opens at `depth` (counting itself).
    @inline(__always)
    mutating func openObject(depth: Int) {
        objectDepth = depth
        frames.append(Frame(depth: Int32(truncatingIfNeeded: depth), firstMember: Int32(truncatingIfNeeded: members.count)))
    }

    /// `position` relative to the held text's start, as stored.
    @inline(__always)
    private mutating func relative(_ position: Int) -> Int32 {
        let offset = position - (heldStart ?? 0)
        if offset > Int(Int32.max) || keys.count > Int(Int32.max) { overflowed = true }
        return Int32(truncatingIfNeeded: offset)
    }

    /// A key starts a member of the innermost object; its text starts at `position`.
    @inline(__always)
    mutating func beginMember(at position: Int) {
        let start = relative(position)
        keyMember = members.count
        members.append(Member(start: start, end: start, key: Int32(truncatingIfNeeded: keys.count)))
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
        let start = Int(members[index].key)
        let length = keys.count - start
        guard length >= 2, let base = keys.written.baseAddress else { return }
        let text = UnsafeRawBufferPointer(start: base + start + 1, count: length - 2)
        members[index].keyLength = Int32(truncatingIfNeeded: length)
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

    /// A comma of the innermost object (one at `objectDepth`) ends its last member (the last
    /// one noted: those of the objects inside it are gone), whose text ends at `position`.
    @inline(__always)
    mutating func comma(at position: Int) {
        guard members.count > 0 else { return }
        members[members.count - 1].end = relative(position)
    }

    /// The innermost object ends, its last member's text at `position` (the end of `out`):
    /// its text is rewritten with members in key order where that differs. An outermost
    /// object's large text goes to `flush` a piece at a time (with all of `out` before it,
    /// which is then emptied) instead of being rewritten whole in memory.
    mutating func closeObject(at position: Int, out: ByteBuffer, flush: ((UnsafeRawBufferPointer) -> Void)?) {
        guard let frame = frames.last else { return }
        let first = Int(frame.firstMember)
        if members.count > first {
            members[members.count - 1].end = relative(position)
            if members.count - first > 1, !overflowed, !tooCostly, !inOrder(from: first) {
                let size = Int(members[members.count - 1].end - members[first].start)
                if rewritten + size > Self.rewriteBudget(held: position - (heldStart ?? 0)) {
                    tooCostly = true
                } else {
                    rewritten += size
                    rewrite(from: first, out: out, flush: frames.count == 1 ? flush : nil)
                }
            }
            keys.truncate(to: Int(members[first].key))
            members.truncate(to: first)
        }
        frames.truncate(to: frames.count - 1)
        objectDepth = frames.last.map { Int($0.depth) } ?? -1
        if frames.count == 0 {
            heldStart = nil
            rewritten = 0
        }
    }

    /// Rewrites the text of the members `members[first...]` in key order.
    private func rewrite(from first: Int, out: ByteBuffer, flush: ((UnsafeRawBufferPointer) -> Void)?) {
        guard let held = heldStart, let base = out.written.baseAddress else { return }
        let text = base + held
        let start = Int(members[first].start), end = Int(members[members.count - 1].end)
        order.truncate(to: 0)
        for index in first..<members.count { order.append(Int32(truncatingIfNeeded: index)) }
        sortOrder()
        // Every separator of an object is the same text (a comma and a new line indented to
        // its depth): the one after its first member.
        let separator = UnsafeRawBufferPointer(start: text + Int(members[first].end), count: Int(members[first + 1].start - members[first].end))
        scratch.removeAll()
        let piecewise = flush != nil && end - start >= Self.flushSize
        if piecewise {
            flush?(UnsafeRawBufferPointer(start: base, count: held + start))
        } else {
            scratch.reserveCapacity(end - start)
        }
        for position in 0..<order.count {
            if position > 0 { scratch.append(contentsOf: separator) }
            let member = members[Int(order[position])]
            scratch.append(contentsOf: UnsafeRawBufferPointer(start: text + Int(member.start), count: Int(member.end - member.start)))
            if piecewise, scratch.count >= Self.flushSize {
                flush?(scratch.written)
                scratch.removeAll()
            }
        }
        if piecewise {
            flush?(scratch.written)
            scratch.removeAll()
            out.removeAll()
            return
        }
        // Reordering keeps every byte; were it ever not so, the text stays in its own order
        // rather than be cut or overrun.
        guard scratch.count == end - start else {
            assertionFailure("a rewritten object changed its length")
            return
        }
        out.overwrite(at: held + start, with: scratch.written)
    }

    /// Forgets the held text's notes (the text is let go as it is).
    mutating func reset() {
        frames.truncate(to: 0)
        members.truncate(to: 0)
        keys.removeAll()
        heldStart = nil
        objectDepth = -1
        keyMember = -1
        rewritten = 0
    }

    /// Whether the members from `first` on came in key order (each no earlier than the one
    /// before).
    private func inOrder(from first: Int) -> Bool {
        var index = first + 1
        while index < members.count {
            if precedes(index, index - 1) { return false }
            index += 1
        }
        return true
    }

    /// Sorts `order` by key, keeping the order of equal keys.
    private func sortOrder() {
        let count = order.count
        guard count > 1 else { return }
        if count <= 32 {
            // Insertion sort: stable, and no allocation for the common small object.
            for position in 1..<count {
                let index = order[position]
                var slot = position
                while slot > 0, precedes(Int(index), Int(order[slot - 1])) {
                    order[slot] = order[slot - 1]
                    slot -= 1
                }
                order[slot] = index
            }
        } else {
            let sorted = (0..<count).map { Int(order[$0]) }.enumerated().sorted { lhs, rhs in
                precedes(lhs.element, rhs.element) || (!precedes(rhs.element, lhs.element) && lhs.offset < rhs.offset)
            }
            for (offset, entry) in sorted.enumerated() { order[offset] = Int32(truncatingIfNeeded: entry.element) }
        }
    }

    /// A member's key text, between its quotes.
    @inline(__always)
    private func keyText(_ index: Int) -> UnsafeRawBufferPointer {
        let (key, length) = (Int(members[index].key), Int(members[index].keyLength))
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

    /// Whether a key's text holds a backslash, found eight bytes at a time with the scanner's
    /// search for string bytes that need attention (`JSONScanner.skipPlainStringBytes`; in a
    /// key's text only a backslash can, the scanner having refused raw quotes and controls).
    private static func holdsBackslash(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index < text.count {
            index = JSONScanner.skipPlainStringBytes(text, from: index)
            guard index < text.count else { return false }
            if text[index] == UInt8(ascii: "\\") { return true }
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
    /// Where a large rewritten object goes (`KeySorter.rewrite`), when anywhere.
    let flush: ((UnsafeRawBufferPointer) -> Void)?

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
            sorter.closeObject(at: writer.out.count, out: writer.out, flush: flush)
        default:
            break
        }
    }
}
