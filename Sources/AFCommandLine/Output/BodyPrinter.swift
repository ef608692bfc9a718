import AFEngine

/// How a response body is shown.
struct BodyStyle: Sendable {
    /// Re-indent JSON.
    var format: Bool
    /// Colours, when on.
    var theme: Theme?
    var indent: Int
    var sortKeys: Bool
    /// Writing to a terminal: decode text, escape control characters, keep binary off it.
    var terminal: Bool
    /// `--stream`: write every chunk at once.
    var stream: Bool
    var responseCharset: String?
    /// Format as if the response had this Content-Type (`--response-mime`).
    var responseMime: String? = nil
    /// Indent XML (`xml.format`), by this many spaces (`xml.indent`).
    var formatXML = true
    var xmlIndent = 2

    /// Text is decoded and its control characters escaped, and binary bodies are replaced
    /// by a note: on a terminal, and whenever af colours (coloured output is for reading, and
    /// a server's escape sequences must not ride along into a pager or a log).
    var escapes: Bool { terminal || theme != nil }
}

/// Writes one response body to an output channel, chunk by chunk, formatted as the style
/// asks. Not thread-safe: its owner serialises calls.
final class BodyPrinter {
    /// Bodies up to this size are validated before formatting, so invalid JSON is printed
    /// exactly as it came; larger ones are formatted as they stream.
    static let validationWindow = 1 << 20

    /// The most input the formatter is given at once.
    static let formatSlice = 64 << 10

    private enum Mode: Equatable {
        /// Exact bytes.
        case raw
        /// Decoded and escaped for a terminal.
        case text
        /// Re-indented and/or coloured JSON.
        case json
        /// Kept off the terminal.
        case binary
        /// Not decided until the first bytes arrive: JSON if they start with `{` or `[`,
        /// else `sniffFallback` (untyped, text and JavaScript bodies).
        case sniff
        /// XML (indented and coloured) or HTML (coloured), held until the end (up to
        /// `markupLimit`, past which it is shown as text).
        case markup(xml: Bool)
    }

    /// Markup bodies larger than this are shown as text, not formatted.
    static let markupLimit = 8 << 20

    private let style: BodyStyle
    private let contentType: String?
    private var mode: Mode
    /// --response-charset (checked when parsed), else the declared charset, else what the
    /// body's start says (`CharsetDecoder.sniffing`). Made when a body is first decoded
    /// (text on a terminal, markup): a body passed on as it came needs none.
    private lazy var decoder: CharsetDecoder = declaredCharset.flatMap { CharsetDecoder(label: $0) } ?? .sniffing()
    /// How a JSON body that is not JSON after all is shown as text on a terminal. With a
    /// declared charset its bytes reached the JSON path in UTF-8 (transcoded, or found to be
    /// UTF-8 already), and decoding them by that charset again garbled them (a UTF-16 body
    /// came out as U+FFFD); without one, they are sniffed as any text is.
    private lazy var jsonTextDecoder: CharsetDecoder = declaredCharset == nil ? .sniffing() : .utf8()
    /// --response-charset, else the charset `Content-Type` declares.
    private lazy var declaredCharset: String? = style.responseCharset ?? MediaType.charset(contentType)
    /// How JSON is laid out; the formatter (and its buffers) is made only for a JSON body.
    private let formatterStyle: JSONFormatter.Style
    /// Used in place through optional chaining: a `lazy` property would hand each mutating
    /// call a copy, and a sorted document's token arrays would be copied on every chunk.
    private var formatter: JSONFormatter?
    private var buffered: [UInt8] = []
    private var lastByte: UInt8 = 10
    /// Bytes of a JSON body went through `jsonTextDecoder` as text (it was not JSON after all).
    private var shownAsText = false
    private var streaming: Bool
    private var fellBack = false
    private var prefixChecked = false
    /// The start of a streamed JSON body that may be an anti-XSSI prefix cut by the chunk it
    /// came in (`)]}` of `)]}',`), held until it is whole or cannot be one.
    private var heldStart: [UInt8] = []
    /// What a `.sniff` body becomes when it does not start like JSON.
    private var sniffFallback: Mode
    /// A `.sniff` body's blank start, held until a byte that is not blank shows what it is
    /// (a chunked body may start with a chunk of nothing but a line break).
    private var sniffed: [UInt8] = []
    /// How much blank start is held at most before the body is taken for what it falls back to.
    static let sniffLimit = 64 << 10
    /// A JSON body's declared charset, when it is not UTF-8: undecided while the body is held
    /// (or a stream's chunks are ASCII), then the transcoder to use, or nil where the bytes
    /// are UTF-8 after all.
    private enum JSONCharset {
        case unchecked
        case undecided(CharsetDecoder)
        case decided(CharsetDecoder?)
    }

