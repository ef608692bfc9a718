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

    /// The tokens of `text`, or nil when it is not well-formed enough to format.
    static func tokenize(_ text: String) -> [Token]? {
        var tokens: [Token] = []
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func starts(_ prefix: String, at position: Int) -> Bool {
            let marker = Array(prefix.unicodeScalars)
            guard position + marker.count <= scalars.count else { return false }
            return Array(scalars[position..<(position + marker.count)]) == marker
        }
        func find(_ terminator: String, from position: Int) -> Int? {
            var at = position
            while at < scalars.count {
                if starts(terminator, at: at) { return at + terminator.unicodeScalars.count }
                at += 1
            }
            return nil
        }
        func slice(_ from: Int, _ to: Int) -> String { String(String.UnicodeScalarView(scalars[from..<to])) }
        while index < scalars.count {
            if scalars[index] != "<" {
                var end = index
                while end < scalars.count, scalars[end] != "<" { end += 1 }
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
                guard let at = closingBracket(scalars, from: index + 2, brackets: true) else { return nil }
                tokens.append(.other(slice(index, at + 1)))
                index = at + 1
            } else {
                guard let at = closingBracket(scalars, from: index + 1, brackets: false) else { return nil }
                let tag = slice(index, at + 1)
                let closing = scalars[index + 1] == "/"
                let nameStart = closing ? index + 2 : index + 1
                var nameEnd = nameStart
                while nameEnd < at, !" \t\r\n/>".unicodeScalars.contains(scalars[nameEnd]) { nameEnd += 1 }
                let name = slice(nameStart, nameEnd)
                guard !name.isEmpty else { return nil }
                if closing {
                    tokens.append(.end(name, tag))
                } else if scalars[at - 1] == "/" {
                    tokens.append(.empty(tag))
                } else {
                    tokens.append(.start(name, tag))
                }
                index = at + 1
            }
        }
        return tokens
    }

    /// The position of the `>` that ends a construct starting before `start`, skipping quoted
    /// values (and, for a doctype, a bracketed internal subset); nil when the text ends first
    /// or, in a tag, a `<` comes first.
    private static func closingBracket(_ scalars: [Unicode.Scalar], from start: Int, brackets: Bool) -> Int? {
        var at = start
        var depth = 0
        var quote: Unicode.Scalar?
        while at < scalars.count {
            let scalar = scalars[at]
            if let open = quote {
                if scalar == open { quote = nil }
            } else if scalar == "\"" || scalar == "'" {
                quote = scalar
            } else if brackets, scalar == "[" {
                depth += 1
            } else if brackets, scalar == "]" {
                depth -= 1
            } else if scalar == ">", depth <= 0 {
                return at
            } else if !brackets, scalar == "<" {
                return nil
            }
            at += 1
        }
        return nil
    }

    /// `text` indented (elements one per line, text-only elements on one line), or nil when
    /// its tags do not nest.
    static func indent(_ text: String, by width: Int, colors: Colors?, escape: (String) -> String) -> String? {
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
        var out = ""
        var depth = 0
        var index = 0
        let meaningful = tokens.filter { if case .text(let value) = $0 { return !value.allSatisfy(\.isWhitespace) } else { return true } }
        func pad() -> String { String(repeating: " ", count: min(depth, 64) * width) }
        while index < meaningful.count {
            let token = meaningful[index]
            switch token {
            case .start(let name, let tag):
                if index + 2 < meaningful.count, case .text(let value) = meaningful[index + 1], case .end(let closing, let end) = meaningful[index + 2], closing == name {
                    out += pad() + paint(tag, colors, escape) + escape(value) + paint(end, colors, escape) + "\n"
                    index += 3
                    continue
                }
                if index + 1 < meaningful.count, case .end(let closing, let end) = meaningful[index + 1], closing == name {
                    out += pad() + paint(tag, colors, escape) + paint(end, colors, escape) + "\n"
                    index += 2
                    continue
                }
                out += pad() + paint(tag, colors, escape) + "\n"
                depth += 1
            case .end(_, let tag):
                depth -= 1
                out += pad() + paint(tag, colors, escape) + "\n"
            case .empty(let tag):
                out += pad() + paint(tag, colors, escape) + "\n"
            case .other(let value):
                out += pad() + paintOther(value, colors, escape: escape) + "\n"
            case .text(let value):
                out += pad() + escape(value.trimmingCharacters(in: " \t\r\n")) + "\n"
            }
            index += 1
        }
        return out
    }

    /// `text` coloured in place (HTML, or XML that is only coloured), layout untouched; nil
    /// when it cannot be tokenized.
    static func colour(_ text: String, colors: Colors, escape: (String) -> String) -> String? {
        guard let tokens = tokenize(text) else { return nil }
        var out = ""
        for token in tokens {
            switch token {
            case .start(_, let tag), .end(_, let tag), .empty(let tag): out += paint(tag, colors, escape)
            case .other(let value): out += paintOther(value, colors, escape: escape)
            case .text(let value): out += escape(value)
            }
        }
        return out
    }

    /// A tag in the tag colour, its quoted attribute values in the value colour.
    private static func paint(_ tag: String, _ colors: Colors?, _ escape: (String) -> String) -> String {
        guard let colors else { return escape(tag) }
        var out = ""
        var quote: Character?
        var segment = ""
        func flush(_ color: String) {
            if !segment.isEmpty { out += Theme.paint(escape(segment), color) }
            segment = ""
        }
        for character in tag {
            if let open = quote {
                segment.append(character)
                if character == open {
                    flush(colors.value)
                    quote = nil
                }
            } else if character == "\"" || character == "'" {
                flush(colors.tag)
                segment.append(character)
                quote = character
            } else {
                segment.append(character)
            }
        }
        flush(quote == nil ? colors.tag : colors.value)
        return out
    }

    private static func paintOther(_ value: String, _ colors: Colors?, escape: (String) -> String) -> String {
        guard let colors else { return escape(value) }
        return Theme.paint(escape(value), colors.comment)
    }
}
