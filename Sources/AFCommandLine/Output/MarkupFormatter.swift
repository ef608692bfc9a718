import AFEngine

/// XML indentation and XML/HTML colouring for display, token by token.
///
/// The tokenizer knows the shapes of markup (tags, comments, CDATA, processing instructions,
/// doctypes with internal subsets) and nothing else: no DTD is read and no entity expanded,
/// so neither external entities nor "billion laughs" can do anything. Every token is kept
/// as written; only whitespace between tags is replaced by indentation. A document whose
/// tags do not nest, or that ends inside a construct, is shown as it came.
enum MarkupFormatter {
    /// A token: where it lies in the document's bytes, and for a tag where its name does.
    struct Token {
        enum Kind {
            /// `<name ...>`.
            case start
            /// `</name>`.
            case end
            /// `<name .../>`.
            case empty
            /// Comments, CDATA, `<?...?>`, `<!DOCTYPE ...>`.
            case other
            case text
        }

        var kind: Kind
        var range: Range<Int>
        /// The tag's name (start and end tags only).
        var name: Range<Int> = 0..<0
    }

    /// Colours: tags (names and attribute names), attribute values, comments.
    struct Colors {
        var tag: String
        var value: String
        var comment: String

        init(_ theme: Theme) {
            tag = theme.key
            value = theme.string
            comment = theme.note
        }
    }

    /// Where output goes, a block at a time.
    typealias Sink = (UnsafeRawBufferPointer) throws(AFError) -> Void

    /// Reads the tokens of a document one at a time, from its UTF-8 bytes: every delimiter of
    /// markup is ASCII, and no byte of a longer sequence is. Nothing is kept but the
    /// position, so a document is read twice (once to see that it can be formatted, once to
    /// write it) rather than held a second time as tokens.
    struct Tokenizer {
        let bytes: UnsafeBufferPointer<UInt8>
        private(set) var index = 0
        /// The document ended inside a construct, or a tag could not be read.
        private(set) var malformed = false

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        /// The next token; nil at the end or when the rest cannot be read (`malformed`).
        mutating func next() -> Token? {
            guard index < bytes.count, !malformed else { return nil }
            let start = index
            let lessThan = UInt8(ascii: "<")
            if bytes[index] != lessThan {
                var end = index + 1
                while end < bytes.count, bytes[end] != lessThan { end += 1 }
                index = end
                return Token(kind: .text, range: start..<end)
            }
            var end: Int?
            var kind = Token.Kind.other
            var name = 0..<0
            if starts("<!--", at: index) {
                end = find("-->", from: index + 4)
            } else if starts("<![CDATA[", at: index) {
                end = find("]]>", from: index + 9)
            } else if starts("<?", at: index) {
                end = find("?>", from: index + 2)
            } else if starts("<!", at: index) {
                // A doctype, possibly with an internal subset in brackets: kept, never read.
                end = closingBracket(from: index + 2, brackets: true).map { $0 + 1 }
            } else if let at = closingBracket(from: index + 1, brackets: false) {
                let closing = bytes[index + 1] == UInt8(ascii: "/")
                let nameStart = closing ? index + 2 : index + 1
                var nameEnd = nameStart
                while nameEnd < at, !Self.isNameEnd(bytes[nameEnd]) { nameEnd += 1 }
                if nameEnd > nameStart {
                    name = nameStart..<nameEnd
                    kind = closing ? .end : bytes[at - 1] == UInt8(ascii: "/") ? .empty : .start
                    end = at + 1
                }
            }
            guard let end else {
                malformed = true
                return nil
            }
            index = end
            return Token(kind: kind, range: start..<end, name: name)
        }

        private func starts(_ marker: StaticString, at position: Int) -> Bool {
            let length = marker.utf8CodeUnitCount
            guard position + length <= bytes.count else { return false }
            return marker.withUTF8Buffer { marker in
                for offset in 0..<length where bytes[position + offset] != marker[offset] { return false }
                return true
            }
        }

        private func find(_ terminator: StaticString, from position: Int) -> Int? {
            var at = position
            while at < bytes.count {
                if starts(terminator, at: at) { return at + terminator.utf8CodeUnitCount }
                at += 1
            }
            return nil
        }

        /// Whether `byte` ends a tag's name: whitespace, `/` or `>`.
        private static func isNameEnd(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">")
        }

