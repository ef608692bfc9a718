import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Receives a sorted document's tokens (`SortedKeys.Stream.emit`), each whole.
protocol SortedTokenSink {
    mutating func sorted(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool)
}

/// `--sort-keys`: object members reordered by key (stably, so duplicate keys keep their
/// order), everything else untouched. Works on token indices, so memory stays near the
/// size of what is kept; recursion follows nesting, which the scanner bounds at 512 levels.
enum SortedKeys {
    /// Emits a document as its tokens arrive (`CompactTokens`): each time the kept tokens
    /// reach a point where no object is open (`CompactTokens.ready`), what came before it
    /// goes out sorted and can be dropped. A document that is an array of objects (most
    /// large ones: a list of records) is thus sorted one element at a time, holding one
    /// element; an object is held whole until it ends.
    struct Stream {
        /// The open arrays outside every object, outermost first: how many values each has
        /// had so far (the next one after a first is preceded by a comma).
        private(set) var arrays: [Int] = []
        /// The emitter's scratch column for object members, made at the first use.
        private var members: Column<Emitter.Member>?

        /// Emits the first `count` tokens of `document`, which must end where no object is
        /// open (`CompactTokens.ready`), with every object's members sorted by key.
        mutating func emit<Sink: SortedTokenSink>(_ document: CompactTokens, upTo count: Int, into sink: inout Sink) {
            guard count > 0, let raw = document.bytes.written.baseAddress else { return }
            let members = self.members ?? Column<Emitter.Member>()
            self.members = members
            document.lengths.withUnsafeBufferPointer { lengths in
                var emitter = Emitter(lengths: lengths, longLengths: document.longLengths, raw: raw, byteCount: document.bytes.written.count, members: members)
                var position = Position(index: 0, offset: 0)
                while position.index < min(count, lengths.count) {
                    // Outside objects only arrays are open; their brackets go out one by one,
                    // since an array's end may not have arrived yet.
                    let byte = emitter.first(position)
                    if byte == UInt8(ascii: "]") {
                        sink.sorted(.endArray, emitter.bytes(position), isKey: false)
                        _ = arrays.popLast()
                        position = emitter.after(position)
                        continue
                    }
                    if let last = arrays.indices.last {
                        if arrays[last] > 0 { sink.sorted(.comma, CompactTokens.comma, isKey: false) }
                        arrays[last] += 1
                    }
                    if byte == UInt8(ascii: "[") {
                        sink.sorted(.beginArray, emitter.bytes(position), isKey: false)
                        arrays.append(0)
                        position = emitter.after(position)
                    } else {
                        position = emitter.value(at: position, &sink)
                    }
                }
            }
        }
    }

    /// A token's index and where its bytes start.
    private struct Position {
        var index: Int
        var offset: Int
    }

    /// Walks the tokens; `members` is one scratch column reused by every object (an object's
    /// members are sorted and emitted from a stretch at its end, then the stretch is dropped).
    private struct Emitter {
        /// The document's token lengths (`CompactTokens`), where its bytes start, and how many
        /// there are.
        let lengths: UnsafeBufferPointer<UInt8>
        let longLengths: [Int: Int]
        let raw: UnsafeRawPointer
        let byteCount: Int

        /// An object member: its key's token (found once, not once per comparison), what
        /// orders it (below), and where its value starts.
        struct Member {
            let keyBytes: UnsafeRawBufferPointer
            /// The first eight bytes of the key's text (between its quotes) as a number that
            /// orders as the bytes do.
            let prefix: UInt64
            let value: Position
            /// Whether the text holds an escape, so its bytes alone do not order it.
            let escaped: Bool

            /// `readable` is how many bytes of the document follow the key's opening quote.
            @inline(__always)
            init(key: UnsafeRawBufferPointer, value: Position, readable: Int) {
                keyBytes = key
                self.value = value
                let text = Self.text(key)
                if text.count <= 8, readable >= 8, let start = text.baseAddress {
                    // Most keys are short: one load of eight bytes (the document goes on
                    // past the key), the bytes past the key masked off.
                    let keep: UInt64 = text.count == 8 ? ~0 : (1 << (8 * UInt64(text.count))) &- 1
                    let word = UInt64(littleEndian: start.loadUnaligned(as: UInt64.self)) & keep
                    prefix = word.byteSwapped
                    // A byte equal to `\` becomes zero; the masked-off ones do not.
                    let probe = word ^ 0x5C5C_5C5C_5C5C_5C5C
                    escaped = (probe &- 0x0101_0101_0101_0101) & ~probe & 0x8080_8080_8080_8080 != 0
                } else {
                    prefix = Emitter.prefix(of: text)
                    escaped = Self.holdsBackslash(text)
                }
            }

            /// The key's text, between its quotes.
            var text: UnsafeRawBufferPointer { Self.text(keyBytes) }

            @inline(__always)
            private static func text(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
                guard key.count >= 2, let start = key.baseAddress else { return UnsafeRawBufferPointer(start: nil, count: 0) }
                return UnsafeRawBufferPointer(start: start + 1, count: key.count - 2)
            }

            /// Looks for a backslash eight bytes at a time.
            @inline(__always)
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
        }

        /// Scratch for object members, shared by every object (and every piece of a stream).
        let members: Column<Member>

        @inline(__always)
        func length(_ index: Int) -> Int {
            let short = lengths[index]
            return short == CompactTokens.longLength ? longLengths[index] ?? 0 : Int(short)
        }

