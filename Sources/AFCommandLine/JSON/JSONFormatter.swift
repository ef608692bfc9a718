import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Re-indents (and optionally colours) JSON token by token, without converting a single
/// value: numbers, escapes, key order and duplicate keys come out exactly as they went in.
///
/// It streams: memory holds the scanner's carry buffer, one byte per open container and the
/// output not yet flushed. With `sortKeys`, objects must be seen whole: an object's
/// formatted text is held until the outermost open object ends, then rewritten with its
/// keys in order (`KeySorter`), so an array of records is sorted a record at a time.
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
        /// The most formatted text `sortKeys` holds in memory: past it, what was held is
        /// written in its own order and the rest streams (`gaveUpSorting`), so a body of any
        /// size is shown whole instead of exhausting memory. Nil: `defaultSortLimit`.
        var sortLimit: Int?
    }

    /// What a held object's text may grow past the limit in one piece before the limit is
    /// checked again (a 64 KiB piece, formatted), without the buffer growing again.
    static let heldSlack = 16 << 20

    /// A quarter of the machine's memory, and at most 1 GiB.
    static let defaultSortLimit: Int = {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return 256 << 20 }
        let (total, overflow) = pages.multipliedReportingOverflow(by: size)
        return overflow ? 1 << 30 : min(1 << 30, total / 4)
    }()

    let style: Style
    private var scanner = JSONScanner()
    private var writer: Writer
    /// With `sortKeys`: where the members of the objects being held lie, until the
    /// outermost one ends and its text is rewritten sorted.
    private var sorter = KeySorter()
    private var collecting: Bool
    /// The document outgrew `sortLimit`, or sorting it would have cost too much
    /// (`sortingTooCostly`), so its keys were not all sorted.
    private(set) var gaveUpSorting = false
    /// Sorting stopped because objects nested deep around a large value would have been
    /// copied once per level (`KeySorter.rewriteBudget`).
    private(set) var sortingTooCostly = false

    init(style: Style) {
        self.style = style
        scanner.allowsMultipleValues = style.multipleValues
        scanner.reportsWhitespace = style.colorsOnly
        writer = Writer(style: style)
        collecting = style.sortKeys && !style.colorsOnly
    }

    /// Bytes consumed so far.
    var consumed: Int { scanner.consumed }

    /// With `sortKeys`: the bytes of formatted text held until their object ends.
    var keptByteCount: Int { writer.out.count - (sorter.heldStart ?? writer.out.count) }

    /// After a syntax error: the input from the failing token on, to show as it came.
    var unformattedTail: [UInt8] { scanner.unformattedTail }

    /// Formats the next bytes, appending output to `out`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) throws(JSONSyntaxError) {
        defer { takeOutput { out.append(contentsOf: $0) } }
        try feed(bytes) { out.append(contentsOf: $0) }
    }

    mutating func feed(_ bytes: [UInt8], into out: inout [UInt8]) throws(JSONSyntaxError) {
        try bytes.withBytes { (raw: UnsafeRawBufferPointer) throws(JSONSyntaxError) in try feed(raw, into: &out) }
    }

    /// Formats the next bytes and keeps the output in the formatter's buffer, for
    /// `takeOutput` to hand on without a copy into an array (the output of a document is
    /// several times its size). With `sortKeys`, the text of an object that has not ended
    /// stays behind; when it would outgrow `sortLimit` here, it is let go in its own order
    /// (`gaveUpSorting`). A large object that ends here is rewritten sorted into `flush` a
    /// megabyte at a time (the bytes are valid during the call), after all output before
    /// it, instead of whole in memory; what `takeOutput` then hands on follows it.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, flush: (UnsafeRawBufferPointer) -> Void) throws(JSONSyntaxError) {
        // Checked before the bytes are formatted, so the held text outgrows the limit by no
        // more than one piece's formatting.
        if collecting {
            let limit = style.sortLimit ?? Self.defaultSortLimit
            if keptByteCount + bytes.count > limit {
                giveUpSorting()
            } else if keptByteCount >= LargeAllocation.threshold {
                // A large object is being held: room for it up to the limit at once (address
                // space; pages are taken as they are written), so that the buffer is not
                // copied (briefly twice its size) each time it doubles.
                writer.out.reserveIfAvailable(limit + Self.heldSlack)
            }
        }
        do {
            if collecting {
                // As without sorting, the painted layout has a scanning loop of its own.
                if writer.plainStyle {
                    try feedSorting(bytes, SortingWriter<PlainLayout>.self, flush)
                } else {
                    try feedSorting(bytes, SortingWriter<PaintedLayout>.self, flush)
                }
            } else if writer.plainStyle {
                try scanner.feed(bytes, into: &writer)
            } else {
                // A scanning loop of its own, with the painted layout compiled in.
                var painted = Writer.Painted(writer: writer)
                defer { writer = painted.writer }
                try scanner.feed(bytes, into: &painted)
            }
        } catch {
            // Invalid JSON: what came before the error is shown formatted (sorted as far as
            // outermost objects ended, the rest in its own order: an object cannot be sorted
            // before it ends), ahead of the rest as it came.
            stopSorting()
            writer.writePendingOpen()
            throw error
        }
    }

    /// Feeds the scanner into the writer with the sorter taking notes (a scanning loop per
    /// layout).
    private mutating func feedSorting<Layout>(
        _ bytes: UnsafeRawBufferPointer, _ sink: SortingWriter<Layout>.Type, _ flush: (UnsafeRawBufferPointer) -> Void
    ) throws(JSONSyntaxError) {
        try withoutActuallyEscaping(flush) { (flush) throws(JSONSyntaxError) in
            var sorting = SortingWriter<Layout>(writer: writer, sorter: sorter, flush: flush)
            defer { (writer, sorter) = (sorting.writer, sorting.sorter) }
            try scanner.feed(bytes, into: &sorting)
        }
        if sorter.tooCostly { sortingTooCostly = true }
        if sorter.overflowed || sorter.tooCostly { giveUpSorting() }
    }

    /// Lets the held text go in its own order and streams from here on.
    private mutating func giveUpSorting() {
        gaveUpSorting = true
        stopSorting()
    }

    private mutating func stopSorting() {
        collecting = false
        sorter.reset()
    }

    /// Hands the output written so far (but the held text of an object that has not ended)
    /// to `body` (valid during the call), then forgets it, whether `body` throws or not.
    mutating func takeOutput<Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Void) throws(Failure) {
        let buffer = writer.out
        guard let held = sorter.heldStart else {
            defer { buffer.removeAll() }
            return try body(buffer.written)
        }
        // The held text moves to the front: a record's worth for an array of records; for a
        // large object held across many pieces, nothing after the first.
        guard held > 0 else { return }
        defer {
            buffer.removeFirst(held)
            sorter.heldStart = 0
        }
        try body(UnsafeRawBufferPointer(rebasing: buffer.written[..<held]))
    }

    /// Ends the input and hands what is left of the output to `write` (the bytes are valid
    /// during the call), with a final newline. A document cut short inside an object is
    /// written as far as it came, in its own order.
    mutating func finish(write: (UnsafeRawBufferPointer) -> Void) throws(JSONSyntaxError) {
        defer {
            write(writer.out.written)
            writer.out.removeAll()
        }
        do {
            if collecting {
                try withoutActuallyEscaping(write) { (write) throws(JSONSyntaxError) in
                    var sorting = SortingWriter<PlainLayout>(writer: writer, sorter: sorter, flush: write)
                    defer { (writer, sorter) = (sorting.writer, sorting.sorter) }
                    try scanner.finish(into: &sorting)
                }
            } else {
                try scanner.finish(into: &writer)
            }
        } catch {
            stopSorting()
            writer.writePendingOpen()
            throw error
        }
        // A complete document leaves nothing open; anything held would be shown as it came
        // rather than lost.
        stopSorting()
        writer.finish()
    }

    /// Ends the input and appends what is left of the output to `out` (see above).
    mutating func finish(into out: inout [UInt8]) throws(JSONSyntaxError) {
        try finish { out.append(contentsOf: $0) }
    }

    /// Writes tokens with indentation and colours.
    struct Writer: JSONTokenSink {
        // The parts of the style the writer consults per token (not the theme's strings,
        // whose reference counts would otherwise be touched when the style is copied).
        private let indent: Int
        private let colorsOnly: Bool
        private let multipleValues: Bool
        /// Output not yet handed to the caller: appends here are a bounds check and a copy.
        let out = ByteBuffer()
        /// Containers open (`KeySorter` tells its objects' commas by it).
        private(set) var depth = 0
        /// An opening bracket not yet written, so `{}` and `[]` stay on one line.
        private var pendingOpen: UInt8?
        private var valuesWritten = 0
        private var inString = false
        private let colors: Colors?
        /// Re-indenting only: no colours, escapes as written.
        let plainStyle: Bool
        /// The colours and escapes otherwise.
        private let styled: Styled

        /// Colour sequences as bytes, ready to append: one allocation for all of them, so
        /// painting a token copies bytes and touches no reference counts.
        final class Colors {
            let key, string, number, boolean, null, punctuation, reset: UnsafeRawBufferPointer
            private let storage: UnsafeMutableRawBufferPointer

            init(_ theme: Theme) {
                let parts = [theme.key, theme.string, theme.number, theme.boolean, theme.null, theme.punctuation, Theme.reset].map { Array($0.utf8) }
                // Zeros after the last one, so that `ByteBuffer.appendPadded` may read a whole
                // run of words from the start of any of them.
                let total = parts.reduce(0) { $0 + $1.count }
                storage = .allocate(byteCount: total + ByteBuffer.padding, alignment: 8)
                storage.initializeMemory(as: UInt8.self, repeating: 0)
                var slices: [UnsafeRawBufferPointer] = []
                var offset = 0
                for part in parts {
                    let target = UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + part.count)])
                    part.withUnsafeBytes { target.copyMemory(from: $0) }
                    slices.append(UnsafeRawBufferPointer(target))
                    offset += part.count
                }
                (key, string, number, boolean, null, punctuation, reset) = (slices[0], slices[1], slices[2], slices[3], slices[4], slices[5], slices[6])
            }

            deinit { storage.deallocate() }
        }

        init(style: Style) {
            indent = style.indent
            colorsOnly = style.colorsOnly
            multipleValues = style.multipleValues
            colors = style.theme.map(Colors.init)
            plainStyle = style.theme == nil && !style.colorsOnly && !style.decodesEscapes
            styled = Styled(colors: colors, decodesEscapes: style.decodesEscapes)
        }

        /// Kept small, so that the plain layout's work is inlined here and everything else
        /// costs one more call.
        @inline(__always)
        mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
            if plainStyle {
                layout(kind, bytes, isKey: isKey, complete: complete, NoPaint())
            } else {
                otherToken(kind, bytes, isKey: isKey, complete: complete)
            }
        }

        /// Tokens kept in their layout, coloured or with escapes decoded.
        @inline(never)
        private mutating func otherToken(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
            paintedToken(kind, bytes, isKey: isKey, complete: complete)
        }

        @inline(__always)
        mutating func paintedToken(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
            if colorsOnly {
                inPlace(kind, bytes, isKey: isKey, complete: complete)
            } else {
                layout(kind, bytes, isKey: isKey, complete: complete, styled)
            }
        }

        /// The writer as the sink of a scanning loop of its own when tokens are painted
        /// (colours, decoded escapes), so that the painted layout is compiled into that loop
        /// instead of being a call per token, while the plain loop stays small.
        struct Painted: JSONTokenSink {
            var writer: Writer

            @inline(__always)
            mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
                writer.paintedToken(kind, bytes, isKey: isKey, complete: complete)
            }
        }

        /// Re-indents one token, painted by `painter`. Transparent, so that it is always
        /// compiled into the scanning loop (plain) and into `otherToken` (painted): with
        /// `@inline(__always)` the optimiser still kept it a call per token in the loop
        /// specialised across the module boundary (5 MB: 260 M instructions, now 220 M).
        @_transparent
        private mutating func layout<P: Painter>(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool, _ painter: P) {
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
                    painter.open(.punctuation, out)
                    out.append(open)
                } else {
                    newline()
                    painter.open(.punctuation, out)
                }
                out.append(bytes[0])
                painter.close(.punctuation, out)
                if depth == 0 { valueCompleted() }
            case .comma:
                painter.open(.punctuation, out)
                out.append(bytes[0])
                painter.close(.punctuation, out)
                newline()
            case .colon:
                painter.open(.punctuation, out)
                out.append(bytes[0])
                painter.close(.punctuation, out)
                out.append(32)
            case .string:
                let role: Role = isKey ? .key : .string
                if !inString {
                    startValue()
                    painter.open(role, out)
                }
                painter.text(bytes, out)
                inString = !complete
                if complete {
                    painter.close(role, out)
                    if depth == 0 { valueCompleted() }
                }
            case .number, .literal:
                let role: Role
                switch kind {
                case .number: role = .number
                default: role = bytes[0] == UInt8(ascii: "n") ? .null : .boolean
                }
                startValue()
                painter.open(role, out)
                out.append(contentsOf: bytes)
                painter.close(role, out)
                if depth == 0 { valueCompleted() }
            }
        }

        /// Colours a token in place, keeping the original layout.
        private mutating func inPlace(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
            let painter = styled
            let role: Role
            switch kind {
            case .whitespace: return out.append(contentsOf: bytes)
            case .string:
                role = isKey ? .key : .string
                if !inString { painter.open(role, out) }
                painter.text(bytes, out)
                inString = !complete
                if complete { painter.close(role, out) }
                return
            case .number: role = .number
            case .literal: role = bytes.first == UInt8(ascii: "n") ? .null : .boolean
            default: role = .punctuation
            }
            painter.open(role, out)
            out.append(contentsOf: bytes)
            painter.close(role, out)
        }

        /// Ends the output with its final new line.
        mutating func finish() {
            if valuesWritten > 0, !colorsOnly, !multipleValues { out.append(10) }
        }

        /// A top-level value ended: with several values (NDJSON) its line ends at once, so a
        /// stream shows each value as soon as it is complete.
        private mutating func valueCompleted() {
            valuesWritten += 1
            if multipleValues { out.append(10) }
        }

        /// Writes a pending opening bracket, and separates top-level values; inside a
        /// container with nothing pending (most values) there is nothing to do.
        @inline(__always)
        mutating func startValue() {
            if pendingOpen != nil || depth == 0 { openOrSeparate() }
        }

        @inline(never)
        private mutating func openOrSeparate() {
            if pendingOpen != nil {
                writePendingOpen()
                newline()
            } else if depth == 0, valuesWritten > 0, !multipleValues {
                out.append(10)
            }
        }

        /// After a syntax error: writes an opening bracket held back (so that `{}` stays on
        /// one line), so that the formatted part holds every token it took before the rest
        /// follows as it came. (Inlined: `openOrSeparate` writes every held bracket with it.)
        @inline(__always)
        mutating func writePendingOpen() {
            guard let open = pendingOpen else { return }
            pendingOpen = nil
            if plainStyle {
                out.append(open)
            } else {
                styled.open(.punctuation, out)
                out.append(open)
                styled.close(.punctuation, out)
            }
        }

        @inline(__always)
        private mutating func newline() {
            out.appendNewline(indent: depth * indent)
        }
    }

    /// What a token is, for its colour.
    enum Role { case key, string, number, boolean, null, punctuation }

    /// How the layout writes a token's colour and text.
    fileprivate protocol Painter {
        func open(_ role: Role, _ out: ByteBuffer)
        func close(_ role: Role, _ out: ByteBuffer)
        /// A string token's bytes.
        func text(_ bytes: UnsafeRawBufferPointer, _ out: ByteBuffer)
    }

    /// No colours, strings as written: the layout alone.
    fileprivate struct NoPaint: Painter {
        @inline(__always) func open(_ role: Role, _ out: ByteBuffer) {}
        @inline(__always) func close(_ role: Role, _ out: ByteBuffer) {}
        @inline(__always) func text(_ bytes: UnsafeRawBufferPointer, _ out: ByteBuffer) { out.append(contentsOf: bytes) }
    }

    /// A theme's colours (a role with an empty colour is left plain), and escapes decoded
    /// for a terminal when asked. Plain pointers into `Writer.Colors`, which keeps them.
    fileprivate struct Styled: Painter {
        let key, string, number, boolean, null, punctuation, reset: UnsafeRawBufferPointer
        let decodesEscapes: Bool
        /// There is a theme: the output is meant for reading.
        let coloured: Bool

        init(colors: Writer.Colors?, decodesEscapes: Bool) {
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            key = colors?.key ?? none
            string = colors?.string ?? none
            number = colors?.number ?? none
            boolean = colors?.boolean ?? none
            null = colors?.null ?? none
            punctuation = colors?.punctuation ?? none
            reset = colors?.reset ?? none
            self.decodesEscapes = decodesEscapes
            coloured = colors != nil
        }

        @inline(__always)
        private func color(_ role: Role) -> UnsafeRawBufferPointer {
            switch role {
            case .key: return key
            case .string: return string
            case .number: return number
            case .boolean: return boolean
            case .null: return null
            case .punctuation: return punctuation
            }
        }

        @inline(__always)
        func open(_ role: Role, _ out: ByteBuffer) {
            let color = color(role)
            if !color.isEmpty { out.appendPadded(color) }
        }

        @inline(__always)
        func close(_ role: Role, _ out: ByteBuffer) {
            if !color(role).isEmpty { out.appendPadded(reset) }
        }

        /// Coloured output is for reading, into a pipe too (`| less -R`): DEL, C1 controls
        /// and bytes that are no UTF-8 in a string are shown as on a terminal, escapes as
        /// written. Most strings are ASCII below DEL and need no look beyond that.
        @inline(__always)
        func text(_ bytes: UnsafeRawBufferPointer, _ out: ByteBuffer) {
            if decodesEscapes {
                out.appendShown(bytes, decodingEscapes: true)
            } else if !coloured || bytes.allBytes(below: 0x7F) {
                out.append(contentsOf: bytes)
            } else {
                out.appendShown(bytes, decodingEscapes: false)
            }
        }
    }
}

