import AFEngine

/// A parsed nested key such as `user[tags][]` (HTTPie's nested JSON syntax).
enum NestedPath {
    enum Segment: Sendable, Equatable {
        case key(String)
        case index(Int)
        case append
    }

    /// The segments of `key`. A key without brackets is one `.key`; `[]` appends; `[N]`
    /// indexes; `\[`, `\]` and `\\` are literal characters.
    static func parse(_ key: String, item: String) throws(CommandFailure) -> [Segment] {
        var segments: [Segment] = []
        var characters = Array(key)[...]
        let (name, sawBracket, escaped) = try take(&characters, until: "[", refusing: "]") {
            .usage("request item '\(item)': unexpected ']' in '\(key)'; write \\] for a literal bracket")
        }
        if !name.isEmpty || !sawBracket { segments.append(.key(escaped ? name : unescapedNumber(name) ?? name)) }
        guard sawBracket else { return segments }
        while true {
            let (inner, closed, escaped) = try take(&characters, until: "]", refusing: "[") {
                .usage("request item '\(item)': unexpected '[' inside brackets in '\(key)'; write \\[ for a literal bracket")
            }
            guard closed else {
                throw .usage("request item '\(item)': '[' without a matching ']' in '\(key)'; write \\[ for a literal bracket")
            }
            if inner.isEmpty {
                segments.append(.append)
            } else if !escaped, let number = unescapedNumber(inner) {
                segments.append(.key(number))
            } else if !escaped, inner.hasPrefix("-"), inner.count > 1, inner.dropFirst().allSatisfy(\.isASCIIDigit) {
                // HTTPie refuses these too, pointing at them.
                let position = key.count - characters.count - inner.count - 1
                throw .usage("request item '\(item)': negative index [\(inner)] at position \(position) of '\(key)' is not supported; use [] to append, or [\\\(inner)] for a key")
            } else if !escaped, inner.allSatisfy(\.isASCIIDigit) {
                // An index past Int's range is as much an index as one past the limit.
                guard let index = Int(inner), index < 100_000 else {
                    throw .usage("request item '\(item)': array index \(inner) is too large (at most 99999); write [\\\(inner)] for a key")
                }
                segments.append(.index(index))
            } else {
                segments.append(.key(inner))
            }
            guard segments.count <= JSONScanner.maxDepth else {
                throw .usage("request item '\(item)' nests more than \(JSONScanner.maxDepth) levels deep")
            }
            guard let next = characters.first else { return segments }
            guard next == "[" else {
                throw .usage("request item '\(item)': unexpected text after ']' in '\(key)'; nested keys look like a[b][0][]")
            }
            characters = characters.dropFirst()
        }
    }

    /// Reads up to `stop` (consumed), resolving `\[`, `\]` and `\\`; a backslash before any
    /// other character stays, as in HTTPie. Returns the text, whether `stop` was found and
    /// whether anything was escaped. An unescaped `forbidden` character is an error.
    private static func take(
        _ characters: inout ArraySlice<Character>, until stop: Character, refusing forbidden: Character,
        _ refusal: () -> CommandFailure
    ) throws(CommandFailure) -> (text: String, found: Bool, escaped: Bool) {
        var text = ""
        var escaped = false
        while let character = characters.first {
            characters = characters.dropFirst()
            if character == "\\", let next = characters.first, "[]\\".contains(next) {
                text.append(next)
                escaped = true
                characters = characters.dropFirst()
                continue
            }
            if character == stop { return (text, true, escaped) }
            if character == forbidden { throw refusal() }
            text.append(character)
        }
        return (text, false, escaped)
    }

    /// A backslash before a whole number makes it a key: `[\1]` is the key "1" where `[1]` is
    /// an index, `[\-1]` the key "-1". Only the whole segment counts (`[a\1]` keeps its
    /// backslash), and not in a segment that escapes a bracket or backslash, as in HTTPie.
    private static func unescapedNumber(_ text: String) -> String? {
        guard text.first == "\\" else { return nil }
        let number = text.dropFirst()
        let digits = number.first == "-" || number.first == "+" ? number.dropFirst() : number
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else { return nil }
        return String(number)
    }

