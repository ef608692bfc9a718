
/// The kinds of JSON tokens. The raw values put the kinds that carry a value or a bracket
/// (0–6) before the separators, so a sink can keep a kind in a few bits.
public enum JSONTokenKind: UInt8, Sendable, Equatable {
    /// `{`, `}`, `[` and `]`.
    case beginObject = 0, endObject, beginArray, endArray
    /// A string, with its quotes and escapes exactly as written.
    case string
    /// A number exactly as written.
    case number
    /// `true`, `false` or `null`.
    case literal
    /// `:` and `,`.
    case colon, comma
    /// Whitespace between tokens (only when the scanner is asked to report it).
    case whitespace
}

/// Receives tokens from a `JSONScanner`.
public protocol JSONTokenSink {
    /// One token. `bytes` is only valid during the call. A long string may arrive in several
    /// pieces: `complete` is false for every piece but the last (other tokens are whole).
    mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool)
}

/// Where and why JSON text is invalid.
public struct JSONSyntaxError: Error, Sendable, Equatable {
    /// What is wrong, as a sentence fragment.
    public var message: String
    /// 0-based byte offset of the offending byte.
    public var offset: Int
    /// 1-based line and column, when the text is at hand to count them (see `located(in:)`).
    public var line = 0
    /// The 1-based column of the failing byte (0 until located).
    public var column = 0

    @usableFromInline init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// The message with its line and column.
    public var description: String {
        line > 0 ? "\(message) at line \(line), column \(column)" : "\(message) at byte \(offset + 1)"
    }

    /// The error with line and column counted in `text`.
    package func located(in text: some Collection<UInt8>) -> JSONSyntaxError {
        var copy = self
        copy.line = 1
        copy.column = 1
        for byte in text.prefix(offset) {
            if byte == 10 {
                copy.line += 1
                copy.column = 1
            } else if byte & 0xC0 != 0x80 {
                copy.column += 1
            }
        }
        return copy
    }
}

/// A push tokenizer and validator for JSON that never converts a value.
///
/// Bytes are fed in chunks of any size; each token is handed to the sink as a slice of the
/// input with its exact bytes, so numbers, escapes and key order survive untouched. A token
/// cut by a chunk boundary is carried over (a long string is handed on in pieces instead),
/// so memory holds one small carry buffer and a bit per open container.
///
/// The scanning loop is inlinable: each sink type gets its own copy of it with the sink's
/// `token` compiled in, instead of a call through the protocol per token.
public struct JSONScanner {
    /// A scanner for one document (or, with `allowsMultipleValues`, a stream of them).
    @inlinable public init() {}

    @usableFromInline enum Expect { case value, valueOrEnd, key, keyOrEnd, colon, commaOrEnd, done }

    /// Accept several top-level values one after another (NDJSON).
    public var allowsMultipleValues = false
    /// Report whitespace between tokens as `.whitespace` tokens.
    public var reportsWhitespace = false

    @usableFromInline var expect: Expect = .value
    /// Which open containers are objects.
    @usableFromInline var containers = ContainerStack()
    /// Bytes of a token cut by the end of the previous chunk.
    @usableFromInline var carry: [UInt8] = []
    /// The carry is an open string: where scanning resumes in it, whether it is a key, and
    /// whether its beginning was already handed out as a piece.
    @usableFromInline var openString: (resumeAt: Int, isKey: Bool, continued: Bool)?
    /// Bytes fed so far.
    public var consumed: Int { bytesFed }
    @usableFromInline var bytesFed = 0
    /// When the last error happened: the input from the start of the failing token to the
    /// end of the chunk, to show as it came.
    public var unformattedTail: [UInt8] { failedTail }
    @usableFromInline var failedTail: [UInt8] = []

    /// The deepest nesting accepted. Deeper documents are refused as a syntax error (and so
    /// shown as they came), which bounds the formatter's indentation, the recursion of
    /// `JSONValue` and sorted keys, and the memory of all three.
    public static let maxDepth = 512

    /// Strings longer than this are handed out in pieces.
    public static let fragmentThreshold = 64 * 1024

