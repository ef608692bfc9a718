import AFEngine

/// How `--report=json` writes a response body: the JSON value itself when the body is JSON
/// (after an anti-XSSI prefix, without the whitespace between its tokens), a string when it
/// is UTF-8 text without NUL, else `{"base64": …}`. The form is decided, and the body
/// written, a piece at a time from where `ReportBody` keeps it (`ReportBodySource`).
///
/// The state carried from piece to piece lives in objects whose methods the replay calls:
/// closures that capture variables and hand them on `inout` (a scanner's sink, the output
/// buffer) through the replay's nested closures made ThreadSanitizer's instrumentation fault
/// in Swift 6.3.1.
final class ReportBodyWriter {
    enum Form: Equatable {
        /// The JSON after the first `skip` bytes (an anti-XSSI prefix).
        case json(skip: Int)
        case text
        case base64
    }

    /// Output waiting past this size goes to the channel.
    static let flushSize = 256 * 1024

    /// What waits to be written to `out`.
    private(set) var pending: [UInt8]
    private let out: OutputChannel
    private var compactor = Compactor()
    /// Compacted JSON whose last character the piece cut.
    private var compacted: [UInt8] = []
    /// Bytes of a base64 group the piece cut.
    private var carry: [UInt8] = []
    /// Bytes of the anti-XSSI prefix still to skip before the JSON.
    private var skipped = 0

    /// A writer that appends to `pending` and hands it to `out` whenever it has grown past
    /// `flushSize`.
    init(pending: [UInt8], out: OutputChannel) {
        self.pending = pending
        self.out = out
    }

    static func form(of body: some ReportBodySource) throws(AFError) -> Form {
        let (prefix, _) = BodyPrinter.splitXSSI(body.prefix(BodyPrinter.xssiLimit))
        let json = JSONCheck(skip: prefix.count)
        try body.replay(json.take)
        if json.isValid { return .json(skip: prefix.count) }
        let text = TextCheck()
        try body.replay(text.take)
        return text.isValid ? .text : .base64
    }

    /// Appends the body's value in `form`.
    func write(_ body: some ReportBodySource, form: Form) throws(AFError) {
        switch form {
        case .json(let skip):
            skipped = skip
            try body.replay(json)
            // The scanner lets any bytes through inside strings; the report is UTF-8, so
            // stray bytes become U+FFFD, as they do everywhere else in it.
            pending.append(contentsOf: String(decoding: compacted, as: UTF8.self).utf8)
        case .text:
            pending.append(UInt8(ascii: "\""))
            try body.replay(text)
            pending.append(UInt8(ascii: "\""))
        case .base64:
            pending.append(contentsOf: #"{"base64": ""#.utf8)
            try body.replay(base64)
            pending.append(contentsOf: Base64.encode(carry).utf8)
            pending.append(contentsOf: "\"}".utf8)
        }
    }

    /// Appends `bytes` as they are.
    func append<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        pending.append(contentsOf: bytes)
    }

    private func json(_ piece: UnsafeRawBufferPointer) throws(AFError) -> Bool {
        let start = min(piece.count, skipped)
        skipped -= start
        compactor.append(UnsafeRawBufferPointer(rebasing: piece[start...]), to: &compacted)
        let whole = compacted.withUnsafeBytes { UTF8Cut.wholeLength($0) }
        pending.append(contentsOf: String(decoding: compacted[..<whole], as: UTF8.self).utf8)
        compacted.removeSubrange(..<whole)
        try flushIfFull()
        return true
    }

    private func text(_ piece: UnsafeRawBufferPointer) throws(AFError) -> Bool {
        JSONWriter.appendStringContent(piece, to: &pending)
        try flushIfFull()
        return true
    }

    private func base64(_ piece: UnsafeRawBufferPointer) throws(AFError) -> Bool {
        var rest = piece[...]
        if !carry.isEmpty {
            let taken = min(3 - carry.count, rest.count)
            carry.append(contentsOf: rest.prefix(taken))
            rest = rest.dropFirst(taken)
            guard carry.count == 3 else { return true }
            pending.append(contentsOf: Base64.encode(carry).utf8)
            carry = []
        }
        let whole = rest.count / 3 * 3
        let encoded = UnsafeRawBufferPointer(rebasing: rest.prefix(whole)).withMemoryRebound(to: UInt8.self) { Base64.encode($0) }
        pending.append(contentsOf: encoded.utf8)
        carry.append(contentsOf: rest.dropFirst(whole))
        try flushIfFull()
        return true
    }

    private func flushIfFull() throws(AFError) {
        guard pending.count >= Self.flushSize else { return }
        try out.write(pending)
        pending.removeAll(keepingCapacity: true)
    }

    /// Whether the body past `skip` is one valid JSON value; stops at the first error.
    private final class JSONCheck {
        private var scanner = JSONScanner()
        private var sink = DiscardingSink()
        private var skip: Int
        private var failed = false
        private var empty = true

        init(skip: Int) {
            self.skip = skip
        }

        func take(_ piece: UnsafeRawBufferPointer) -> Bool {
            let start = min(piece.count, skip)
            skip -= start
            let rest = UnsafeRawBufferPointer(rebasing: piece[start...])
            if !rest.isEmpty { empty = false }
            do {
                try scanner.feed(rest, into: &sink)
            } catch {
                failed = true
            }
            return !failed
        }

        var isValid: Bool {
            guard !failed, !empty else { return false }
            do {
                try scanner.finish(into: &sink)
            } catch {
                return false
            }
            return true
        }
    }

    /// Whether the body is UTF-8 text without NUL; stops at the first stray byte.
    private final class TextCheck {
        /// The start of a character the last piece cut.
        private var carry: [UInt8] = []
        private var failed = false

        func take(_ piece: UnsafeRawBufferPointer) -> Bool {
            var joined = carry
            joined.append(contentsOf: piece)
            let whole = joined.withUnsafeBytes { UTF8Cut.wholeLength($0) }
            failed = joined.contains(0) || String(validating: joined[..<whole], as: UTF8.self) == nil
            carry = Array(joined[whole...])
            return !failed
        }

        var isValid: Bool { !failed && carry.isEmpty }
    }

    /// Valid JSON without the whitespace between tokens, every token as it came, written a
    /// piece at a time.
    struct Compactor {
        private var inString = false
        private var escaped = false

        mutating func append(_ json: UnsafeRawBufferPointer, to out: inout [UInt8]) {
            out.reserveCapacity(out.count + json.count)
            for byte in json {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                    out.append(byte)
                } else if byte == 32 || byte == 9 || byte == 10 || byte == 13 {
                    continue
                } else {
                    if byte == UInt8(ascii: "\"") { inString = true }
                    out.append(byte)
                }
            }
        }
    }
}