        @inline(__always)
        func bytes(_ position: Position) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: raw + position.offset, count: length(position.index))
        }

        /// The first byte of the token at `position`, which tells its kind.
        @inline(__always)
        func first(_ position: Position) -> UInt8 {
            raw.load(fromByteOffset: position.offset, as: UInt8.self)
        }

        /// The position after the token at `position`.
        @inline(__always)
        func after(_ position: Position) -> Position {
            Position(index: position.index + 1, offset: position.offset + length(position.index))
        }

        /// Emits the value at `position`; returns the position after it.
        mutating func value<Sink: SortedTokenSink>(at position: Position, _ sink: inout Sink) -> Position {
            switch first(position) {
            case UInt8(ascii: "{"):
                let base = members.count
                var cursor = after(position)
                while cursor.index < lengths.count, first(cursor) != UInt8(ascii: "}") {
                    let value = after(cursor)
                    members.append(Member(key: bytes(cursor), value: value, readable: byteCount - cursor.offset - 1))
                    cursor = skip(from: value)
                }
                sortMembers(from: base)
                sink.sorted(.beginObject, bytes(position), isKey: false)
                var member = base
                while member < members.count {
                    if member > base { sink.sorted(.comma, CompactTokens.comma, isKey: false) }
                    let entry = members[member]
                    sink.sorted(.string, entry.keyBytes, isKey: true)
                    sink.sorted(.colon, CompactTokens.colon, isKey: false)
                    _ = value(at: entry.value, &sink)
                    member += 1
                }
                members.truncate(to: base)
                guard cursor.index < lengths.count else { return cursor }
                sink.sorted(.endObject, bytes(cursor), isKey: false)
                return after(cursor)
            case UInt8(ascii: "["):
                sink.sorted(.beginArray, bytes(position), isKey: false)
                var cursor = after(position)
                var first = true
                while cursor.index < lengths.count, self.first(cursor) != UInt8(ascii: "]") {
                    if !first { sink.sorted(.comma, CompactTokens.comma, isKey: false) }
                    cursor = value(at: cursor, &sink)
                    first = false
                }
                guard cursor.index < lengths.count else { return cursor }
                sink.sorted(.endArray, bytes(cursor), isKey: false)
                return after(cursor)
            case let byte:
                sink.sorted(CompactTokens.kind(startingWith: byte), bytes(position), isKey: false)
                return after(position)
            }
        }

        /// Sorts `members[base...]` by key bytes, keeping the order of equal keys.
        private mutating func sortMembers(from base: Int) {
            let count = members.count - base
            guard count > 1 else { return }
            if count <= 32 {
                // Insertion sort: stable, and no allocation for the common small object.
                for position in (base + 1)..<members.count {
                    let member = members[position]
                    var slot = position
                    while slot > base, Self.precedes(member, members[slot - 1]) {
                        members[slot] = members[slot - 1]
                        slot -= 1
                    }
                    members[slot] = member
                }
            } else {
                let sorted = (base..<members.count).map { members[$0] }.enumerated().sorted { lhs, rhs in
                    Self.precedes(lhs.element, rhs.element) || (!Self.precedes(rhs.element, lhs.element) && lhs.offset < rhs.offset)
                }
                for (offset, entry) in sorted.enumerated() { members[base + offset] = entry.element }
            }
        }

        /// Whether `a`'s key comes before `b`'s: by their texts' Unicode scalars, as jq and
        /// HTTPie order keys (so `"a"` comes before `"a!"`, and `"\u0041"` with the `A`s).
        /// UTF-8 orders as its scalars do, so texts without escapes compare as they are; the
        /// rare escaped ones are compared resolved (`JSONStringText.unescaped`, which keeps
        /// invalid bytes as they are, so they still get one consistent place).
        @inline(__always)
        private static func precedes(_ a: Member, _ b: Member) -> Bool {
            if a.escaped || b.escaped {
                return JSONStringText.unescaped(a.text).lexicographicallyPrecedes(JSONStringText.unescaped(b.text))
            }
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return compare(a.text, b.text) < 0
        }

        /// A text's first eight bytes, most significant first, zero-filled when it is
        /// shorter. When two prefixes differ they order the texts as their bytes do: at the
        /// first difference either both bytes are real, or the shorter text's zero fill
        /// meets a byte of the longer, which comes after it in byte order too. When they are
        /// equal, the bytes decide.
        @inline(__always)
        fileprivate static func prefix(of text: UnsafeRawBufferPointer) -> UInt64 {
            guard let start = text.baseAddress else { return 0 }
            if text.count >= 8 { return UInt64(bigEndian: start.loadUnaligned(as: UInt64.self)) }
            var value: UInt64 = 0
            for index in 0..<text.count { value = value << 8 | UInt64(start.load(fromByteOffset: index, as: UInt8.self)) }
            return text.isEmpty ? 0 : value << (8 * UInt64(8 - text.count))
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

        /// The position after the value at `position`, without emitting it.
        private func skip(from position: Position) -> Position {
            guard position.index < lengths.count else { return position }
            let opening = first(position)
            guard opening == UInt8(ascii: "{") || opening == UInt8(ascii: "[") else { return after(position) }
            var depth = 0
            var cursor = position
            while cursor.index < lengths.count {
                switch first(cursor) {
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
                cursor = after(cursor)
                if depth == 0 { return cursor }
            }
            return cursor
        }
    }
}
