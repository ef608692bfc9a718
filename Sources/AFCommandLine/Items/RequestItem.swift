/// One request item from the command line (HTTPie's syntax).
enum RequestItem: Sendable, Equatable {
    /// `Name:Value`
    case header(name: String, value: String)
    /// `Name:` — do not send this header (not even a default one).
    case unsetHeader(name: String)
    /// `Name;` — send this header with an empty value.
    case emptyHeader(name: String)
    /// `Name:@file` — header value read from a file.
    case headerFromFile(name: String, path: String)
    /// `name==value`
    case query(name: String, value: String)
    /// `name==@file`
    case queryFromFile(name: String, path: String)
    /// `name=value` — a string field.
    case field(key: String, value: String)
    /// `name=@file` — a string field with the file's text.
    case fieldFromFile(key: String, path: String)
    /// `name:=json` — a raw JSON field, validated, sent as written.
    case jsonField(key: String, json: String)
    /// `name:=@file` — a raw JSON field from a file.
    case jsonFieldFromFile(key: String, path: String)
    /// `name@file;type=MIME` — a file upload.
    case file(name: String, path: String, contentType: String?)
    /// `@file` — the whole body.
    case bodyFile(path: String)

    /// The header an item sends (none for one that unsets a header).
    var headerName: String? {
        switch self {
        case .header(let name, _), .emptyHeader(let name), .headerFromFile(let name, _): name
        default: nil
        }
    }

    /// The item with a leading `~` of its file's path expanded (`HomePath`): HTTPie expands
    /// the paths of its items, which a shell leaves alone inside a word (`a=@~/a.txt`).
    func expandingHome(_ home: String) -> RequestItem {
        switch self {
        case .headerFromFile(let name, let path): .headerFromFile(name: name, path: HomePath.expand(path, home: home))
        case .queryFromFile(let name, let path): .queryFromFile(name: name, path: HomePath.expand(path, home: home))
        case .fieldFromFile(let key, let path): .fieldFromFile(key: key, path: HomePath.expand(path, home: home))
        case .jsonFieldFromFile(let key, let path): .jsonFieldFromFile(key: key, path: HomePath.expand(path, home: home))
        case .file(let name, let path, let type): .file(name: name, path: HomePath.expand(path, home: home), contentType: type)
        case .bodyFile(let path): .bodyFile(path: HomePath.expand(path, home: home))
        case .header, .unsetHeader, .emptyHeader, .query, .field, .jsonField: self
        }
    }

    /// Whether the item is its text as typed: not JSON (whose parser names what it does not
    /// take) and not a file's path (which names a file that is not there).
    var isTypedText: Bool {
        switch self {
        case .header, .unsetHeader, .emptyHeader, .query, .field: true
        case .headerFromFile, .queryFromFile, .fieldFromFile, .jsonField, .jsonFieldFromFile, .file, .bodyFile: false
        }
    }

    /// Whether building the request reads a file for this item.
    var readsFile: Bool {
        switch self {
        case .headerFromFile, .queryFromFile, .fieldFromFile, .jsonFieldFromFile, .file, .bodyFile: true
        case .header, .unsetHeader, .emptyHeader, .query, .field, .jsonField: false
        }
    }
}

/// A request item with the argument it came from, for messages.
struct SourcedItem: Sendable, Equatable {
    var item: RequestItem
    /// The argument exactly as typed.
    var argument: String
}

/// Parses request items.
///
/// The separator that starts earliest wins; at the same position the longest wins. A
/// backslash before a separator character makes it literal (`a\:b=c` is the field `a:b`).
enum RequestItemParser {
    /// Separators, longest first so that the longest wins at a position.
    static let separators: [String] = [":=@", "==@", ":=", "==", "=@", ":@", "=", ":", ";", "@"]
    private static let escapable: Set<Character> = [":", "=", "@", ";", "\\"]

    static func parse(_ argument: String) throws(CommandFailure) -> SourcedItem {
        guard let (key, separator, rawValue) = split(argument) else {
            throw .usage("'\(Quote.argument(argument))' is not a request item: expected Name:Value, name==value, name=value, name:=json, name@file or @file")
        }
        // Quoted once: every item of every batch line comes here.
        let quoted = Quote.argument(argument)
        return SourcedItem(item: try make(separator: separator, key: key, rawValue: rawValue, argument: quoted), argument: quoted)
    }

