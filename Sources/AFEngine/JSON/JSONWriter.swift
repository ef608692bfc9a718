/// The one place JSON text is written: values, containers and already-valid fragments,
/// with separators and indentation handled here rather than by each caller.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.object { json in
///     json.member("status") { $0.number(200) }
///     json.member("url") { $0.string("http://example.test/") }
/// }
/// writer.text // {"status": 200, "url": "http://example.test/"}
/// ```
package struct JSONWriter {
    /// How members and items are laid out.
    package enum Layout: Sendable {
        /// One line: `{"a": 1, "b": [true]}`.
        case inline
        /// One member or item per line, indented by this many spaces per level.
        case indented(Int)
    }

    /// The bytes written so far (UTF-8).
    package private(set) var bytes: [UInt8] = []
    private let layout: Layout
    /// Each open container (the last is the innermost): values written so far, and whether
    /// it is laid out on one line.
    private var containers: [(count: Int, inline: Bool)] = []
    /// Set between a member's key and its value, so the value takes no separator.
    private var afterKey = false
    /// Above zero inside `onOneLine`: the layout is `.inline` whatever was asked for.
    private var oneLineDepth = 0

    /// The indentation width for containers opened now, nil when they go on one line.
    private var indentWidth: Int? {
        guard oneLineDepth == 0, case .indented(let width) = layout else { return nil }
        return width
    }

    package init(layout: Layout = .inline, capacity: Int = 256) {
        self.layout = layout
        bytes.reserveCapacity(capacity)
    }

    /// The text written so far.
    package var text: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Containers

    /// An object whose members `body` writes with `member` or `key`.
    package mutating func object(_ body: (inout JSONWriter) -> Void) {
        container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), body)
    }

    /// An array whose items `body` writes.
    package mutating func array(_ body: (inout JSONWriter) -> Void) {
        container(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), body)
    }

    /// An array with one item per element of `items`.
    package mutating func array<S: Sequence>(_ items: S, _ item: (inout JSONWriter, S.Element) -> Void) {
        array { writer in
            for element in items { item(&writer, element) }
        }
    }

    /// Whatever `body` writes stays on one line, in an indented document too.
    package mutating func onOneLine(_ body: (inout JSONWriter) -> Void) {
        oneLineDepth += 1
        body(&self)
        oneLineDepth -= 1
    }

    /// A member's key; the next value written is its value.
    package mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(UInt8(ascii: " "))
        afterKey = true
    }

    /// A member whose value `value` writes.
    package mutating func member(_ name: String, _ value: (inout JSONWriter) -> Void) {
        key(name)
        value(&self)
    }

    // MARK: Values

    /// A string, or `null` when nil.
    package mutating func string(_ value: String?) {
        separate()
        if let value { appendQuoted(value) } else { appendASCII("null") }
    }

    /// An integer, or `null` when nil (most numbers a report writes: without the generic
    /// path's metadata lookups).
    package mutating func number(_ value: Int?) {
        separate()
        if let value { Format.appendInteger(value, to: &bytes) } else { appendASCII("null") }
    }

    /// An integer, or `null` when nil: as an `Int` where it fits one, else through its
    /// (generic, slower) description.
    package mutating func number<T: BinaryInteger>(_ value: T?) {
        guard let value else { return number(Int?.none) }
        if let small = Int(exactly: value) { return number(small) }
        separate()
        appendASCII(String(value))
    }

    /// A decimal with `places` digits after the point, or `null` when nil or not finite (JSON
    /// has no infinity).
    package mutating func number(_ value: Double?, places: Int) {
        separate()
        if let value, value.isFinite { Format.appendDecimal(value, places: places, to: &bytes) } else { appendASCII("null") }
    }

    /// `true` or `false`.
    package mutating func bool(_ value: Bool) {
        separate()
        appendASCII(value ? "true" : "false")
    }

    /// `null`.
    package mutating func null() {
        separate()
        appendASCII("null")
    }

    /// Text that is already one valid JSON value (the caller guarantees it), written as is.
    package mutating func fragment<C: Collection>(_ json: C) where C.Element == UInt8 {
        separate()
        bytes.append(contentsOf: json)
    }

    /// A parsed value, numbers exactly as they were written.
    package mutating func value(_ value: JSONValue) {
        switch value {
        case .object(let members):
            object { writer in
                for (name, member) in members {
                    writer.key(name)
                    writer.value(member)
                }
            }
        case .array(let items): array(items) { $0.value($1) }
        case .string(let text): string(text)
        case .number(let text): fragment(text.utf8)
        case .bool(let flag): bool(flag)
        case .null: null()
        }
    }

    // MARK: Strings

    /// A JSON string literal for `value`.
    package static func quoted(_ value: String) -> String {
        var writer = JSONWriter(capacity: value.utf8.count + 2)
        writer.appendQuoted(value)
        return writer.text
    }

    // MARK: Layout

    private mutating func container(open: UInt8, close: UInt8, _ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(open)
        containers.append((0, indentWidth == nil))
        body(&self)
        let container = containers.removeLast()
        if container.count > 0, !container.inline { newline() }
        bytes.append(close)
    }

    /// Writes what comes before a value or key: nothing after a key, else a separator
    /// between siblings and, when indenting, a new line.
    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let container = containers.last else { return }
        if container.count > 0 { bytes.append(UInt8(ascii: ",")) }
        if container.inline {
            if container.count > 0 { bytes.append(UInt8(ascii: " ")) }
        } else {
            newline()
        }
        containers[containers.count - 1].count = container.count + 1
    }

    /// A line break and the indentation of the innermost open container's members.
    private mutating func newline() {
        guard case .indented(let width) = layout else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: width * containers.count))
    }

    private mutating func appendASCII(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ value: String) {
        var value = value
        value.withUTF8 { appendQuoted($0) }
    }

    /// Runs of bytes that need no escape are copied whole, found eight bytes at a time by the
    /// scanner's own search for them (`JSONScanner.skipPlainStringBytes`): a report's body
    /// (a response's text or base64) is most of what it writes.
    private mutating func appendQuoted(_ text: UnsafeBufferPointer<UInt8>) {
        bytes.reserveCapacity(bytes.count + text.count + 2)
        bytes.append(UInt8(ascii: "\""))
        Self.appendStringContent(UnsafeRawBufferPointer(text), to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The inside of a string literal for the UTF-8 `text`, escaped, appended to `bytes`.
    /// Escapes are decided byte by byte, so a string may be written in pieces cut anywhere
    /// (a report's body streamed from a file), between its own quotes.
    package static func appendStringContent(_ raw: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        // Runs are appended from typed memory: one copy each.
        let text = raw.assumingMemoryBound(to: UInt8.self)
        var runStart = 0
        var index = 0
        while index < raw.count {
            index = JSONScanner.skipPlainStringBytes(raw, from: index)
            guard index < raw.count else { break }
            let byte = raw[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index]))
                runStart = index + 1
                appendEscape(byte, to: &bytes)
            }
            index += 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...]))
    }

    /// The escape for `byte` (a quote, a backslash or a control character).
    private static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(UInt8(ascii: "u"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }
}