    /// The key as a plain name: escapes resolved, brackets kept literally.
    static func literal(_ key: String) -> String {
        var out = ""
        var characters = Array(key)[...]
        while let character = characters.first {
            characters = characters.dropFirst()
            if character == "\\", let next = characters.first, "[]\\".contains(next) {
                out.append(next)
                characters = characters.dropFirst()
            } else {
                out.append(character)
            }
        }
        return out
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// Builds the JSON body from data items, keeping every value's text exactly as given.
final class NestedJSONBuilder {
    private final class Node {
        enum Kind { case object, array, leaf }
        let kind: Kind
        /// The item that created this node, for conflict messages.
        let source: String
        /// Raw JSON text of a leaf.
        var leaf = ""
        var keys: [String] = []
        var children: [String: Node] = [:]
        var items: [Node?] = []
        /// An array made by repeating a plain key (`a=1 a=2`).
        var fromRepeats = false

        init(kind: Kind, source: String) {
            self.kind = kind
            self.source = source
        }

        var describedKind: String {
            switch kind {
            case .object: return "an object"
            case .array: return "an array"
            case .leaf: return "a value"
            }
        }
    }

    private var root: Node?

    var isEmpty: Bool { root == nil }

    /// Adds a value (raw JSON text) at `key`.
    func insert(key: String, json: String, item: String) throws(CommandFailure) {
        let path = try NestedPath.parse(key, item: item)
        let leaf = Node(kind: .leaf, source: item)
        leaf.leaf = json
        let rootKind: Node.Kind
        switch path.first {
        case .append?, .index?: rootKind = .array
        default: rootKind = .object
        }
        if root == nil { root = Node(kind: rootKind, source: item) }
        guard let root else { return }
        guard root.kind == rootKind else {
            throw conflict(root.source, item, name: "the body", existing: root, wanted: rootKind)
        }
        var node = root
        for (position, segment) in path.enumerated() {
            let isLast = position == path.count - 1
            let nextKind: Node.Kind = isLast ? .leaf : {
                if case .key = path[position + 1] { return .object }
                return .array
            }()
            // Only a conflict needs the path's label: building it for every segment would make
            // deep keys quadratic.
            var label: String { Self.label(path[...position]) }
            switch segment {
            case .key(let name):
                guard node.kind == .object else { throw conflict(node.source, item, name: label, existing: node, wanted: .object) }
                if let existing = node.children[name] {
                    if isLast {
                        if existing.kind == .leaf, path.count == 1 {
                            let array = Node(kind: .array, source: existing.source)
                            array.fromRepeats = true
                            array.items = [existing, leaf]
                            node.children[name] = array
                            return
                        }
                        if existing.kind == .array, existing.fromRepeats, path.count == 1 {
                            existing.items.append(leaf)
                            return
                        }
                        throw conflict(existing.source, item, name: label, existing: existing, wanted: .leaf)
                    }
                    var existing = existing
                    if existing.kind == .leaf, let expanded = Self.expand(existing), expanded.kind == nextKind {
                        // `foo[baz]:=[1,2] foo[baz][]:=3`: a raw JSON container given earlier
                        // is extended (HTTPie's rule).
                        node.children[name] = expanded
                        existing = expanded
                    }
                    guard existing.kind == nextKind, !existing.fromRepeats else {
                        throw conflict(existing.source, item, name: label, existing: existing, wanted: nextKind)
                    }
                    node = existing
                } else {
                    let child = isLast ? leaf : Node(kind: nextKind, source: item)
                    node.keys.append(name)
                    node.children[name] = child
                    node = child
                }
            case .index(let index):
                guard node.kind == .array else { throw conflict(node.source, item, name: label, existing: node, wanted: .array) }
                while node.items.count <= index { node.items.append(nil) }
                if var existing = node.items[index] {
                    if !isLast, existing.kind == .leaf, let expanded = Self.expand(existing), expanded.kind == nextKind {
                        node.items[index] = expanded
                        existing = expanded
                    }
                    guard !isLast, existing.kind == nextKind else {
                        throw conflict(existing.source, item, name: label, existing: existing, wanted: nextKind)
                    }
                    node = existing
                } else {
                    let child = isLast ? leaf : Node(kind: nextKind, source: item)
                    node.items[index] = child
                    node = child
                }
            case .append:
                guard node.kind == .array else { throw conflict(node.source, item, name: label, existing: node, wanted: .array) }
                let child = isLast ? leaf : Node(kind: nextKind, source: item)
                node.items.append(child)
                node = child
            }
        }
    }

    /// A leaf holding a raw JSON object or array (from `:=`) as nodes, so that later items can
    /// add to it; every value keeps its exact text. Nil for scalars.
    private static func expand(_ leaf: Node) -> Node? {
        guard let first = leaf.leaf.first(where: { !$0.isWhitespace }), first == "[" || first == "{" else { return nil }
        var scanner = JSONScanner()
        var sink = CollectingSink()
        do {
            try scanner.feed(Array(leaf.leaf.utf8), into: &sink)
            try scanner.finish(into: &sink)
        } catch {
            return nil
        }
        var index = 0
        return build(sink.tokens, &index, source: leaf.source)
    }

    private static func build(_ tokens: [(kind: JSONTokenKind, bytes: [UInt8], isKey: Bool)], _ index: inout Int, source: String) -> Node {
        let token = tokens[index]
        index += 1
        switch token.kind {
        case .beginObject:
            let node = Node(kind: .object, source: source)
            while index < tokens.count, tokens[index].kind != .endObject {
                if tokens[index].kind == .comma { index += 1; continue }
                let key = JSONValue.decodeString(tokens[index].bytes)
                index += 2
                let child = build(tokens, &index, source: source)
                if node.children[key] == nil { node.keys.append(key) }
                node.children[key] = child
            }
            index += 1
            return node
        case .beginArray:
            let node = Node(kind: .array, source: source)
            while index < tokens.count, tokens[index].kind != .endArray {
                if tokens[index].kind == .comma { index += 1; continue }
                node.items.append(build(tokens, &index, source: source))
            }
            index += 1
            return node
        default:
            let node = Node(kind: .leaf, source: source)
            node.leaf = String(decoding: token.bytes, as: UTF8.self)
            return node
        }
    }

    /// The document: `{"a": 1, "b": [true]}`.
    func render() -> String {
        guard let root else { return "{}" }
        var json = JSONWriter()
        Self.render(root, into: &json)
        return json.text
    }

    private static func render(_ node: Node, into json: inout JSONWriter) {
        switch node.kind {
        case .leaf:
            json.fragment(node.leaf.utf8)
        case .object:
            json.object { json in
                for key in node.keys {
                    json.key(key)
                    if let child = node.children[key] { render(child, into: &json) } else { json.null() }
                }
            }
        case .array:
            json.array(node.items) { json, item in
                if let item { render(item, into: &json) } else { json.null() }
            }
        }
    }

    private static func label(_ path: ArraySlice<NestedPath.Segment>) -> String {
        var text = ""
        for segment in path {
            switch segment {
            case .key(let name): text += text.isEmpty ? name : "[\(name)]"
            case .index(let index): text += "[\(index)]"
            case .append: text += "[]"
            }
        }
        return text.isEmpty ? "the body" : "'\(text)'"
    }

    private func conflict(_ first: String, _ second: String, name: String, existing: Node, wanted: Node.Kind) -> CommandFailure {
        let wantedText: String
        switch wanted {
        case .object: wantedText = "an object"
        case .array: wantedText = "an array"
        case .leaf: wantedText = "a value"
        }
        let reason = existing.kind == wanted ? "\(name) is set twice" : "\(name) cannot be both \(existing.describedKind) and \(wantedText)"
        return .usage("request items '\(first)' and '\(second)' conflict: \(reason); keep one, or give them different names")
    }
}
