/// Re-indents (and optionally colours) JSON token by token, without converting a single
/// value: numbers, escapes, key order and duplicate keys come out exactly as they went in.
///
/// It streams: memory holds the current token and one byte per open container. With
/// `sortKeys`, objects must be seen whole, so the document is collected first.
struct JSONFormatter {
    struct Style: Sendable {
        var indent = 4
        var theme: Theme?
        var sortKeys = false
        /// Accept several top-level values (NDJSON), each on its own lines.
        var multipleValues = false
        /// Keep the original layout and only add colours.
        var colorsOnly = false
    }

    let style: Style
    private var scanner = JSONScanner()
    private var depth = 0
    /// An opening bracket not yet written, so `{}` and `[]` stay on one line.
    private var pendingOpen: UInt8?
    private var valuesWritten = 0
    private var collector: [(JSONTokenKind, [UInt8], Bool)]?

    init(style: Style) {
        self.style = style
        scanner.allowsMultipleValues = style.multipleValues
        scanner.reportsWhitespace = style.colorsOnly
        if style.sortKeys, !style.colorsOnly { collector = [] }
    }

    /// Formats the next bytes of input, appending output to `out`.
    mutating func feed(_ bytes: some Collection<UInt8>, into out: inout [UInt8]) throws(JSONSyntaxError) {
        var tokens: [(JSONTokenKind, [UInt8], Bool)] = []
        try scanner.feed(bytes) { kind, token, isKey in tokens.append((kind, token, isKey)) }
        consume(tokens, into: &out)
    }

    /// Ends the input and writes what is left, with a final newline.
    mutating func finish(into out: inout [UInt8]) throws(JSONSyntaxError) {
        var tokens: [(JSONTokenKind, [UInt8], Bool)] = []
        try scanner.finish { kind, token, isKey in tokens.append((kind, token, isKey)) }
        consume(tokens, into: &out)
        if let collected = collector {
            collector = nil
            for (kind, token, isKey) in Self.sortedTokens(collected) { emit(kind, token, isKey, into: &out) }
        }
        if valuesWritten > 0, !style.colorsOnly { out.append(10) }
    }

    /// Bytes consumed so far.
    var consumed: Int { scanner.offset }

    /// The bytes of a token that has begun but not ended (shown as they came when the
    /// input turns out to be invalid).
    var partialToken: [UInt8] { scanner.partialToken }

    private mutating func consume(_ tokens: [(JSONTokenKind, [UInt8], Bool)], into out: inout [UInt8]) {
        if collector != nil {
            collector?.append(contentsOf: tokens)
            return
        }
        for (kind, token, isKey) in tokens { emit(kind, token, isKey, into: &out) }
    }

    private mutating func emit(_ kind: JSONTokenKind, _ token: [UInt8], _ isKey: Bool, into out: inout [UInt8]) {
        if style.colorsOnly {
            return emitInPlace(kind, token, isKey, into: &out)
        }
        switch kind {
        case .whitespace:
            break
        case .beginObject, .beginArray:
            startValue(into: &out)
            pendingOpen = token[0]
            depth += 1
        case .endObject, .endArray:
            depth -= 1
            if let open = pendingOpen {
                pendingOpen = nil
                paint([open, token[0]], style.theme?.punctuation, into: &out)
            } else {
                newline(into: &out)
                paint(token, style.theme?.punctuation, into: &out)
            }
            if depth == 0 { valuesWritten += 1 }
        case .comma:
            paint(token, style.theme?.punctuation, into: &out)
            newline(into: &out)
        case .colon:
            paint(token, style.theme?.punctuation, into: &out)
            out.append(32)
        case .string:
            startValue(into: &out)
            paint(token, isKey ? style.theme?.key : style.theme?.string, into: &out)
            if depth == 0 { valuesWritten += 1 }
        case .number:
            startValue(into: &out)
            paint(token, style.theme?.number, into: &out)
            if depth == 0 { valuesWritten += 1 }
        case .literal:
            startValue(into: &out)
            paint(token, token.first == UInt8(ascii: "n") ? style.theme?.null : style.theme?.boolean, into: &out)
            if depth == 0 { valuesWritten += 1 }
        }
    }

