/// The kinds of JSON tokens.
enum JSONTokenKind: Sendable, Equatable {
    case beginObject, endObject, beginArray, endArray, colon, comma
    /// A string, with its quotes and escapes exactly as written.
    case string
    /// A number exactly as written.
    case number
    case literal
    /// Whitespace between tokens (only when the scanner is asked to report it).
    case whitespace
}

/// Where and why JSON text is invalid.
struct JSONSyntaxError: Error, Sendable, Equatable {
    var message: String
    /// 1-based line and column of the offending byte.
    var line: Int
    var column: Int
    /// 0-based byte offset.
    var offset: Int

    var description: String { "\(message) at line \(line), column \(column)" }
}

/// A push tokenizer and validator for JSON that never converts a value.
///
/// Bytes are fed in chunks of any size; each complete token is handed to the caller with its
/// exact bytes, so numbers, escapes and key order survive untouched. Memory holds only the
/// token being read and one byte per open container.
struct JSONScanner {
    private enum Expect { case value, valueOrEnd, key, keyOrEnd, colon, commaOrEnd, done }
    private enum Lexeme { case none, string, stringEscape, stringUnicode(Int), number(NumberState), literal }
    private enum NumberState { case minus, zero, integer, dot, fraction, exponent, exponentSign, exponentDigits }

    private var expect: Expect = .value
    private var lexeme: Lexeme = .none
    /// true for an object, false for an array.
    private var containers: [Bool] = []
    private var token: [UInt8] = []
    private(set) var offset = 0
    private var line = 1
    private var column = 1
    /// Whether the next string is an object key.
    private(set) var nextStringIsKey = false
    /// Multiple top-level values (NDJSON) are allowed when true.
    var allowsMultipleValues = false
    /// Report whitespace between tokens as `.whitespace` tokens.
    var reportsWhitespace = false

    /// Container depth right now.
    var depth: Int { containers.count }

    /// Whether a complete top-level value has been read.
    var isComplete: Bool { expect == .done && isIdle }

    /// The bytes of a token that has begun but not ended.
    var partialToken: [UInt8] { token }

    /// Whether no token is half-read.
    var isIdle: Bool { if case .none = lexeme { return true } else { return false } }