    /// The longest number carried from one chunk to the next: a number still open at the end
    /// of a chunk past this length is a syntax error. A carried number is kept whole, so
    /// without a bound a hostile body of one endless number held it all (and, before digits
    /// were carried without a rescan, took time growing with the square of its length: 8 MB
    /// 1.4 s, 200 MB minutes). A number within one chunk is not measured: that would cost a
    /// compare per number in the scanning loop, and its length is bounded by the chunk.
    public static let maxNumberLength = 1 << 20

    /// The carry is a number so far (carried whole, not in pieces). A string's carry may start
    /// with a digit too, but then `openString` is set; a literal's starts with a letter.
    @inlinable var carriesNumber: Bool {
        guard openString == nil, let first = carry.first else { return false }
        return first == UInt8(ascii: "-") || first &- UInt8(ascii: "0") < 10
    }

    /// Open containers right now.
    @inlinable public var depth: Int { containers.depth }

    // MARK: Feeding

    /// Scans the next bytes, handing every complete token (and long strings' pieces) to
    /// `sink`; a token cut by the end of `chunk` waits for the next one.
    ///
    /// A carried token is finished from the start of the chunk alone: the carry and the
    /// chunk's first bytes (more each round while the token goes on) are scanned together,
    /// and once what is carried again lies wholly within those first bytes, scanning goes on
    /// in the chunk itself from there, so a chunk is not copied whole.
    @inlinable public mutating func feed<Sink: JSONTokenSink>(_ chunk: UnsafeRawBufferPointer, into sink: inout Sink) throws(JSONSyntaxError) {
        defer { bytesFed += chunk.count }
        var position = 0
        while !carry.isEmpty, position < chunk.count {
            // Digits after a carried number's digit go on the carry without scanning it again:
            // a long number arriving in many chunks costs its length, not its length squared.
            // (Not after a lone `0` or `-0`, which a digit may not follow.)
            if carriesNumber, let last = carry.last, last &- UInt8(ascii: "0") < 10, carry != [0x30], carry != [0x2D, 0x30] {
                var run = position
                while run < chunk.count, chunk[run] &- UInt8(ascii: "0") < 10 { run += 1 }
                if run > position {
                    if carry.count + (run - position) > Self.maxNumberLength {
                        throw numberTooLong(carry + Array(UnsafeRawBufferPointer(rebasing: chunk[position...])), offset: bytesFed + position - carry.count)
                    }
                    carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[position..<run]))
                    position = run
                    continue
                }
            }
            let taken = min(chunk.count - position, max(256, carry.count))
            var data = carry
            data.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[position..<(position + taken)]))
            let offset = bytesFed + position - carry.count
            carry.removeAll(keepingCapacity: true)
            do {
                try data.withBytes { (raw: UnsafeRawBufferPointer) throws(JSONSyntaxError) in
                    try scan(raw, dataOffset: offset, atEnd: false, into: &sink)
                }
            } catch {
                // The tail to show as it came runs to the end of the chunk, not of `data`.
                failedTail.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[(position + taken)...]))
                throw error
            }
            position += taken
            // What is carried now is always a suffix of `data`: when it fits in the bytes
            // just taken, it is the same bytes of the chunk, and scanning from there (with
            // the state the carry left, such as an open string's resume point) is the same.
            if !carry.isEmpty, carry.count <= taken {
                position -= carry.count
                carry.removeAll(keepingCapacity: true)
                break
            }
        }
        guard position < chunk.count else { return }
        try scan(UnsafeRawBufferPointer(rebasing: chunk[position...]), dataOffset: bytesFed + position, atEnd: false, into: &sink)
    }

    /// `feed(_:into:)` for an array of bytes.
    @inlinable public mutating func feed<Sink: JSONTokenSink>(_ bytes: [UInt8], into sink: inout Sink) throws(JSONSyntaxError) {
        // Locals, not the inout parameters, are what the closure captures: ThreadSanitizer's
        // instrumentation of captured inout parameters faults in Swift 6.3.1.
        var scanner = self
        var target = sink
        defer {
            self = scanner
            sink = target
        }
        try bytes.withBytes { (raw: UnsafeRawBufferPointer) throws(JSONSyntaxError) in try scanner.feed(raw, into: &target) }
    }

    /// Ends the input: a number at the very end completes; anything unfinished is an error.
    @inlinable public mutating func finish<Sink: JSONTokenSink>(into sink: inout Sink) throws(JSONSyntaxError) {
        if !carry.isEmpty {
            let data = carry
            carry.removeAll()
            let offset = bytesFed - data.count
            try data.withBytes { (raw: UnsafeRawBufferPointer) throws(JSONSyntaxError) in
                try scan(raw, dataOffset: offset, atEnd: true, into: &sink)
            }
            if !carry.isEmpty {
                failedTail = carry
                let kind = openString != nil ? "string" : "value"
                throw JSONSyntaxError(message: "the input ends inside a \(kind)", offset: bytesFed)
            }
        }
        if expect == .done || (allowsMultipleValues && expect == .value && (containers.depth == 0)) { return }
        let message = (containers.depth == 0) && expect == .value ? "there is no JSON value" : "the input ends before the JSON value is complete"
        throw JSONSyntaxError(message: message, offset: bytesFed)
    }

    /// Validates a complete document; nil when it is one valid JSON value.
    package static func validate(_ bytes: [UInt8], multipleValues: Bool = false) -> JSONSyntaxError? {
        var scanner = JSONScanner()
        scanner.allowsMultipleValues = multipleValues
        var sink = DiscardingSink()
        do {
            try scanner.feed(bytes, into: &sink)
            try scanner.finish(into: &sink)
            return nil
        } catch {
            return error.located(in: bytes)
        }
    }

    // MARK: Scanning

    /// The error for a carried number over `maxNumberLength`: `tail` is the input from the
    /// number's start, to show as it came, and `offset` where the number starts. Kept out of
    /// the scanning loop (which it made 4 % dearer inline).
    @inline(never) @usableFromInline mutating func numberTooLong(_ tail: [UInt8], offset: Int) -> JSONSyntaxError {
        failedTail = tail
        return JSONSyntaxError(message: "a number is longer than 1 MiB", offset: offset)
    }

    /// The character `bytes` begin with, as an error names it where a value was due: `'x'`,
    /// `'“' (U+201C, a curly quote: JSON's strings take plain " quotes)` for text copied from
    /// a document, or `byte 0xe2` for a control character or bytes that are no UTF-8 (or are
    /// cut off at the end of a chunk).
    @usableFromInline static func describeUnexpected(_ bytes: UnsafeRawBufferPointer) -> String {
        guard let byte = bytes.first else { return "the end" }
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(UnicodeScalar(byte)))'" }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.prefix(4).makeIterator()
        guard byte >= 0x80, case .valid(let encoded) = parser.parseScalar(from: &iterator) else { return "byte 0x\(String(byte, radix: 16))" }
        let scalar = Unicode.UTF8.decode(encoded)
        let code = Format.codePoint(scalar)
        // Controls (C1) and invisible characters are named by their code alone; a space other
        // than JSON's four (a no-break space pasted from a page) says so.
        guard scalar.properties.generalCategory != .control else { return code }
        if scalar.properties.isWhitespace { return "\(code), a space character JSON does not take" }
        guard scalar.properties.generalCategory != .format else { return code }
        let quote = Format.typographicQuotes.contains(scalar)
        return "'\(Character(scalar))' (\(code)\(quote ? ", a typographic quote: JSON's strings take plain \" quotes" : ""))"
    }

    @usableFromInline enum StringEnd {
        case complete(Int)
        /// Not closed; bytes up to `safe` are valid string content.
        case open(safe: Int)
    }

    @inlinable mutating func scan<Sink: JSONTokenSink>(
        _ data: UnsafeRawBufferPointer, dataOffset: Int, atEnd: Bool, into sink: inout Sink
    ) throws(JSONSyntaxError) {
        let count = data.count
        var index = 0
        func fail(_ message: String, at position: Int, tokenStart: Int) -> JSONSyntaxError {
            failedTail = Array(data[min(tokenStart, count)...])
            return JSONSyntaxError(message: message, offset: dataOffset + position)
        }
        if let open = openString {
            openString = nil
            switch try scanString(data, from: open.resumeAt, tokenStart: 0, dataOffset: dataOffset) {
            case .complete(let end):
                sink.token(.string, UnsafeRawBufferPointer(rebasing: data[0..<end]), isKey: open.isKey, complete: true)
                completeString(isKey: open.isKey)
                index = end
            case .open(let safe):
                keepOpenString(data, start: 0, safe: safe, isKey: open.isKey, continued: open.continued, into: &sink)
                return
            }
        }
        while index < count {
            let byte = data[index]
            // Each case finds one token and updates the state; the token is handed on once,
            // below, so the sink's work is inlined here in one place.
            let kind: JSONTokenKind
            let end: Int
            var isKey = false
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                var last = index + 1
                while last < count, data[last] == 0x20 || data[last] == 0x0A || data[last] == 0x09 || data[last] == 0x0D { last += 1 }
                guard reportsWhitespace else {
                    index = last
                    continue
                }
                kind = .whitespace
                end = last
            case UInt8(ascii: "\""):
                isKey = expect == .key || expect == .keyOrEnd
                if !isKey, !canStartValue, let problem = valueProblem() { throw fail(problem, at: index, tokenStart: index) }
                // Most strings have nothing to check before their closing quote: found here
                // without the call that escapes and pieces need.
                let plainEnd = Self.skipPlainStringBytes(data, from: index + 1)
                let found: StringEnd = plainEnd < count && data[plainEnd] == UInt8(ascii: "\"")
                    ? .complete(plainEnd + 1)
                    : try scanString(data, from: plainEnd, tokenStart: index, dataOffset: dataOffset)
                switch found {
                case .complete(let stringEnd):
                    completeString(isKey: isKey)
                    kind = .string
                    end = stringEnd
                case .open(let safe):
                    keepOpenString(data, start: index, safe: safe, isKey: isKey, continued: false, into: &sink)
                    return
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                if !canStartValue, let problem = valueProblem() { throw fail(problem, at: index, tokenStart: index) }
                let (numberEnd, valid) = Self.scanNumber(data, from: index)
                if numberEnd == count, !atEnd {
                    if _slowPath(numberEnd - index > Self.maxNumberLength) {
                        throw numberTooLong(Array(data[index...]), offset: dataOffset + index)
                    }
                    carry.append(contentsOf: data[index..<count])
                    return
                }
                guard valid else {
                    let text = String(decoding: data[index..<numberEnd], as: UTF8.self)
                    throw fail("the number '\(text)' is incomplete", at: numberEnd, tokenStart: index)
                }
                afterValue()
                kind = .number
                end = numberEnd
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                if !canStartValue, let problem = valueProblem() { throw fail(problem, at: index, tokenStart: index) }
                // `true`, `null` or `false` followed by something other than a letter: read
                // as one word instead of letter by letter.
                let known = Self.literalLength(data, at: index)
                if known > 0, index + known < count, data[index + known] &- UInt8(ascii: "a") >= 26 {
                    afterValue()
                    kind = .literal
                    end = index + known
                    break
                }
                var last = index + 1
                while last < count, data[last] >= UInt8(ascii: "a"), data[last] <= UInt8(ascii: "z") { last += 1 }
                let word = data[index..<last]
                if last == count, !atEnd, Self.isLiteralPrefix(word) {
                    carry.append(contentsOf: word)
                    return
                }
                guard Self.isLiteral(word) else {
                    throw fail("'\(String(decoding: word, as: UTF8.self))' is not a JSON value (true, false and null are)", at: index, tokenStart: index)
                }
                afterValue()
                kind = .literal
                end = last
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if !canStartValue, let problem = valueProblem() { throw fail(problem, at: index, tokenStart: index) }
                let isObject = byte == UInt8(ascii: "{")
                guard containers.depth < Self.maxDepth else {
                    throw fail("the JSON is nested more than \(Self.maxDepth) levels deep", at: index, tokenStart: index)
                }
                containers.push(isObject)
                expect = isObject ? .keyOrEnd : .valueOrEnd
                kind = isObject ? .beginObject : .beginArray
                end = index + 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                let isObject = byte == UInt8(ascii: "}")
                guard containers.depth > 0, containers.top == isObject else {
                    throw fail("'\(Character(UnicodeScalar(byte)))' does not close an open \(isObject ? "object" : "array")", at: index, tokenStart: index)
                }
                guard expect == .commaOrEnd || expect == (isObject ? .keyOrEnd : .valueOrEnd) else {
                    let shown = Character(UnicodeScalar(byte))
                    let message: String
                    switch expect {
                    case .colon: message = "expected ':' after the key"
                    case .key: message = "unexpected '\(shown)' after a comma"
                    default: message = "unexpected '\(shown)' where a value should be"
                    }
                    throw fail(message, at: index, tokenStart: index)
                }
                containers.pop()
                afterValue()
                kind = isObject ? .endObject : .endArray
                end = index + 1
            case UInt8(ascii: ":"):
                guard expect == .colon else { throw fail("unexpected ':'", at: index, tokenStart: index) }
                expect = .value
                kind = .colon
                end = index + 1
            case UInt8(ascii: ","):
                guard expect == .commaOrEnd else { throw fail("unexpected ','", at: index, tokenStart: index) }
                expect = containers.depth > 0 && containers.top ? .key : .value
                kind = .comma
                end = index + 1
            default:
                throw fail("unexpected \(Self.describeUnexpected(UnsafeRawBufferPointer(rebasing: data[index...])))", at: index, tokenStart: index)
            }
            sink.token(kind, UnsafeRawBufferPointer(rebasing: data[index..<end]), isKey: isKey, complete: true)
            index = end
        }
    }

    /// Keeps an unclosed string for the next chunk, remembering how far it was checked; a
    /// long one is handed out in pieces so that it never has to be held whole.
    @inlinable mutating func keepOpenString<Sink: JSONTokenSink>(
        _ data: UnsafeRawBufferPointer, start: Int, safe: Int, isKey: Bool, continued: Bool, into sink: inout Sink
    ) {
        if safe - start >= Self.fragmentThreshold {
            let cut = Self.pieceEnd(data, from: start, safe: safe)
            sink.token(.string, UnsafeRawBufferPointer(rebasing: data[start..<cut]), isKey: isKey, complete: false)
            carry.append(contentsOf: data[cut...])
            openString = (resumeAt: safe - cut, isKey: isKey, continued: true)
        } else {
            carry.append(contentsOf: data[start...])
            openString = (resumeAt: safe - start, isKey: isKey, continued: continued)
        }
    }

    /// Scans string content from `start` (just after the opening quote, or where a previous
    /// piece stopped) to the closing quote.
    @inlinable mutating func scanString(_ data: UnsafeRawBufferPointer, from start: Int, tokenStart: Int, dataOffset: Int) throws(JSONSyntaxError) -> StringEnd {
        let count = data.count
        var index = start
        while index < count {
            index = Self.skipPlainStringBytes(data, from: index)
            guard index < count else { break }
            let byte = data[index]
            if byte == UInt8(ascii: "\"") { return .complete(index + 1) }
            if byte == UInt8(ascii: "\\") {
                guard index + 1 < count else { return .open(safe: index) }
                let code = data[index + 1]
                switch code {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    guard index + 5 < count else {
                        for position in (index + 2)..<count where !Self.isHex(data[position]) {
                            failedTail = Array(data[tokenStart...])
                            throw JSONSyntaxError(message: "\\u needs four hexadecimal digits", offset: dataOffset + position)
                        }
                        return .open(safe: index)
                    }
                    for position in (index + 2)...(index + 5) where !Self.isHex(data[position]) {
                        failedTail = Array(data[tokenStart...])
                        throw JSONSyntaxError(message: "\\u needs four hexadecimal digits", offset: dataOffset + position)
                    }
                    index += 6
                default:
                    failedTail = Array(data[tokenStart...])
                    let shown = code >= 0x20 && code < 0x7F ? String(UnicodeScalar(code)) : "0x\(String(code, radix: 16))"
                    throw JSONSyntaxError(message: "'\\\(shown)' is not a JSON escape", offset: dataOffset + index + 1)
                }
                continue
            }
            if byte < 0x20 {
                failedTail = Array(data[tokenStart...])
                throw JSONSyntaxError(message: "a control character must be escaped inside a string", offset: dataOffset + index)
            }
            index += 1
        }
        return .open(safe: count)
    }

    @inlinable mutating func completeString(isKey: Bool) {
        if isKey { expect = .colon } else { afterValue() }
    }

    /// The common case, checked without building a message: a value may start here.
    @inlinable var canStartValue: Bool {
        expect == .value || expect == .valueOrEnd
    }

    /// Why a value cannot start here, or nil when it can.
    @inlinable func valueProblem() -> String? {
        switch expect {
        case .value, .valueOrEnd: return nil
        case .done: return allowsMultipleValues && (containers.depth == 0) ? nil : "unexpected data after the JSON value"
        case .key, .keyOrEnd: return "an object key must be a string"
        case .colon: return "expected ':' after the key"
        case .commaOrEnd: return "expected ',' or the end of the \(containers.depth > 0 && containers.top ? "object" : "array")"
        }
    }

    @inlinable mutating func afterValue() {
        expect = containers.depth == 0 ? .done : .commaOrEnd
    }

    /// Skips string bytes that need no attention, eight at a time: the first position at or
    /// after `start` that holds a quote, a backslash or a control byte, or where fewer than
    /// eight bytes are left. In a word that has one, the lowest flagged byte is exactly the
    /// first such byte (a borrow only ever flags bytes above a true match), so the scan lands
    /// on it instead of stepping there byte by byte.
    @inlinable @inline(__always)
    package static func skipPlainStringBytes(_ data: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        let count = data.count
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= count {
            let word = UInt64(littleEndian: data.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let special = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)) & highs
            if special != 0 { return index + special.trailingZeroBitCount / 8 }
            index += 8
        }
        return index
    }

    /// The end of a number starting at `start`, and whether what it covers is a whole number.
    @inlinable static func scanNumber(_ data: UnsafeRawBufferPointer, from start: Int) -> (end: Int, valid: Bool) {
        let count = data.count
        var index = start
        /// The end of the run of digits from `position`.
        @inline(__always) func digits(from position: Int) -> Int {
            var end = position
            // Eight bytes at a time: a byte is a digit when its high nibble is 3 and its low
            // nibble below 10 (adding 6 carries into bit 4 otherwise); the lowest flagged
            // byte is the first that is not a digit.
            let ones: UInt64 = 0x0101_0101_0101_0101
            while end + 8 <= count {
                let word = UInt64(littleEndian: data.loadUnaligned(fromByteOffset: end, as: UInt64.self))
                let other = ((word & (ones &* 0xF0)) ^ (ones &* 0x30)) | (((word & (ones &* 0x0F)) &+ ones &* 0x06) & (ones &* 0x10))
                let flagged = (((other & (ones &* 0x7F)) &+ ones &* 0x7F) | other) & (ones &* 0x80)
                if flagged != 0 { return end + flagged.trailingZeroBitCount / 8 }
                end += 8
            }
            while end < count, data[end] &- 48 < 10 { end += 1 }
            return end
        }
        if data[index] == UInt8(ascii: "-") { index += 1 }
        let integerEnd = digits(from: index)
        guard integerEnd > index else { return (index, false) }
        // A leading zero stands alone: "01" is "0" followed by a stray digit.
        if data[index] == UInt8(ascii: "0"), integerEnd > index + 1 { return (index + 1, false) }
        index = integerEnd
        if index < count, data[index] == UInt8(ascii: ".") {
            let fractionEnd = digits(from: index + 1)
            guard fractionEnd > index + 1 else { return (index + 1, false) }
            index = fractionEnd
        }
        if index < count, data[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count, data[index] == UInt8(ascii: "+") || data[index] == UInt8(ascii: "-") { index += 1 }
            let exponentEnd = digits(from: index)
            guard exponentEnd > index else { return (index, false) }
            index = exponentEnd
        }
        return (index, true)
    }

    /// 4 when `true` or `null` starts at `index`, 5 for `false`, otherwise 0 (also when the
    /// data ends first; the letter-by-letter path then decides).
    @inlinable @inline(__always)
    static func literalLength(_ data: UnsafeRawBufferPointer, at index: Int) -> Int {
        guard index + 4 <= data.count else { return 0 }
        let word = UInt32(littleEndian: data.loadUnaligned(fromByteOffset: index, as: UInt32.self))
        // "true", "null" and "fals" as little-endian words.
        if word == 0x6575_7274 || word == 0x6C6C_756E { return 4 }
        if word == 0x736C_6166, index + 5 <= data.count, data[index + 4] == UInt8(ascii: "e") { return 5 }
        return 0
    }

    @usableFromInline static let literals: [[UInt8]] = [Array("true".utf8), Array("false".utf8), Array("null".utf8)]

    @inlinable static func isLiteral(_ word: Slice<UnsafeRawBufferPointer>) -> Bool {
        let start = word.startIndex
        switch word.count {
        case 4:
            let (a, b, c, d) = (word[start], word[start + 1], word[start + 2], word[start + 3])
            return (a == 0x74 && b == 0x72 && c == 0x75 && d == 0x65) || (a == 0x6E && b == 0x75 && c == 0x6C && d == 0x6C)
        case 5:
            return word[start] == 0x66 && word[start + 1] == 0x61 && word[start + 2] == 0x6C && word[start + 3] == 0x73 && word[start + 4] == 0x65
        default:
            return false
        }
    }

    @inlinable static func isLiteralPrefix(_ word: Slice<UnsafeRawBufferPointer>) -> Bool {
        literals.contains { $0.starts(with: word) }
    }

    /// Where a piece of an open string handed out at `safe` (checked content up to there)
    /// ends instead: before a UTF-8 sequence the piece would cut, and before a high
    /// surrogate's `\uXXXX` whose low half has not come, so that every piece reads as text
    /// by itself (a terminal's display showed a cut `é` as two U+FFFD, a cut pair as two
    /// escapes). At most nine bytes earlier; the rest is carried to the next piece.
    @usableFromInline static func pieceEnd(_ data: UnsafeRawBufferPointer, from start: Int, safe: Int) -> Int {
        let end = start + UTF8Cut.wholeLength(UnsafeRawBufferPointer(rebasing: data[start..<safe]))
        // `\uD800`…`\uDBFF` as the last six bytes, its backslash not itself escaped (an odd
        // run of backslashes ends there).
        guard end - start >= 6, data[end - 6] == UInt8(ascii: "\\"), data[end - 5] == UInt8(ascii: "u"),
              data[end - 4] | 0x20 == UInt8(ascii: "d") else { return end }
        let third = data[end - 3] | 0x20
        guard third == UInt8(ascii: "8") || third == UInt8(ascii: "9") || third == UInt8(ascii: "a") || third == UInt8(ascii: "b")
        else { return end }
        var backslashes = 0
        var index = end - 6
        while index >= start, data[index] == UInt8(ascii: "\\") { backslashes += 1; index -= 1 }
        return backslashes % 2 == 1 ? end - 6 : end
    }

    @inlinable static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102)
    }
}