    /// How `word` begins when it reads as a request item: its name and separator (`age:=`,
    /// `X-Id:`, `q==`, or `@` for a body file); nil when it is no item, an item without a
    /// name, or a URL (`https://…`, whose scheme ends as a header's name does). For a message
    /// on a word that went into the item before it.
    static func lead(of word: String) -> String? {
        guard let (key, separator, rawValue) = split(word), !key.isEmpty || separator == "@" else { return nil }
        if separator == ":", rawValue.hasPrefix("//") { return nil }
        guard (try? make(separator: separator, key: key, rawValue: rawValue, argument: "")) != nil else { return nil }
        return key + separator
    }

    /// The key before the separator that starts earliest (the longest at that position), the
    /// separator, and the text after it; nil when `argument` has none.
    private static func split(_ argument: String) -> (key: String, separator: String, rawValue: String)? {
        let characters = Array(argument)
        var key = ""
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "\\", index + 1 < characters.count, escapable.contains(characters[index + 1]) {
                // `\\` stays escaped in the key so that nested-path parsing can tell a literal
                // backslash from one escaping a bracket; the separators lose their backslash.
                let next = characters[index + 1]
                key += next == "\\" ? "\\\\" : String(next)
                index += 2
                continue
            }
            if let separator = separators.first(where: { matches($0, characters, at: index) }) {
                return (key, separator, String(characters[(index + separator.count)...]))
            }
            key.append(character)
            index += 1
        }
        return nil
    }

    private static func matches(_ separator: String, _ characters: [Character], at index: Int) -> Bool {
        let parts = Array(separator)
        guard index + parts.count <= characters.count else { return false }
        return characters[index..<(index + parts.count)].elementsEqual(parts)
    }

    /// Removes the escaping backslashes from a value.
    private static func unescape(_ text: String) -> String {
        var out = ""
        var iterator = Array(text).makeIterator()
        while let character = iterator.next() {
            if character == "\\" {
                if let next = iterator.next() {
                    if escapable.contains(next) { out.append(next) } else { out.append("\\"); out.append(next) }
                } else {
                    out.append("\\")
                }
            } else {
                out.append(character)
            }
        }
        return out
    }

    private static func make(separator: String, key: String, rawValue: String, argument: String) throws(CommandFailure) -> RequestItem {
        let value = unescape(rawValue)
        func requireKey(_ what: String) throws(CommandFailure) {
            guard !key.isEmpty else { throw .usage("request item '\(argument)' has no \(what) before '\(separator)'") }
        }
        func requirePath() throws(CommandFailure) -> String {
            guard !value.isEmpty else { throw .usage("request item '\(argument)' names no file after '\(separator)'") }
            return value
        }
        switch separator {
        case ":":
            try requireKey("header name")
            let trimmed = value.trimmingCharacters(in: " \t")
            let name = NestedPath.literal(key)
            return trimmed.isEmpty ? .unsetHeader(name: name) : .header(name: name, value: trimmed)
        case ";":
            try requireKey("header name")
            guard value.isEmpty else {
                throw .usage("request item '\(argument)': 'Name;' sends an empty header and takes no value; use 'Name:value'")
            }
            return .emptyHeader(name: NestedPath.literal(key))
        case ":@":
            try requireKey("header name")
            return .headerFromFile(name: NestedPath.literal(key), path: try requirePath())
        case "==":
            try requireKey("parameter name")
            return .query(name: NestedPath.literal(key), value: value)
        case "==@":
            try requireKey("parameter name")
            return .queryFromFile(name: NestedPath.literal(key), path: try requirePath())
        case "=":
            // An empty key is a field named "" (HTTPie: `=value` gives {"": "value"}).
            return .field(key: key, value: value)
        case "=@":
            try requireKey("field name")
            return .fieldFromFile(key: key, path: try requirePath())
        case ":=":
            return .jsonField(key: key, json: value)
        case ":=@":
            try requireKey("field name")
            return .jsonFieldFromFile(key: key, path: try requirePath())
        default:
            if key.isEmpty { return .bodyFile(path: try requirePath()) }
            var path = value
            var type: String?
            if let range = path.lastRange(ofBytes: ";type=") {
                type = String(path[range.upperBound...])
                path = String(path[..<range.lowerBound])
                guard let given = type, !given.isEmpty else { throw .usage("request item '\(argument)' has an empty ;type=") }
                guard !given.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                    throw .usage("request item '\(argument)' has a line break or NUL in ;type=; a part header must be one line")
                }
            }
            guard !path.isEmpty else { throw .usage("request item '\(argument)' names no file after '@'") }
            return .file(name: NestedPath.literal(key), path: path, contentType: type)
        }
    }
}