    /// Feeds bytes; `emit` receives each complete token and whether a string is a key.
    mutating func feed(_ bytes: some Collection<UInt8>, emit: (JSONTokenKind, [UInt8], Bool) -> Void) throws(JSONSyntaxError) {
        for byte in bytes {
            try consume(byte, emit: emit)
            offset += 1
            if byte == 10 {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
    }

    /// Ends the input: a number at the very end completes; anything unfinished is an error.
    mutating func finish(emit: (JSONTokenKind, [UInt8], Bool) -> Void) throws(JSONSyntaxError) {
        if case .number(let state) = lexeme {
            guard state == .zero || state == .integer || state == .fraction || state == .exponentDigits else {
                throw error("the number '\(text(token))' is incomplete")
            }
            emitToken(.number, emit)
        }
        guard isIdle else { throw error("the input ends inside a \(lexemeName)") }
        if expect == .done || (allowsMultipleValues && expect == .value && containers.isEmpty) { return }
        throw error(containers.isEmpty && expect == .value ? "there is no JSON value" : "the input ends before the JSON value is complete")
    }

    /// Validates a complete document; nil when it is one valid JSON value.
    static func validate(_ bytes: [UInt8]) -> JSONSyntaxError? {
        var scanner = JSONScanner()
        do {
            try scanner.feed(bytes) { _, _, _ in }
            try scanner.finish { _, _, _ in }
            return nil
        } catch {
            return error
        }
    }

    // MARK: Lexing

    private var lexemeName: String {
        switch lexeme {
        case .string, .stringEscape, .stringUnicode: return "string"
        case .number: return "number"
        case .literal: return "literal"
        case .none: return "value"
        }
    }

    private mutating func consume(_ byte: UInt8, emit: (JSONTokenKind, [UInt8], Bool) -> Void) throws(JSONSyntaxError) {
        switch lexeme {
        case .string:
            if byte < 0x20 { throw error("a control character must be escaped inside a string") }
            token.append(byte)
            if byte == UInt8(ascii: "\"") {
                emitToken(.string, emit)
            } else if byte == UInt8(ascii: "\\") {
                lexeme = .stringEscape
            }
            return
        case .stringEscape:
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                 UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                lexeme = .string
            case UInt8(ascii: "u"):
                lexeme = .stringUnicode(0)
            default:
                throw error("'\\\(Character(UnicodeScalar(byte)))' is not a JSON escape")
            }
            token.append(byte)
            return
        case .stringUnicode(let count):
            guard Self.isHex(byte) else { throw error("\\u needs four hexadecimal digits") }
            token.append(byte)
            lexeme = count == 3 ? .string : .stringUnicode(count + 1)
            return
        case .number(let state):
            if let next = Self.advance(state, byte) {
                token.append(byte)
                lexeme = .number(next)
                return
            }
            guard state == .zero || state == .integer || state == .fraction || state == .exponentDigits else {
                throw error("the number '\(text(token))' is incomplete")
            }
            emitToken(.number, emit)
        case .literal:
            if Self.isLetter(byte) {
                let candidate = token + [byte]
                guard ["true", "false", "null"].contains(where: { $0.utf8.starts(with: candidate) }) else {
                    throw error("'\(text(candidate))' is not a JSON value (true, false and null are)")
                }
                token = candidate
                return
            }
            guard ["true", "false", "null"].contains(text(token)) else {
                throw error("'\(text(token))' is not a JSON value")
            }
            emitToken(.literal, emit)
        case .none:
            break
        }
        try structural(byte, emit: emit)
    }

    private mutating func structural(_ byte: UInt8, emit: (JSONTokenKind, [UInt8], Bool) -> Void) throws(JSONSyntaxError) {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D:
            if reportsWhitespace { emit(.whitespace, [byte], false) }
            return
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try beginValue()
            containers.append(byte == UInt8(ascii: "{"))
            expect = byte == UInt8(ascii: "{") ? .keyOrEnd : .valueOrEnd
            emit(byte == UInt8(ascii: "{") ? .beginObject : .beginArray, [byte], false)
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            let isObject = byte == UInt8(ascii: "}")
            guard let top = containers.last, top == isObject else {
                throw error("'\(Character(UnicodeScalar(byte)))' does not close an open \(isObject ? "object" : "array")")
            }
            guard expect == .commaOrEnd || (isObject ? expect == .keyOrEnd : expect == .valueOrEnd) else {
                throw error("unexpected '\(Character(UnicodeScalar(byte)))' after a comma")
            }
            containers.removeLast()
            emit(isObject ? .endObject : .endArray, [byte], false)
            afterValue()
        case UInt8(ascii: ":"):
            guard expect == .colon else { throw error("unexpected ':'") }
            expect = .value
            emit(.colon, [byte], false)
        case UInt8(ascii: ","):
            guard expect == .commaOrEnd else { throw error("unexpected ','") }
            expect = containers.last == true ? .key : .value
            emit(.comma, [byte], false)
        case UInt8(ascii: "\""):
            if expect == .key || expect == .keyOrEnd {
                nextStringIsKey = true
                expect = .colon
            } else {
                try beginValue()
                nextStringIsKey = false
            }
            lexeme = .string
            token = [byte]
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try beginValue()
            lexeme = .number(byte == UInt8(ascii: "-") ? .minus : (byte == UInt8(ascii: "0") ? .zero : .integer))
            token = [byte]
        case UInt8(ascii: "a")...UInt8(ascii: "z"):
            try beginValue()
            lexeme = .literal
            token = [byte]
            guard ["true", "false", "null"].contains(where: { $0.utf8.first == byte }) else {
                throw error("'\(Character(UnicodeScalar(byte)))' cannot start a JSON value")
            }
        default:
            let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(UnicodeScalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
            throw error("unexpected \(shown)")
        }
    }

    /// Checks that a value may start here.
    private mutating func beginValue() throws(JSONSyntaxError) {
        switch expect {
        case .value, .valueOrEnd: return
        case .done:
            if allowsMultipleValues && containers.isEmpty { return }
            throw error("unexpected data after the JSON value")
        case .key, .keyOrEnd: throw error("an object key must be a string")
        case .colon: throw error("expected ':' after the key")
        case .commaOrEnd: throw error("expected ',' or the end of the \(containers.last == true ? "object" : "array")")
        }
    }

    private mutating func afterValue() {
        expect = containers.isEmpty ? .done : .commaOrEnd
    }

    private mutating func emitToken(_ kind: JSONTokenKind, _ emit: (JSONTokenKind, [UInt8], Bool) -> Void) {
        let isKey = kind == .string && nextStringIsKey
        emit(kind, token, isKey)
        token.removeAll(keepingCapacity: true)
        lexeme = .none
        if isKey {
            nextStringIsKey = false
        } else {
            afterValue()
        }
    }

    private static func advance(_ state: NumberState, _ byte: UInt8) -> NumberState? {
        let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        switch state {
        case .minus: return byte == UInt8(ascii: "0") ? .zero : (digit ? .integer : nil)
        case .zero, .integer:
            if state == .integer, digit { return .integer }
            if byte == UInt8(ascii: ".") { return .dot }
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return .exponent }
            return nil
        case .dot: return digit ? .fraction : nil
        case .fraction:
            if digit { return .fraction }
            return byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") ? .exponent : nil
        case .exponent:
            if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") { return .exponentSign }
            return digit ? .exponentDigits : nil
        case .exponentSign, .exponentDigits: return digit ? .exponentDigits : nil
        }
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102)
    }

    private static func isLetter(_ byte: UInt8) -> Bool { byte >= 97 && byte <= 122 }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, line: line, column: column, offset: offset)
    }
}

/// JSON text building.
enum JSONText {
    /// A JSON string literal for `value`.
    static func quote(_ value: String) -> String {
        var out = "\""
        out.reserveCapacity(value.utf8.count + 2)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
        return out
    }
}