/// Which kind each open container is (object or array), kept as bits: the innermost 64 in
/// one word, deeper ones in an array touched only past that depth.
@usableFromInline
struct ContainerStack {
    /// Bit 0 is the innermost container (1 for an object), bit 1 the one around it, and so on.
    @usableFromInline var window: UInt64 = 0
    /// The containers pushed out of the window, outermost first.
    @usableFromInline var spilled: [Bool] = []
    @usableFromInline var depth = 0

    @inlinable init() {}

    /// Whether the innermost container is an object (only when `depth > 0`).
    @inlinable var top: Bool { window & 1 == 1 }

    // Inlined whole into the scanning loop; the spill past 64 levels is a call of its own, so
    // the loop's code does not depend on how the compiler weighs the array operations.
    @inlinable @inline(__always) mutating func push(_ isObject: Bool) {
        if _slowPath(depth >= 64) { spill() }
        window = window << 1 | (isObject ? 1 : 0)
        depth += 1
    }

    @inlinable @inline(__always) mutating func pop() {
        window >>= 1
        depth -= 1
        if _slowPath(depth >= 64) { unspill() }
    }

    @usableFromInline @inline(never) mutating func spill() {
        spilled.append(window >> 63 == 1)
    }

    @usableFromInline @inline(never) mutating func unspill() {
        if let outer = spilled.popLast() { window |= (outer ? 1 : 0) << 63 }
    }
}

/// A sink that ignores tokens (validation only).
package struct DiscardingSink: JSONTokenSink {
    package init() {}

    package mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {}
}

/// A sink that keeps copies of whole tokens (small documents: config files, tests).
package struct CollectingSink: JSONTokenSink {
    package init() {}

    package var tokens: [(kind: JSONTokenKind, bytes: [UInt8], isKey: Bool)] = []
    private var pending: [UInt8] = []

    package mutating func token(_ kind: JSONTokenKind, _ bytes: UnsafeRawBufferPointer, isKey: Bool, complete: Bool) {
        pending.append(contentsOf: bytes)
        guard complete else { return }
        tokens.append((kind, pending, isKey))
        pending.removeAll(keepingCapacity: true)
    }
}