    private var jsonCharset = JSONCharset.unchecked
    /// A JSON body in a declared charset, as received, while its charset is undecided and it
    /// is being held for validation anyway: the whole of it decides (one chunk decided, and a
    /// later byte that is not UTF-8 was shown as U+FFFD).
    private var heldRaw: [UInt8] = []
    /// A JSON body's first bytes, without a declared charset, while they may be the start of
    /// a byte order mark (a chunk of one or two bytes decided the body was UTF-8).
    private var heldMark: [UInt8] = []
    private(set) var byteCount = 0

    /// With `--sort-keys`: the JSON body outgrew the memory sorting may use, so it was shown
    /// in its own order (the caller says so on standard error).
    var gaveUpSorting: Bool { formatter?.gaveUpSorting ?? false }
    /// Why: the body would have cost too much to sort, not outgrown memory.
    var sortingTooCostly: Bool { formatter?.sortingTooCostly ?? false }

    init(head: ResponseHead, style: BodyStyle) {
        self.style = style
        streaming = style.stream
        sniffFallback = style.escapes ? .text : .raw
        contentType = style.responseMime ?? head.headers.value(for: .contentType)
        // Nothing to format, colour or decode (a body piped on, the common case in a
        // script and on every line of a batch): the exact bytes, whatever the type says.
        guard style.format || style.theme != nil || style.escapes else {
            mode = .raw
            formatterStyle = JSONFormatter.Style()
            return
        }
        let essence = MediaType.essence(contentType)
        let ndjson = essence.containsBytes(of: "ndjson") || essence == "application/jsonl"
        formatterStyle = JSONFormatter.Style(
            indent: style.indent, theme: style.theme, sortKeys: style.sortKeys,
            multipleValues: ndjson || style.stream, colorsOnly: !style.format, decodesEscapes: style.terminal
        )
        let styling = style.format || style.theme != nil
        if style.escapes, MediaType.isBinary(essence) {
            mode = .binary
        } else if styling, MediaType.isJSON(essence) {
            mode = .json
        } else if styling, MediaType.isXML(essence), style.formatXML || style.theme != nil {
            mode = .markup(xml: true)
        } else if style.theme != nil, essence == "text/html" || essence == "application/xhtml+xml" {
            mode = .markup(xml: false)
            // JSON sent as text/html (a PHP default) is formatted as JSON, as HTTPie does.
            if style.format {
                sniffFallback = mode
                mode = .sniff
            }
        } else if styling, MediaType.mayBeJSON(essence) {
            mode = .sniff
        } else {
            mode = style.escapes ? .text : .raw
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, to out: OutputChannel) throws(AFError) {
        if mode == .sniff {
            // Decided by the first byte that is not blank, in whichever chunk it comes (a first
            // chunk of only a line break made JSON sent as text go out unformatted).
            let first = bytes.first { $0 != 32 && $0 != 10 && $0 != 13 && $0 != 9 }
            if first == nil, sniffed.count + bytes.count <= Self.sniffLimit {
                sniffed.append(contentsOf: bytes)
                return
            }
            mode = first == UInt8(ascii: "{") || first == UInt8(ascii: "[") ? .json : sniffFallback
            if !sniffed.isEmpty {
                let held = sniffed + Array(bytes)
                sniffed = []
                try held.withBytes { whole throws(AFError) in try write(whole, to: out) }
                return
            }
        }
        byteCount += bytes.count
        switch mode {
        case .raw:
            try out.write(bytes)
        case .binary, .sniff:
            break
        case .text:
            try writeTextChunk(bytes, to: out)
        case .markup:
            buffered.append(contentsOf: bytes)
            // A NUL makes it binary, as it does text (the colourer showed it escaped, however
            // binary). Nothing of it has been shown: the held start is what the charset is
            // judged on.
            if style.escapes, bytes.contains(0), !decoder.settle(on: buffered) {
                mode = .binary
                buffered = []
                return
            }
            if buffered.count > Self.markupLimit {
                mode = style.escapes ? .text : .raw
                let pending = buffered
                buffered = []
                guard style.escapes else { return try out.write(pending) }
                // A block at a time, as it would have come: decoded and escaped whole, the
                // held 8 MiB were copied three times over.
                try pending.withBytes { (held: UnsafeRawBufferPointer) throws(AFError) in
                    var start = 0
                    while start < held.count, mode == .text {
                        let end = min(start + (64 << 10), held.count)
                        try writeTextChunk(UnsafeRawBufferPointer(rebasing: held[start..<end]), to: out)
                        start = end
                    }
                }
            }
        case .json:
            if case .unchecked = jsonCharset, declaredCharset == nil, !heldMark.isEmpty || CharsetSniffer.mayStartAMark(bytes) {
                // Without a charset the first bytes may be a byte order mark: held until there
                // are enough of them to tell.
                heldMark.append(contentsOf: bytes)
                if CharsetSniffer.mayStartAMark(heldMark) { return }
                try releaseHeldMark(to: out)
            } else {
                try writeJSONChunk(bytes, to: out)
            }
        }
    }

    /// A JSON body's next bytes as received: in UTF-8 once its charset is known.
    private func writeJSONChunk(_ bytes: UnsafeRawBufferPointer, to out: OutputChannel) throws(AFError) {
        if case .undecided(let transcoder) = decideJSONCharset(firstBytes: bytes) {
            // ASCII reads the same either way: a stream's ASCII chunks pass on as they are.
            if streaming, !transcoder.encodesWithNULs, !bytes.contains(where: { $0 >= 0x80 }) {
                return try writeJSON(bytes, to: out)
            }
            // Held for validation, the whole body decides; a stream, its first chunk
            // beyond ASCII.
            heldRaw.append(contentsOf: bytes)
            if streaming || heldRaw.count > Self.validationWindow { try releaseHeldRaw(transcoder, final: false, to: out) }
        } else if case .decided(let transcoder?) = jsonCharset {
            try Array(transcoder.decode(bytes).utf8).withBytes { utf8 throws(AFError) in try writeJSON(utf8, to: out) }
        } else {
            try writeJSON(bytes, to: out)
        }
    }

    /// The first bytes held for a byte order mark, on their way.
    private func releaseHeldMark(to out: OutputChannel) throws(AFError) {
        guard !heldMark.isEmpty else { return }
        let held = heldMark
        heldMark = []
        try held.withBytes { bytes throws(AFError) in try writeJSONChunk(bytes, to: out) }
    }

    /// `jsonCharset`, once the declared charset has been looked at (or, with none, a byte
    /// order mark for UTF-16 or UTF-32 at the body's start, as RFC 4627 allowed). A JSON body
    /// in a charset other than UTF-8 is turned into UTF-8 before it is formatted (the
    /// formatter reads UTF-8; HTTPie decodes by the charset too): a `charset=iso-8859-1` body
    /// put its 0xE9 bytes on the terminal as they came. Only where the declaration fits:
    /// bytes that are valid UTF-8 stay UTF-8 (JSON is UTF-8, and mislabelled bodies are
    /// common), unless the charset writes with NULs (UTF-16, UTF-32).
    private func decideJSONCharset(firstBytes: UnsafeRawBufferPointer) -> JSONCharset {
        if case .unchecked = jsonCharset {
            // Without a charset, a byte order mark for UTF-16 or UTF-32 says which (RFC 4627).
            let label = declaredCharset ?? CharsetSniffer.markedCharset(Array(firstBytes.prefix(4)))
            if let label, let transcoder = CharsetDecoder(label: label), !transcoder.isUTF8 {
                jsonCharset = .undecided(transcoder)
            } else {
                jsonCharset = .decided(nil)
            }
        }
        return jsonCharset
    }

    /// Decides a held JSON body's charset on all of it (up to a sequence the end may have
    /// cut, unless `final`) and passes it on in UTF-8.
    private func releaseHeldRaw(_ transcoder: CharsetDecoder, final: Bool, to out: OutputChannel) throws(AFError) {
        let raw = heldRaw
        heldRaw = []
        let utf8 = final ? String(validating: raw, as: UTF8.self) != nil : CharsetDecoder.isValidUTF8Prefix(raw)
        let decided = transcoder.encodesWithNULs || !utf8 ? transcoder : nil
        jsonCharset = .decided(decided)
        if let decided {
            try Array(decided.decode(raw).utf8).withBytes { converted throws(AFError) in try writeJSON(converted, to: out) }
        } else {
            try raw.withBytes { bytes throws(AFError) in try writeJSON(bytes, to: out) }
        }
    }

    /// A JSON body's next (UTF-8) bytes: validated while they fit the window, then formatted
    /// as they come; after a syntax error, as received.
    private func writeJSON(_ bytes: UnsafeRawBufferPointer, to out: OutputChannel) throws(AFError) {
        if fellBack {
            try writeAsReceived(Array(bytes), to: out)
        } else if streaming {
            try format(bytes, to: out, holdingAPrefixStart: true)
        } else {
            buffered.append(contentsOf: bytes)
            if buffered.count > Self.validationWindow {
                streaming = true
                let pending = buffered
                buffered = []
                try pending.withBytes { raw throws(AFError) in try format(raw, to: out) }
            }
        }
    }

    func finish(to out: OutputChannel) throws(AFError) {
        if mode == .sniff, !sniffed.isEmpty {
            // A body of nothing but blanks: as the fallback shows it.
            mode = sniffFallback
            let held = sniffed
            sniffed = []
            try held.withBytes { whole throws(AFError) in try write(whole, to: out) }
        }
        switch mode {
        case .raw, .sniff:
            return
        case .binary:
            guard byteCount > 0 else { return }
            let type = MediaType.essence(contentType)
            let what = "\(Format.bytes(Int64(byteCount))) of \(type.isEmpty ? "unknown type" : type)"
            // Into a pipe it is the colours that keep it out: say so, and what shows it.
            let note = style.terminal
                ? "[binary data not shown on the terminal: \(what); use -o FILE or redirect the output]"
                : "[binary data not shown in coloured output: \(what); use --pretty=format or -o FILE]"
            // After text shown before the body turned out binary, on a line of its own.
            try out.write((lastByte == 10 ? "" : "\n") + Theme.paint(note, style.theme?.note ?? "") + "\n")
        case .text:
            try writeText(decoder.decode([UInt8](), final: true), to: out)
            if style.terminal, lastByte != 10, byteCount > 0 { try out.write("\n") }
        case .markup(let xml):
            var text = decoder.decode(buffered, final: true)
            buffered = []
            let colors = style.theme.map(MarkupFormatter.Colors.init)
            let indented = xml && style.format && style.formatXML
            let style = style
            let written: Result<Bool, AFError> = text.withUTF8 { bytes in
                Result { () throws(AFError) -> Bool in
                    let sink: MarkupFormatter.Sink = { (block: UnsafeRawBufferPointer) throws(AFError) in try out.write(block) }
                    if indented {
                        return try MarkupFormatter.indent(bytes, by: style.xmlIndent, colors: colors, escapes: style.escapes, into: sink)
                    }
                    guard let colors else { return false }
                    return try MarkupFormatter.colour(bytes, colors: colors, escapes: style.escapes, into: sink)
                }
            }
            let shown = try written.get()
            if !shown {
                // Malformed: as it came (escaped for reading).
                try writeText(text, to: out)
                if style.terminal, lastByte != 10, !text.isEmpty { try out.write("\n") }
            } else if style.terminal, !indented, let last = text.utf8.last, last != 10 {
                // Coloured as it came: on a line of its own, as text is shown.
                try out.write("\n")
            }
        case .json:
            try finishJSON(to: out)
            // A body shown as received (not JSON after all) went through the text decoder,
            // which holds the bytes that might still start a wider character: at the end
            // they are text too (a body of under four bytes, such as `nul`, was shown as
            // nothing).
            if shownAsText {
                try writeText(jsonTextDecoder.decode([UInt8](), final: true), to: out)
                // On a line of its own, as text is shown.
                if style.terminal, lastByte != 10 { try out.write("\n") }
            }
        }
    }

    /// The end of a JSON body: what was held back for a byte order mark, a charset or a
    /// prefix, validated and formatted, or shown as received when it is not JSON.
    private func finishJSON(to out: OutputChannel) throws(AFError) {
        try releaseHeldMark(to: out)
        if case .undecided(let transcoder) = jsonCharset, !heldRaw.isEmpty {
            try releaseHeldRaw(transcoder, final: true, to: out)
        }
        if case .decided(let transcoder?) = jsonCharset {
            let rest = Array(transcoder.decode([UInt8](), final: true).utf8)
            if !rest.isEmpty { try rest.withBytes { utf8 throws(AFError) in try writeJSON(utf8, to: out) } }
        }
        if !heldStart.isEmpty {
            let held = heldStart
            heldStart = []
            try held.withBytes { raw throws(AFError) in try format(raw, to: out) }
        }
        if fellBack { return }
        if !streaming {
            let body = buffered
            buffered = []
            let json = Array(Self.splitXSSI(body).json)
            guard JSONScanner.validate(json, multipleValues: formatterStyle.multipleValues) == nil else {
                return try writeAsReceived(body, to: out)
            }
            try body.withBytes { raw throws(AFError) in try format(raw, to: out) }
            if fellBack { return }
        }
        var incomplete = false
        // What is left: a large sorted object that ends here, a megabyte at a time; the
        // final new line; an object cut short, as it came.
        var writeFailure: AFError?
        if formatter == nil { formatter = JSONFormatter(style: formatterStyle) }
        do {
            try formatter?.finish { pending in
                guard writeFailure == nil else { return }
                do throws(AFError) { try out.write(pending) } catch { writeFailure = error }
            }
        } catch {
            incomplete = true
        }
        if let writeFailure { throw writeFailure }
        if incomplete { try writeAsReceived(formatter?.unformattedTail ?? [], to: out) }
    }

    /// Formats bytes (after an anti-XSSI prefix, which is kept as is); on a syntax error the
    /// rest goes out exactly as it came. `holdingAPrefixStart` for a chunk of a stream, whose
    /// first bytes may be the start of a prefix the next chunk ends.
    private func format(_ bytes: UnsafeRawBufferPointer, to out: OutputChannel, holdingAPrefixStart: Bool = false) throws(AFError) {
        if !prefixChecked, holdingAPrefixStart, !heldStart.isEmpty || bytes.count < Self.longestXSSIPrefix {
            heldStart.append(contentsOf: bytes)
            if Self.xssiPrefixes.contains(where: { $0.count > heldStart.count && $0.starts(with: heldStart) }) { return }
            let start = heldStart
            heldStart = []
            return try start.withBytes { raw throws(AFError) in try format(raw, to: out) }
        }
        var input = bytes
        if !prefixChecked {
            prefixChecked = true
            let (prefix, _) = Self.splitXSSI(Array(bytes.prefix(Self.xssiLimit)))
            if !prefix.isEmpty { try writePrefix(prefix, to: out) }
            input = UnsafeRawBufferPointer(rebasing: bytes[prefix.count...])
        }
        var failed = false
        if formatter == nil { formatter = JSONFormatter(style: formatterStyle) }
        // A large sorted object is written here as it is rewritten, a megabyte at a time.
        var writeFailure: AFError?
        // A slice at a time (the first megabyte comes at once, after its validation), so the
        // output waiting in the formatter's buffer stays small enough to stay in the cache
        // and the buffer does not grow (and copy itself) to several times the slice.
        var offset = 0
        repeat {
            let end = min(input.count, offset + Self.formatSlice)
            do {
                try formatter?.feed(UnsafeRawBufferPointer(rebasing: input[offset..<end])) { pending in
                    guard writeFailure == nil else { return }
                    do throws(AFError) { try out.write(pending) } catch { writeFailure = error }
                }
            } catch {
                failed = true
            }
            if let writeFailure { throw writeFailure }
            // Straight from the formatter's buffer: no copy of the output into an array first.
            try formatter?.takeOutput { (formatted: UnsafeRawBufferPointer) throws(AFError) in try out.write(formatted) }
            offset = end
        } while offset < input.count && !failed
        if failed {
            fellBack = true
            // The failing token to the end of its slice, then the slices not given.
            try writeAsReceived((formatter?.unformattedTail ?? []) + input[offset...], to: out)
        }
    }

    /// The next chunk of a text body. A NUL makes the body binary after all, as curl and
    /// HTTPie check every chunk: a first chunk of text (a few bytes read with the head) let
    /// hundreds of kilobytes of escaped binary onto the terminal. What was shown stays; the
    /// note follows it.
    private func writeTextChunk(_ bytes: UnsafeRawBufferPointer, to out: OutputChannel) throws(AFError) {
        if bytes.contains(0), !decoder.settle(on: bytes) {
            mode = .binary
            return
        }
        try writeText(decoder.decode(bytes), to: out)
    }

    private func writeText(_ text: String, to out: OutputChannel) throws(AFError) {
        guard !text.isEmpty else { return }
        lastByte = text.utf8.last ?? lastByte
        try out.write(TerminalText.escaped(text, highlight: style.theme?.escape ?? ""))
    }

    private func writeAsReceived(_ bytes: [UInt8], to out: OutputChannel) throws(AFError) {
        if style.escapes {
            shownAsText = true
            try writeText(jsonTextDecoder.decode(bytes), to: out)
        } else {
            try out.write(bytes)
        }
    }

    /// An anti-XSSI prefix, or the junk taken for one (anything before the first `{` or `[`):
    /// escaped for reading like any server text, since it can hold control characters (they
    /// reached the terminal raw, an escape sequence in them obeyed); into a pipe, as it came.
    private func writePrefix(_ prefix: [UInt8], to out: OutputChannel) throws(AFError) {
        guard style.escapes else { return try out.write(prefix) }
        try out.write(TerminalText.escaped(String(decoding: prefix, as: UTF8.self), highlight: style.theme?.escape ?? ""))
    }

    /// The anti-hijacking prefixes servers put before JSON (HTTPie recognises the same).
    private static let xssiPrefixes: [[UInt8]] = [")]}',", ")]}'", "while(1);", "for(;;);"].map { Array($0.utf8) }
    private static let longestXSSIPrefix = xssiPrefixes.map(\.count).max() ?? 0

    /// The most bytes of junk before the first `{` or `[` that are taken for a prefix.
    static let xssiLimit = 1024

    /// Splits an anti-XSSI prefix (`)]}',`, `)]}'`, `while(1);`, `for(;;);`, or other text
    /// before the first `{` or `[` that cannot start JSON) and the whitespace after it from the
    /// start of a body; the prefix is shown as it came and the rest is formatted.
    static func splitXSSI(_ body: [UInt8]) -> (prefix: [UInt8], json: ArraySlice<UInt8>) {
        var end = 0
        if let marker = xssiPrefixes.first(where: { body.starts(with: $0) }) {
            end = marker.count
        } else if let first = body.first(where: { $0 != 32 && $0 != 10 && $0 != 13 && $0 != 9 }),
                  !"{[\"-0123456789tfn".utf8.contains(first),
                  let brace = body.prefix(xssiLimit).firstIndex(where: { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[") })
        {
            end = brace
        } else {
            return ([], body[...])
        }
        while end < body.count, body[end] == 10 || body[end] == 13 || body[end] == 32 || body[end] == 9 { end += 1 }
        return (Array(body[..<end]), body[end...])
    }
}
