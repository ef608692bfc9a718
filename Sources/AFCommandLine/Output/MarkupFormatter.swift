/// XML indentation and XML/HTML colouring for display, token by token.
///
/// The tokenizer knows the shapes of markup (tags, comments, CDATA, processing instructions,
/// doctypes with internal subsets) and nothing else: no DTD is read and no entity expanded,
/// so neither external entities nor "billion laughs" can do anything. Every token is kept
/// as written; only whitespace between tags is replaced by indentation. A document whose
/// tags do not nest, or that ends inside a construct, is shown as it came.
enum MarkupFormatter {
    enum Token: Equatable {
        /// `<name ...>`, with its name.
        case start(String, String)
        /// `</name>`, with its name.
        case end(String, String)
        /// `<name .../>`.
        case empty(String)
        /// Comments, CDATA, `<?...?>`, `<!DOCTYPE ...>`.
        case other(String)
        case text(String)
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

    /// The tokens of `text`, or nil when it is not well-formed enough to format. Read as
    /// UTF-8 bytes: every delimiter of markup is ASCII, and no byte of a longer sequence is.
    static func tokenize(_ text: String) -> [Token]? {
        var tokens: [Token] = []
        let bytes = Array(text.utf8)
        let count = bytes.count
        var index = 0
        func starts(_ marker: StaticString, at position: Int) -> Bool {
            let length = marker.utf8CodeUnitCount
            guard position + length <= count else { return false }
            return marker.withUTF8Buffer { marker in
                for offset in 0..<length where bytes[position + offset] != marker[offset] { return false }
                return true
            }
        }
        func find(_ terminator: StaticString, from position: Int) -> Int? {
            var at = position
            while at < count {
                if starts(terminator, at: at) { return at + terminator.utf8CodeUnitCount }
                at += 1
            }
            return nil
        }
        func slice(_ from: Int, _ to: Int) -> String { String(decoding: bytes[from..<to], as: UTF8.self) }
        let lessThan = UInt8(ascii: "<")
        while index < count {
            if bytes[index] != lessThan {
                let end = bytes[index...].firstIndex(of: lessThan) ?? count
                tokens.append(.text(slice(index, end)))
                index = end
                continue
            }
            if starts("<!--", at: index) {
                guard let end = find("-->", from: index + 4) else { return nil }
                tokens.append(.other(slice(index, end)))
                index = end
            } else if starts("<![CDATA[", at: index) {
                guard let end = find("]]>", from: index + 9) else { return nil }
                tokens.append(.other(slice(index, end)))
                index = end
            } else if starts("<?", at: index) {
                guard let end = find("?>", from: index + 2) else { return nil }
                tokens.append(.other(slice(index, end)))
                index = end
            } else if starts("<!", at: index) {
                // A doctype, possibly with an internal subset in brackets: kept, never read.
                guard let at = closingBracket(bytes, from: index + 2, brackets: true) else { return nil }
                tokens.append(.other(slice(index, at + 1)))
                index = at + 1
            } else {
                guard let at = closingBracket(bytes, from: index + 1, brackets: false) else { return nil }
                let tag = slice(index, at + 1)
                let closing = bytes[index + 1] == UInt8(ascii: "/")
                let nameStart = closing ? index + 2 : index + 1
                var nameEnd = nameStart
                while nameEnd < at, !isNameEnd(bytes[nameEnd]) { nameEnd += 1 }
                let name = slice(nameStart, nameEnd)
                guard !name.isEmpty else { return nil }
                if closing {
                    tokens.append(.end(name, tag))
                } else if bytes[at - 1] == UInt8(ascii: "/") {
                    tokens.append(.empty(tag))
                } else {
                    tokens.append(.start(name, tag))
                }
                index = at + 1
            }
        }
        return tokens
    }

    /// Whether `byte` ends a tag's name: whitespace, `/` or `>`.
    private static func isNameEnd(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">")
    }