/// A growable byte buffer for formatter output: appending is a capacity check and a copy,
/// with none of `Array`'s uniqueness checks or reference counting per token.
final class ByteBuffer {
    private(set) var count = 0
    private var capacity = 64 * 1024
    private var storage: UnsafeMutablePointer<UInt8>
    /// Room every reservation keeps past the bytes it asks for, so that a short run (a new
    /// line and its indentation, a token of up to 32 bytes) is written as whole words and
    /// only `count` says where it ends.
    private static let slack = 32

    init() {
        storage = LargeAllocation.allocate(UInt8.self, capacity: capacity)
    }

    deinit {
        LargeAllocation.deallocate(storage, capacity: capacity)
    }

    @inline(__always)
    private func reserve(_ extra: Int) {
        if count &+ extra &+ Self.slack > capacity { grow(extra + Self.slack) }
    }

    @inline(never)
    private func grow(_ extra: Int) {
        var grown = capacity * 2
        while grown < count + extra { grown *= 2 }
        storage = LargeAllocation.resize(storage, count: count, capacity: capacity, to: grown)
        capacity = grown
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    /// How many bytes `appendPadded` may read from the start of what it is given.
    static let padding = slack

    /// Appends bytes from a source that can be read for at least `padding` bytes from its
    /// start (the colours): a run that short is copied as four words, whatever its length.
    @inline(__always)
    func appendPadded(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        guard length <= Self.padding, let source = bytes.baseAddress else { return append(contentsOf: bytes) }
        reserve(length)
        let target = UnsafeMutableRawPointer(storage + count)
        target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
        (target + 8).storeBytes(of: (source + 8).loadUnaligned(as: UInt64.self), as: UInt64.self)
        (target + 16).storeBytes(of: (source + 16).loadUnaligned(as: UInt64.self), as: UInt64.self)
        (target + 24).storeBytes(of: (source + 24).loadUnaligned(as: UInt64.self), as: UInt64.self)
        count &+= length
    }

    @inline(__always)
    func append(contentsOf bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if bytes.count == 1 { return append(bytes[0]) }
        reserve(bytes.count)
        copySmallOrLarge(from: base, count: bytes.count)
    }

    /// Copies to the end; most tokens are short, and a call to `memmove` for a few bytes
    /// costs more than the copy, so up to 32 bytes move as overlapping words.
    @inline(__always)
    private func copySmallOrLarge(from source: UnsafeRawPointer, count length: Int) {
        let target = UnsafeMutableRawPointer(storage + count)
        if length >= 8, length <= 16 {
            target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
            (target + length - 8).storeBytes(of: (source + length - 8).loadUnaligned(as: UInt64.self), as: UInt64.self)
        } else if length > 16, length <= 32 {
            let (a, b) = (source.loadUnaligned(as: UInt64.self), (source + 8).loadUnaligned(as: UInt64.self))
            let (c, d) = ((source + length - 16).loadUnaligned(as: UInt64.self), (source + length - 8).loadUnaligned(as: UInt64.self))
            target.storeBytes(of: a, as: UInt64.self)
            (target + 8).storeBytes(of: b, as: UInt64.self)
            (target + length - 16).storeBytes(of: c, as: UInt64.self)
            (target + length - 8).storeBytes(of: d, as: UInt64.self)
        } else if length >= 4, length < 8 {
            target.storeBytes(of: source.loadUnaligned(as: UInt32.self), as: UInt32.self)
            (target + length - 4).storeBytes(of: (source + length - 4).loadUnaligned(as: UInt32.self), as: UInt32.self)
        } else if length < 4 {
            for offset in 0..<length { target.storeBytes(of: source.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self) }
        } else {
            target.copyMemory(from: source, byteCount: length)
        }
        count += length
    }

    /// A line feed and `indent` spaces: up to 31 spaces as four stored words (the slack
    /// takes what lies past the run), more one run at a time.
    @inline(__always)
    func appendNewline(indent: Int) {
        let length = indent &+ 1
        guard length <= Self.slack else {
            append(10)
            return appendSpaces(indent)
        }
        reserve(length)
        let target = UnsafeMutableRawPointer(storage + count)
        let spaces: UInt64 = 0x2020_2020_2020_2020
        target.storeBytes(of: (spaces << 8 | 0x0A).littleEndian, as: UInt64.self)
        (target + 8).storeBytes(of: spaces, as: UInt64.self)
        (target + 16).storeBytes(of: spaces, as: UInt64.self)
        (target + 24).storeBytes(of: spaces, as: UInt64.self)
        count &+= length
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

    /// A string token shown for reading (`UnicodeEscapes.decodeForDisplay`) into this buffer.
    func appendShown(_ token: UnsafeRawBufferPointer, decodingEscapes: Bool) {
        var shown: [UInt8] = []
        UnicodeEscapes.decodeForDisplay(token, decodingEscapes: decodingEscapes, into: &shown)
        append(contentsOf: shown)
    }

    /// Replaces the bytes from `offset` with `bytes` (which must lie within what is written).
    func overwrite(at offset: Int, with bytes: UnsafeRawBufferPointer) {
        precondition(offset >= 0 && offset + bytes.count <= count, "overwrite past the written bytes")
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        UnsafeMutableRawPointer(storage + offset).copyMemory(from: source, byteCount: bytes.count)
    }

    /// Removes the first `total` bytes (no more than there are), moving the rest down.
    func removeFirst(_ total: Int) {
        count = LargeAllocation.removeFirst(total, of: count, at: storage)
    }

    /// Makes room for `total` bytes in all when the kernel grants it (address space, taken
    /// as it is written); when it does not, the buffer grows as it goes, as before.
    func reserveIfAvailable(_ total: Int) {
        guard total > capacity, let bigger = LargeAllocation.tryAllocate(UInt8.self, capacity: total + Self.slack) else { return }
        bigger.moveInitialize(from: storage, count: count)
        LargeAllocation.deallocate(storage, capacity: capacity)
        storage = bigger
        capacity = total + Self.slack
    }

    /// Makes room for `total` bytes in all, so appends up to it never copy what is there.
    func reserveCapacity(_ total: Int) {
        guard total > capacity else { return }
        storage = LargeAllocation.resize(storage, count: count, capacity: capacity, to: total + Self.slack)
        capacity = total + Self.slack
    }

    /// The bytes written so far: valid until the next append or `removeAll`.
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: count) }

