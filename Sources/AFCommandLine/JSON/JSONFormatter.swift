import AFEngine

/// Re-indents (and optionally colours) JSON token by token, without converting a single
/// value: numbers, escapes, key order and duplicate keys come out exactly as they went in.
///
/// It streams: memory holds the scanner's carry buffer, one byte per open container and the
/// output not yet flushed. With `sortKeys`, objects must be seen whole, so the document is
/// collected first.
struct JSONFormatter {
    struct Style: Sendable {
        var indent = 4
        var theme: Theme?
        var sortKeys = false
        /// Accept several top-level values (NDJSON), each on its own lines.
        var multipleValues = false
        /// Keep the original layout and only add colours.
        var colorsOnly = false
        /// Show `\uXXXX` escapes as the characters they name (on a terminal), except
        /// quotes, backslashes, control and invisible format characters and lone surrogates.
        var decodesEscapes = false
    }

    let style: Style
    private var scanner = JSONScanner()
    private var writer: Writer

    init(style: Style) {
        self.style = style
        scanner.allowsMultipleValues = style.multipleValues
        scanner.reportsWhitespace = style.colorsOnly
        writer = Writer(style: style)
    }

    /// Bytes consumed so far.
    var consumed: Int { scanner.consumed }

    /// After a syntax error: the input from the failing token on, to show as it came.
    var unformattedTail: [UInt8] { scanner.unformattedTail }