    /// Colours a token and keeps the original layout.
    private func emitInPlace(_ kind: JSONTokenKind, _ token: [UInt8], _ isKey: Bool, into out: inout [UInt8]) {
        let color: String?
        switch kind {
        case .string: color = isKey ? style.theme?.key : style.theme?.string
        case .number: color = style.theme?.number
        case .literal: color = token.first == UInt8(ascii: "n") ? style.theme?.null : style.theme?.boolean
        case .whitespace: color = nil
        default: color = style.theme?.punctuation
        }
        paint(token, color, into: &out)
    }

    /// Writes a pending opening bracket, and separates top-level values.
    private mutating func startValue(into out: inout [UInt8]) {
        if let open = pendingOpen {
            pendingOpen = nil
            paint([open], style.theme?.punctuation, into: &out)
            newline(into: &out)
        } else if depth == 0, valuesWritten > 0 {
            out.append(10)
        }
    }

    private func newline(into out: inout [UInt8]) {
        out.append(10)
        out.append(contentsOf: repeatElement(32, count: depth * style.indent))
    }

    private func paint(_ token: [UInt8], _ color: String?, into out: inout [UInt8]) {
        guard let color, !color.isEmpty else {
            out.append(contentsOf: token)
            return
        }
        out.append(contentsOf: color.utf8)
        out.append(contentsOf: token)
        out.append(contentsOf: Theme.reset.utf8)
    }

    // MARK: Sorting keys

    /// A value as a token range; objects hold their members for sorting.
    private indirect enum Tree {
        case scalar(JSONTokenKind, [UInt8])
        case object([(key: [UInt8], value: Tree)])
        case array([Tree])
    }

    private static func sortedTokens(_ tokens: [(JSONTokenKind, [UInt8], Bool)]) -> [(JSONTokenKind, [UInt8], Bool)] {
        var index = 0
        var out: [(JSONTokenKind, [UInt8], Bool)] = []
        while index < tokens.count {
            let tree = parse(tokens, &index)
            write(tree, into: &out)
        }
        return out
    }

    private static func parse(_ tokens: [(JSONTokenKind, [UInt8], Bool)], _ index: inout Int) -> Tree {
        let (kind, token, _) = tokens[index]
        index += 1
        switch kind {
        case .beginObject:
            var members: [(key: [UInt8], value: Tree)] = []
            while index < tokens.count, tokens[index].0 != .endObject {
                if tokens[index].0 == .comma { index += 1; continue }
                let key = tokens[index].1
                index += 2
                members.append((key, parse(tokens, &index)))
            }
            index += 1
            return .object(members)
        case .beginArray:
            var items: [Tree] = []
            while index < tokens.count, tokens[index].0 != .endArray {
                if tokens[index].0 == .comma { index += 1; continue }
                items.append(parse(tokens, &index))
            }
            index += 1
            return .array(items)
        default:
            return .scalar(kind, token)
        }
    }

    private static func write(_ tree: Tree, into out: inout [(JSONTokenKind, [UInt8], Bool)]) {
        switch tree {
        case .scalar(let kind, let token):
            out.append((kind, token, false))
        case .object(let members):
            out.append((.beginObject, [UInt8(ascii: "{")], false))
            let sorted = members.enumerated().sorted { lhs, rhs in
                lhs.element.key == rhs.element.key ? lhs.offset < rhs.offset : lhs.element.key.lexicographicallyPrecedes(rhs.element.key)
            }
            for (position, member) in sorted.enumerated() {
                if position > 0 { out.append((.comma, [UInt8(ascii: ",")], false)) }
                out.append((.string, member.element.key, true))
                out.append((.colon, [UInt8(ascii: ":")], false))
                write(member.element.value, into: &out)
            }
            out.append((.endObject, [UInt8(ascii: "}")], false))
        case .array(let items):
            out.append((.beginArray, [UInt8(ascii: "[")], false))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append((.comma, [UInt8(ascii: ",")], false)) }
                write(item, into: &out)
            }
            out.append((.endArray, [UInt8(ascii: "]")], false))
        }
    }
}
