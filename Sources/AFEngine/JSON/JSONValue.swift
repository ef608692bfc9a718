/// A parsed JSON document that keeps every value exact: numbers keep their text (`1.10`
/// stays `1.10`, big integers keep every digit), objects keep their key order and
/// duplicate keys. For response bodies and the small files af reads itself.
public enum JSONValue: Sendable, Equatable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    /// Equal when the structure, key order and every token (number text included) are equal.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let a), .array(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        default: return false
        }
    }

    /// Parses a document.
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var scanner = JSONScanner()
        var sink = CollectingSink()
        do {
            try scanner.feed(bytes, into: &sink)
            try scanner.finish(into: &sink)
        } catch {
            throw error.located(in: bytes)
        }
        let tokens = sink.tokens.map { ($0.kind, $0.bytes) }
        var index = 0
        return build(tokens, &index)
    }

    private static func build(_ tokens: [(JSONTokenKind, [UInt8])], _ index: inout Int) -> JSONValue {
        let (kind, token) = tokens[index]
        index += 1
        switch kind {
        case .beginObject:
            var members: [(String, JSONValue)] = []
            while tokens[index].0 != .endObject {
                if tokens[index].0 == .comma { index += 1; continue }
                let key = decodeString(tokens[index].1)
                index += 2
                members.append((key, build(tokens, &index)))
            }
            index += 1
            return .object(members)
        case .beginArray:
            var items: [JSONValue] = []
            while tokens[index].0 != .endArray {
                if tokens[index].0 == .comma { index += 1; continue }
                items.append(build(tokens, &index))
            }
            index += 1
            return .array(items)
        case .string: return .string(decodeString(token))
        case .number: return .number(String(decoding: token, as: UTF8.self))
        case .literal:
            switch token.first {
            case UInt8(ascii: "t"): return .bool(true)
            case UInt8(ascii: "f"): return .bool(false)
            default: return .null
            }
        default: return .null
        }
    }

    /// The text of a string token (quotes and escapes resolved; a lone surrogate escape
    /// shows as U+FFFD).
    public static func decodeString(_ token: [UInt8]) -> String {
        guard token.count >= 2 else { return "" }
        let inner = token[1..<(token.count - 1)]
        guard inner.contains(UInt8(ascii: "\\")) else { return String(decoding: inner, as: UTF8.self) }
        return String(decoding: inner.withUnsafeBytes { JSONStringText.unescaped($0) }, as: UTF8.self)
    }

    // MARK: Access

    /// The value of the first member named `key`, when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// "an array", "an object", "null"… for messages.
    public var kindName: String {
        switch self {
        case .object: return "object"
        case .array: return "array"
        case .string: return "string"
        case .number: return "number"
        case .bool: return "boolean"
        case .null: return "null"
        }
    }

    /// The decoded text, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members in order (duplicates kept), when this is an object.
    public var objectValue: [(String, JSONValue)]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The value, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number exactly as written (`1.10`, `1e400`), when this is a number.
    public var numberText: String? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The value as JSON text on one line (`{"a": 1, "b": [true]}`), numbers exactly as written.
    public var text: String {
        var writer = JSONWriter()
        writer.value(self)
        return writer.text
    }
}