    /// Formats the next bytes, appending output to `out`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) throws(JSONSyntaxError) {
        defer { writer.out.drain(into: &out) }
        try scanner.feed(bytes, into: &writer)
    }

    mutating func feed(_ bytes: [UInt8], into out: inout [UInt8]) throws(JSONSyntaxError) {
        try bytes.withBytes { (raw: UnsafeRawBufferPointer) throws(JSONSyntaxError) in try feed(raw, into: &out) }
    }

    /// Ends the input and writes what is left, with a final newline.
    mutating func finish(into out: inout [UInt8]) throws(JSONSyntaxError) {
        defer { writer.out.drain(into: &out) }
        try scanner.finish(into: &writer)
        writer.finish()
    }

    /// Writes tokens with indentation and colours.
    struct Writer: JSONTokenSink {
        let style: Style
        /// Output not yet handed to the caller: appends here are a bounds check and a copy.
        let out = ByteBuffer()
        private var depth = 0
        /// An opening bracket not yet written, so `{}` and `[]` stay on one line.
        private var pendingOpen: UInt8?
        private var valuesWritten = 0
        private var inString = false
        private var collector: CompactTokens?
        private let colors: Colors?

        /// Colour sequences as bytes, ready to append.
        private struct Colors {
            var key: [UInt8], string: [UInt8], number: [UInt8], boolean: [UInt8], null: [UInt8], punctuation: [UInt8]
            let reset = Array(Theme.reset.utf8)

            init(_ theme: Theme) {
                key = Array(theme.key.utf8)
                string = Array(theme.string.utf8)
                number = Array(theme.number.utf8)
                boolean = Array(theme.boolean.utf8)
                null = Array(theme.null.utf8)
                punctuation = Array(theme.punctuation.utf8)
            }
        }

        init(style: Style) {
            self.style = style
            colors = style.theme.map(Colors.init)
            if style.sortKeys, !style.colorsOnly { collector = CompactTokens() }
        }

        @inline(__always)
        mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
            if collector != nil {
                collector?.token(kind, bytes, isKey: isKey, complete: complete)
                return
            }
            if style.colorsOnly {
                return inPlace(kind, bytes, isKey: isKey, complete: complete)
            }
            switch kind {
            case .whitespace:
                break
            case .beginObject, .beginArray:
                startValue()
                pendingOpen = bytes[0]
                depth += 1
            case .endObject, .endArray:
                depth -= 1
                if let open = pendingOpen {
                    pendingOpen = nil
                    paintOpen(colors?.punctuation)
                    out.append(open)
                    out.append(bytes[0])
                    paintClose(colors?.punctuation)
                } else {
                    newline()
                    paint(bytes, colors?.punctuation)
                }
                if depth == 0 { valueCompleted() }
            case .comma:
                paint(bytes, colors?.punctuation)
                newline()
            case .colon:
                paint(bytes, colors?.punctuation)
                out.append(32)
            case .string:
                if !inString {
                    startValue()
                    paintOpen(isKey ? colors?.key : colors?.string)
                }
                if style.decodesEscapes { out.appendDecodingEscapes(bytes) } else { out.append(contentsOf: bytes) }
                inString = !complete
                if complete {
                    paintClose(isKey ? colors?.key : colors?.string)
                    if depth == 0 { valueCompleted() }
                }
            case .number:
                startValue()
                paint(bytes, colors?.number)
                if depth == 0 { valueCompleted() }
            case .literal:
                startValue()
                paint(bytes, bytes.first == UInt8(ascii: "n") ? colors?.null : colors?.boolean)
                if depth == 0 { valueCompleted() }
            }
        }

        /// Colours a token in place, keeping the original layout.
        private mutating func inPlace(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
            switch kind {
            case .whitespace: out.append(contentsOf: bytes)
            case .string:
                if !inString { paintOpen(isKey ? colors?.key : colors?.string) }
                if style.decodesEscapes { out.appendDecodingEscapes(bytes) } else { out.append(contentsOf: bytes) }
                inString = !complete
                if complete { paintClose(isKey ? colors?.key : colors?.string) }
            case .number: paint(bytes, colors?.number)
            case .literal: paint(bytes, bytes.first == UInt8(ascii: "n") ? colors?.null : colors?.boolean)
            default: paint(bytes, colors?.punctuation)
            }
        }

        mutating func finish() {
            if let collected = collector {
                collector = nil
                SortedKeys.emit(collected) { kind, bytes, isKey in token(kind, bytes, isKey: isKey, complete: true) }
            }
            if valuesWritten > 0, !style.colorsOnly, !style.multipleValues { out.append(10) }
        }

        /// A top-level value ended: with several values (NDJSON) its line ends at once, so a
        /// stream shows each value as soon as it is complete.
        private mutating func valueCompleted() {
            valuesWritten += 1
            if style.multipleValues { out.append(10) }
        }

        /// Writes a pending opening bracket, and separates top-level values.
        @inline(__always)
        private mutating func startValue() {
            if let open = pendingOpen {
                pendingOpen = nil
                paintOpen(colors?.punctuation)
                out.append(open)
                paintClose(colors?.punctuation)
                newline()
            } else if depth == 0, valuesWritten > 0, !style.multipleValues {
                out.append(10)
            }
        }

        @inline(__always)
        private mutating func newline() {
            out.append(10)
            out.appendSpaces(depth * style.indent)
        }

        @inline(__always)
        private mutating func paint(_ bytes: UnsafeRawBufferPointer, _ color: [UInt8]?) {
            paintOpen(color)
            out.append(contentsOf: bytes)
            paintClose(color)
        }

        @inline(__always)
        private mutating func paintOpen(_ color: [UInt8]?) {
            if let color, !color.isEmpty { out.append(contentsOf: color) }
        }

        @inline(__always)
        private mutating func paintClose(_ color: [UInt8]?) {
            if let color, !color.isEmpty, let reset = colors?.reset { out.append(contentsOf: reset) }
        }
    }
}

/// A growable byte buffer for formatter output: appending is a capacity check and a copy,
/// with none of `Array`'s uniqueness checks or reference counting per token.
final class ByteBuffer {
    private(set) var count = 0
    private var capacity = 64 * 1024
    private var storage: UnsafeMutablePointer<UInt8>

    init() {
        storage = .allocate(capacity: capacity)
    }