    /// Forgets the bytes written so far (the memory stays for the next ones).
    func removeAll() {
        count = 0
    }

    /// Keeps the first `total` bytes (no more than there are).
    func truncate(to total: Int) {
        count = min(count, max(total, 0))
    }

}

/// `\uXXXX` escapes in JSON string tokens, decoded for reading on a terminal.
enum UnicodeEscapes {
    /// Appends `token` to `out` with each `\uXXXX` (and surrogate pair) that names a
    /// printable character replaced by that character in UTF-8 (when `decodingEscapes`).
    /// Quotes, backslashes, control characters (C0, DEL, C1), invisible format characters
    /// (bidi overrides, zero widths) and lone surrogates stay escaped, so the shown text
    /// cannot end the string early, steer the terminal or hide what it says. DEL and C1
    /// controls that came unescaped (valid in a JSON string) are shown escaped as
    /// `\u007f`…`\u009f` for the same reason, and bytes that are no UTF-8 as U+FFFD.
    static func decodeForDisplay(_ token: UnsafeRawBufferPointer, decodingEscapes: Bool = true, into out: inout [UInt8]) {
        let count = token.count
        var index = 0
        var copiedUpTo = 0
        while index < count {
            let byte = token[index]
            // DEL is one byte; a C1 control is 0xC2 then 0x80–0x9F in UTF-8.
            let isC1 = byte == 0xC2 && index + 1 < count && (0x80...0x9F).contains(token[index + 1])
            if byte == 0x7F || isC1 {
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: token[copiedUpTo..<index]))
                out.append(contentsOf: "\\u00\(Hex.encode([isC1 ? token[index + 1] : byte]))".utf8)
                index += isC1 ? 2 : 1
                copiedUpTo = index
                continue
            }
            if byte >= 0x80 {
                // Bytes that are no UTF-8 (JSON's scanner lets them through in a string) show
                // as U+FFFD, one for each, as in text: raw, a lone 0x9B is CSI to an 8-bit
                // terminal.
                var parser = Unicode.UTF8.ForwardParser()
                var rest = token[index...].makeIterator()
                switch parser.parseScalar(from: &rest) {
                case .valid(let encoded):
                    index += encoded.count
                case .error(let length):
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: token[copiedUpTo..<index]))
                    for _ in 0..<length { out.append(contentsOf: [0xEF, 0xBF, 0xBD]) }
                    index += length
                    copiedUpTo = index
                case .emptyInput:
                    index += 1
                }
                continue
            }
            guard byte == UInt8(ascii: "\\"), index + 1 < count else {
                index += 1
                continue
            }
            guard decodingEscapes, let (scalarValue, length) = JSONStringText.unicodeEscape(in: token, at: index) else {
                index += 2
                continue
            }
            // A lone surrogate is no scalar, and stays escaped.
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

}