        /// The position of the `>` that ends a construct starting before `start`, skipping
        /// quoted values (and, for a doctype, a bracketed internal subset); nil when the text
        /// ends first or, in a tag, a `<` comes first.
        private func closingBracket(from start: Int, brackets: Bool) -> Int? {
            var at = start
            var depth = 0
            var quote: UInt8?
            while at < bytes.count {
                let byte = bytes[at]
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if brackets, byte == UInt8(ascii: "[") {
                    depth += 1
                } else if brackets, byte == UInt8(ascii: "]") {
                    depth -= 1
                } else if byte == UInt8(ascii: ">"), depth <= 0 {
                    return at
                } else if !brackets, byte == UInt8(ascii: "<") {
                    return nil
                }
                at += 1
            }
            return nil
        }
    }

    /// Whether the whole document can be read as tokens and, for indenting, whether its tags
    /// nest (an end tag closes the innermost open one, and none stays open).
    private static func readable(_ bytes: UnsafeBufferPointer<UInt8>, nesting: Bool) -> Bool {
        var tokens = Tokenizer(bytes)
        var open: [Range<Int>] = []
        while let token = tokens.next() {
            guard nesting else { continue }
            switch token.kind {
            case .start: open.append(token.name)
            case .end:
                guard let innermost = open.popLast(), bytes[innermost].elementsEqual(bytes[token.name]) else { return false }
            default: break
            }
        }
        return !tokens.malformed && open.isEmpty
    }

    /// Writes `bytes` indented (elements one per line, text-only elements on one line) to
    /// `sink`; false, with nothing written, when its tags do not nest.
    static func indent(_ bytes: UnsafeBufferPointer<UInt8>, by width: Int, colors: Colors?, escapes: Bool, into sink: @escaping Sink) throws(AFError) -> Bool {
        guard readable(bytes, nesting: true) else { return false }
        var out = Output(bytes, colors: colors, escapes: escapes, sink: sink)
        var tokens = MeaningfulTokens(Tokenizer(bytes))
        var depth = 0
        // One token a line, indented by its depth; an element of text alone, or empty, on one.
        while let token = tokens.next() {
            if token.kind == .end { depth -= 1 }
            out.spaces(min(depth, 64) * width)
            switch token.kind {
            case .start:
                try out.tag(token.range)
                var ahead = tokens
                var inner = ahead.next()
                let text = inner?.kind == .text ? inner : nil
                if text != nil { inner = ahead.next() }
                if let end = inner, end.kind == .end, bytes[end.name].elementsEqual(bytes[token.name]) {
                    if let text { try out.text(text.range, trimmed: false) }
                    try out.tag(end.range)
                    tokens = ahead
                } else {
                    depth += 1
                }
            case .end, .empty: try out.tag(token.range)
            case .other: try out.other(token.range)
            case .text: try out.text(token.range)
            }
            try out.newLine()
        }
        try out.flush()
        return true
    }

    /// Writes `bytes` coloured in place (HTML, or XML that is only coloured), layout
    /// untouched, to `sink`; false, with nothing written, when it cannot be tokenized.
    static func colour(_ bytes: UnsafeBufferPointer<UInt8>, colors: Colors, escapes: Bool, into sink: @escaping Sink) throws(AFError) -> Bool {
        guard readable(bytes, nesting: false) else { return false }
        var out = Output(bytes, colors: colors, escapes: escapes, sink: sink)
        var tokens = Tokenizer(bytes)
        while let token = tokens.next() {
            switch token.kind {
            case .start, .end, .empty: try out.tag(token.range)
            case .other: try out.other(token.range)
            case .text: try out.text(token.range, trimmed: false)
            }
        }
        try out.flush()
        return true
    }

    /// `text` indented, or nil when its tags do not nest (for tests and fuzzing).
    static func indent(_ text: String, by width: Int, colors: Colors?, escapes: Bool = false) -> String? {
        collected(text) { (bytes, sink) throws(AFError) in try indent(bytes, by: width, colors: colors, escapes: escapes, into: sink) }
    }

    /// `text` coloured, or nil when it cannot be tokenized (for tests and fuzzing).
    static func colour(_ text: String, colors: Colors, escapes: Bool = false) -> String? {
        collected(text) { (bytes, sink) throws(AFError) in try colour(bytes, colors: colors, escapes: escapes, into: sink) }
    }

    private static func collected(_ text: String, _ write: (UnsafeBufferPointer<UInt8>, @escaping Sink) throws(AFError) -> Bool) -> String? {
        var text = text
        var collected: [UInt8] = []
        let written = text.withUTF8 { bytes in
            (try? write(bytes) { (block: UnsafeRawBufferPointer) throws(AFError) in collected.append(contentsOf: block) }) ?? false
        }
        return written ? String(decoding: collected, as: UTF8.self) : nil
    }

    /// The tokens of a document without its text of nothing but XML whitespace (space, tab,
    /// CR, LF) between tags, which indentation replaces.
    private struct MeaningfulTokens {
        var tokens: Tokenizer

        init(_ tokens: Tokenizer) {
            self.tokens = tokens
        }

        mutating func next() -> Token? {
            while let token = tokens.next() {
                if token.kind == .text, Output.trim(tokens.bytes, token.range).isEmpty { continue }
                return token
            }
            return nil
        }
    }

    /// What `indent` and `colour` write, gathered as UTF-8 bytes and handed to the sink in
    /// blocks of 64 KiB (the whole formatted document was held as a second copy, and a
    /// third as a string).
    private struct Output {
        let document: UnsafeBufferPointer<UInt8>
        let colors: Colors?
        let escapes: Bool
        let sink: Sink
        var bytes: [UInt8] = []
        static let block = 64 << 10

        init(_ document: UnsafeBufferPointer<UInt8>, colors: Colors?, escapes: Bool, sink: @escaping Sink) {
            self.document = document
            self.colors = colors
            self.escapes = escapes
            self.sink = sink
            bytes.reserveCapacity(Self.block + 4096)
        }

        /// `range` without the XML whitespace at either end.
        static func trim(_ document: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
            func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            var lower = range.lowerBound
            var upper = range.upperBound
            while lower < upper, blank(document[lower]) { lower += 1 }
            while upper > lower, blank(document[upper - 1]) { upper -= 1 }
            return lower..<upper
        }

        mutating func flush() throws(AFError) {
            guard !bytes.isEmpty else { return }
            try bytes.withBytes { (block: UnsafeRawBufferPointer) throws(AFError) in try sink(block) }
            bytes.removeAll(keepingCapacity: true)
        }

        private mutating func flushIfFull() throws(AFError) {
            if bytes.count >= Self.block { try flush() }
        }

        mutating func newLine() throws(AFError) {
            bytes.append(10)
            try flushIfFull()
        }

        mutating func spaces(_ count: Int) {
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count))
        }

        /// Text, escaped; when `trimmed`, without XML whitespace at either end.
        mutating func text(_ range: Range<Int>, trimmed: Bool = true) throws(AFError) {
            shown(trimmed ? Self.trim(document, range) : range)
            try flushIfFull()
        }

        /// Comments, CDATA, processing instructions and doctypes, in the comment colour.
        mutating func other(_ range: Range<Int>) throws(AFError) {
            painted(range, colors?.comment ?? "")
            try flushIfFull()
        }

        /// A tag in the tag colour, its quoted attribute values in the value colour: cut at
        /// its ASCII quotes, so on a boundary of its characters' bytes.
        mutating func tag(_ range: Range<Int>) throws(AFError) {
            guard let colors else { return try text(range, trimmed: false) }
            var quote: UInt8?
            var segmentStart = range.lowerBound
            for index in range {
                let byte = document[index]
                if let open = quote {
                    if byte == open {
                        painted(segmentStart..<index + 1, colors.value)
                        segmentStart = index + 1
                        quote = nil
                    }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    painted(segmentStart..<index, colors.tag)
                    segmentStart = index
                    quote = byte
                }
            }
            painted(segmentStart..<range.upperBound, quote == nil ? colors.tag : colors.value)
            try flushIfFull()
        }

        private mutating func painted(_ range: Range<Int>, _ color: String) {
            guard !range.isEmpty else { return }
            if color.isEmpty { return shown(range) }
            bytes.append(contentsOf: color.utf8)
            shown(range)
            bytes.append(contentsOf: Theme.reset.utf8)
        }

        /// The bytes of `range`, with control characters escaped when asked.
        private mutating func shown(_ range: Range<Int>) {
            let part = UnsafeBufferPointer(rebasing: document[range])
            if escapes, TerminalText.mayNeedEscapes(part) {
                bytes.append(contentsOf: TerminalText.escaped(String(decoding: part, as: UTF8.self)).utf8)
            } else {
                bytes.append(contentsOf: part)
            }
        }
    }
}