    /// The position of the `>` that ends a construct starting before `start`, skipping quoted
    /// values (and, for a doctype, a bracketed internal subset); nil when the text ends first
    /// or, in a tag, a `<` comes first.
    private static func closingBracket(_ bytes: [UInt8], from start: Int, brackets: Bool) -> Int? {
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

    /// `text` indented (elements one per line, text-only elements on one line), or nil when
    /// its tags do not nest.
    static func indent(_ text: String, by width: Int, colors: Colors?, escape: @escaping (String) -> String) -> String? {
        guard let tokens = tokenize(text) else { return nil }
        var stack: [String] = []
        for token in tokens {
            switch token {
            case .start(let name, _): stack.append(name)
            case .end(let name, _):
                guard stack.last == name else { return nil }
                stack.removeLast()
            default: break
            }
        }
        guard stack.isEmpty else { return nil }
        var out = Output(colors: colors, escape: escape, capacity: text.utf8.count)
        var depth = 0
        var index = 0
        let meaningful = tokens.filter { if case .text(let value) = $0 { return !value.allSatisfy(\.isWhitespace) } else { return true } }
        func pad() { out.bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: min(depth, 64) * width)) }
        while index < meaningful.count {
            let token = meaningful[index]
            switch token {
            case .start(let name, let tag):
                if index + 2 < meaningful.count, case .text(let value) = meaningful[index + 1], case .end(let closing, let end) = meaningful[index + 2], closing == name {
                    pad()
                    out.tag(tag)
                    out.text(value)
                    out.tag(end)
                    out.newLine()
                    index += 3
                    continue
                }
                if index + 1 < meaningful.count, case .end(let closing, let end) = meaningful[index + 1], closing == name {
                    pad()
                    out.tag(tag)
                    out.tag(end)
                    out.newLine()
                    index += 2
                    continue
                }
                pad()
                out.tag(tag)
                out.newLine()
                depth += 1
            case .end(_, let tag):
                depth -= 1
                pad()
                out.tag(tag)
                out.newLine()
            case .empty(let tag):
                pad()
                out.tag(tag)
                out.newLine()
            case .other(let value):
                pad()
                out.other(value)
                out.newLine()
            case .text(let value):
                pad()
                out.text(value.trimmingCharacters(in: " \t\r\n"))
                out.newLine()
            }
            index += 1
        }
        return out.string
    }

    /// `text` coloured in place (HTML, or XML that is only coloured), layout untouched; nil
    /// when it cannot be tokenized.
    static func colour(_ text: String, colors: Colors, escape: @escaping (String) -> String) -> String? {
        guard let tokens = tokenize(text) else { return nil }
        var out = Output(colors: colors, escape: escape, capacity: text.utf8.count)
        for token in tokens {
            switch token {
            case .start(_, let tag), .end(_, let tag), .empty(let tag): out.tag(tag)
            case .other(let value): out.other(value)
            case .text(let value): out.text(value)
            }
        }
        return out.string
    }

    /// What `indent` and `colour` write, gathered as UTF-8 bytes (appending to a `String`
    /// piece by piece cost more than tokenizing).
    private struct Output {
        let colors: Colors?
        let escape: (String) -> String
        var bytes: [UInt8] = []

        init(colors: Colors?, escape: @escaping (String) -> String, capacity: Int) {
            self.colors = colors
            self.escape = escape
            bytes.reserveCapacity(capacity + capacity / 4)
        }

        var string: String { String(decoding: bytes, as: UTF8.self) }

        mutating func newLine() { bytes.append(10) }

        /// Text, escaped.
        mutating func text(_ value: String) { bytes.append(contentsOf: escape(value).utf8) }

        /// Comments, CDATA, processing instructions and doctypes, in the comment colour.
        mutating func other(_ value: String) { painted(escape(value), colors?.comment ?? "") }

        /// A tag in the tag colour, its quoted attribute values in the value colour.
        mutating func tag(_ tag: String) {
            guard let colors else { return text(tag) }
            var tag = tag
            tag.withUTF8 { bytes in
                var quote: UInt8?
                var segmentStart = 0
                for (index, byte) in bytes.enumerated() {
                    if let open = quote {
                        if byte == open {
                            segment(bytes[segmentStart...index], colors.value)
                            segmentStart = index + 1
                            quote = nil
                        }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        segment(bytes[segmentStart..<index], colors.tag)
                        segmentStart = index
                        quote = byte
                    }
                }
                segment(bytes[segmentStart...], quote == nil ? colors.tag : colors.value)
            }
        }

        /// Part of a tag, cut at its ASCII quotes (so on a boundary of its characters' bytes).
        private mutating func segment(_ part: Slice<UnsafeBufferPointer<UInt8>>, _ color: String) {
            guard !part.isEmpty else { return }
            painted(escape(String(decoding: part, as: UTF8.self)), color)
        }

        private mutating func painted(_ value: String, _ color: String) {
            if color.isEmpty { return bytes.append(contentsOf: value.utf8) }
            bytes.append(contentsOf: color.utf8)
            bytes.append(contentsOf: value.utf8)
            bytes.append(contentsOf: Theme.reset.utf8)
        }
    }
}