    deinit {
        storage.deallocate()
    }

    @inline(__always)
    private func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    @inline(never)
    private func grow(_ extra: Int) {
        var grown = capacity * 2
        while grown < count + extra { grown *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        bigger.update(from: storage, count: count)
        storage.deallocate()
        storage = bigger
        capacity = grown
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    func append(contentsOf bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if bytes.count == 1 { return append(bytes[0]) }
        reserve(bytes.count)
        UnsafeMutableRawPointer(storage + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBytes { append(contentsOf: $0) }
    }

    func appendSpaces(_ spaces: Int) {
        guard spaces > 0 else { return }
        reserve(spaces)
        (storage + count).initialize(repeating: 32, count: spaces)
        count += spaces
    }

    /// `UnicodeEscapes.decodeForDisplay` into this buffer.
    func appendDecodingEscapes(_ token: UnsafeRawBufferPointer) {
        var decoded: [UInt8] = []
        UnicodeEscapes.decodeForDisplay(token, into: &decoded)
        append(contentsOf: decoded)
    }

    /// Moves the bytes to the end of `array` and empties the buffer.
    func drain(into array: inout [UInt8]) {
        guard count > 0 else { return }
        array.append(contentsOf: UnsafeBufferPointer(start: storage, count: count))
        count = 0
    }
}

/// The tokens of a document kept compactly for `--sort-keys`: the bytes of every value
/// token in one array, and per token its kind and range (commas and colons are implied by
/// the structure, so they are not kept). About the document's size plus 24 bytes a token.
struct CompactTokens: JSONTokenSink {
    struct Entry {
        var kind: JSONTokenKind
        var isKey: Bool
        var start: Int
        var end: Int
    }

    var bytes: [UInt8] = []
    var entries: [Entry] = []
    private var pendingStart: Int?

    mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
        if kind == .comma || kind == .colon || kind == .whitespace { return }
        let start = pendingStart ?? self.bytes.count
        self.bytes.append(contentsOf: bytes)
        guard complete else {
            pendingStart = start
            return
        }
        pendingStart = nil
        entries.append(Entry(kind: kind, isKey: isKey, start: start, end: self.bytes.count))
    }
}

/// `--sort-keys`: object members reordered by key (stably, so duplicate keys keep their
/// order), everything else untouched. Works on token indices, so memory stays near the
/// document's size; recursion follows nesting, which the scanner bounds at 512 levels.
enum SortedKeys {
    typealias Emit = (JSONTokenKind, UnsafeRawBufferPointer, Bool) -> Void

    /// Emits the document's tokens with every object's members sorted by key.
    static func emit(_ document: CompactTokens, _ body: Emit) {
        document.bytes.withUnsafeBytes { raw in
            var index = 0
            while index < document.entries.count {
                index = emitValue(at: index, document.entries, raw, body)
            }
        }
    }

    private static let comma: [UInt8] = [UInt8(ascii: ",")]
    private static let colon: [UInt8] = [UInt8(ascii: ":")]

    /// Emits the value starting at `index`; returns the index after it.
    private static func emitValue(at index: Int, _ entries: [CompactTokens.Entry], _ raw: UnsafeRawBufferPointer, _ body: Emit) -> Int {
        let entry = entries[index]
        func bytes(_ entry: CompactTokens.Entry) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: raw[entry.start..<entry.end])
        }
        switch entry.kind {
        case .beginObject:
            var members: [(key: Int, value: Int)] = []
            var cursor = index + 1
            while cursor < entries.count, entries[cursor].kind != .endObject {
                let value = cursor + 1
                members.append((cursor, value))
                cursor = skip(from: value, entries)
            }
            members = members.enumerated().sorted { lhs, rhs in
                let a = bytes(entries[lhs.element.key]), b = bytes(entries[rhs.element.key])
                return a.elementsEqual(b) ? lhs.offset < rhs.offset : a.lexicographicallyPrecedes(b)
            }.map(\.element)
            body(.beginObject, bytes(entry), false)
            for (position, member) in members.enumerated() {
                if position > 0 { comma.withUnsafeBytes { body(.comma, $0, false) } }
                body(.string, bytes(entries[member.key]), true)
                colon.withUnsafeBytes { body(.colon, $0, false) }
                _ = emitValue(at: member.value, entries, raw, body)
            }
            if cursor < entries.count { body(.endObject, bytes(entries[cursor]), false) }
            return cursor + 1
        case .beginArray:
            body(.beginArray, bytes(entry), false)
            var cursor = index + 1
            var position = 0
            while cursor < entries.count, entries[cursor].kind != .endArray {
                if position > 0 { comma.withUnsafeBytes { body(.comma, $0, false) } }
                cursor = emitValue(at: cursor, entries, raw, body)
                position += 1
            }
            if cursor < entries.count { body(.endArray, bytes(entries[cursor]), false) }
            return cursor + 1
        default:
            body(entry.kind, bytes(entry), false)
            return index + 1
        }
    }

    /// The index after the value starting at `index`, without emitting it.
    private static func skip(from index: Int, _ entries: [CompactTokens.Entry]) -> Int {
        guard index < entries.count else { return index }
        switch entries[index].kind {
        case .beginObject, .beginArray:
            var depth = 0
            var cursor = index
            while cursor < entries.count {
                switch entries[cursor].kind {
                case .beginObject, .beginArray: depth += 1
                case .endObject, .endArray: depth -= 1
                default: break
                }
                cursor += 1
                if depth == 0 { return cursor }
            }
            return cursor
        default:
            return index + 1
        }
    }
}

/// `\uXXXX` escapes in JSON string tokens, decoded for reading on a terminal.
enum UnicodeEscapes {
    /// Appends `token` to `out` with each `\uXXXX` (and surrogate pair) that names a
    /// printable character replaced by that character in UTF-8. Quotes, backslashes, control
    /// characters (C0, DEL, C1), invisible format characters (bidi overrides, zero widths)
    /// and lone surrogates stay escaped, so the shown text cannot end the string early,
    /// steer the terminal or hide what it says.
    static func decodeForDisplay(_ token: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        let count = token.count
        var index = 0
        var copiedUpTo = 0
        while index < count {
            guard token[index] == UInt8(ascii: "\\"), index + 1 < count else {
                index += 1
                continue
            }
            guard token[index + 1] == UInt8(ascii: "u"), let unit = hexUnit(token, at: index + 2) else {
                index += 2
                continue
            }
            var scalarValue = UInt32(unit)
            var length = 6
            if (0xD800...0xDBFF).contains(unit) {
                guard index + 12 <= count, token[index + 6] == UInt8(ascii: "\\"), token[index + 7] == UInt8(ascii: "u"),
                      let low = hexUnit(token, at: index + 8), (0xDC00...0xDFFF).contains(low)
                else {
                    index += 6
                    continue
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                length = 12
            }
            guard let scalar = Unicode.Scalar(scalarValue), shows(scalar) else {
                index += length
                continue
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: token[copiedUpTo..<index]))
            out.append(contentsOf: String(Character(scalar)).utf8)
            index += length
            copiedUpTo = index
        }
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: token[copiedUpTo..<count]))
    }

    private static func shows(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || value == 0x22 || value == 0x5C || (0x7F...0x9F).contains(value) { return false }
        return scalar.properties.generalCategory != .format && scalar.properties.generalCategory != .surrogate
    }

    private static func hexUnit(_ token: UnsafeRawBufferPointer, at start: Int) -> UInt16? {
        guard start + 4 <= token.count else { return nil }
        var value: UInt16 = 0
        for position in start..<(start + 4) {
            let byte = token[position]
            let digit: UInt16
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt16(byte - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt16(byte - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt16(byte - 55)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}
