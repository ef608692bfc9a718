import AFEngine

/// How `--report=json` writes a response body: the JSON value itself when the body is JSON
/// (after an anti-XSSI prefix, without the whitespace between its tokens), a string when it
/// is UTF-8 text without NUL, else `{"base64": …}`. The form is decided, and the body
/// written, a piece at a time from where `ReportBody` keeps it.
enum ReportBodyWriter {
    enum Form: Equatable {
        /// The JSON after the first `skip` bytes (an anti-XSSI prefix).
        case json(skip: Int)
        case text
        case base64
    }

    /// Output waiting past this size goes to the channel.
    static let flushSize = 256 * 1024

    static func form(of body: ReportBody) throws(AFError) -> Form {
        let (prefix, _) = BodyPrinter.splitXSSI(body.prefix(BodyPrinter.xssiLimit))
        if try isJSON(body, skipping: prefix.count) { return .json(skip: prefix.count) }
        return try isText(body) ? .text : .base64
    }

    /// Appends the body's value to `pending`, handing `pending` to `out` whenever it has
    /// grown past `flushSize`.
    static func write(_ body: ReportBody, form: Form, into pending: inout [UInt8], flushing out: OutputChannel) throws(AFError) {
        func flushIfFull() throws(AFError) {
            guard pending.count >= flushSize else { return }
            try out.write(pending)
            pending.removeAll(keepingCapacity: true)
        }
        switch form {
        case .json(let skip):
            // The scanner lets any bytes through inside strings; the report is UTF-8, so
            // stray bytes become U+FFFD, as they do everywhere else in it.
            var compactor = Compactor()
            var compacted: [UInt8] = []
            var offset = 0
            try body.replay { piece throws(AFError) in
                let start = min(piece.count, max(0, skip - offset))
                offset += piece.count
                compactor.append(UnsafeRawBufferPointer(rebasing: piece[start...]), to: &compacted)
                let whole = compacted.withUnsafeBytes { UTF8Cut.wholeLength($0) }
                pending.append(contentsOf: String(decoding: compacted[..<whole], as: UTF8.self).utf8)
                compacted.removeSubrange(..<whole)
                try flushIfFull()
                return true
            }
            pending.append(contentsOf: String(decoding: compacted, as: UTF8.self).utf8)
        case .text:
            pending.append(UInt8(ascii: "\""))
            try body.replay { piece throws(AFError) in
                JSONWriter.appendStringContent(piece, to: &pending)
                try flushIfFull()
                return true
            }
            pending.append(UInt8(ascii: "\""))
        case .base64:
            pending.append(contentsOf: #"{"base64": ""#.utf8)
            var carry: [UInt8] = []
            try body.replay { piece throws(AFError) in
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
            pending.append(contentsOf: Base64.encode(carry).utf8)
            pending.append(contentsOf: "\"}".utf8)
        }
    }

    /// Whether the body past `skip` is one valid JSON value; stops reading at the first
    /// error.
    private static func isJSON(_ body: ReportBody, skipping skip: Int) throws(AFError) -> Bool {
        var scanner = JSONScanner()
        var sink = DiscardingSink()
        var offset = 0
        var valid = true
        var empty = true
        try body.replay { piece throws(AFError) in
            let start = min(piece.count, max(0, skip - offset))
            offset += piece.count
            let rest = UnsafeRawBufferPointer(rebasing: piece[start...])
            if !rest.isEmpty { empty = false }
            do {
                try scanner.feed(rest, into: &sink)
            } catch {
                valid = false
            }
            return valid
        }
        guard valid, !empty else { return false }
        do {
            try scanner.finish(into: &sink)
        } catch {
            return false
        }
        return true
    }

    /// Whether the body is UTF-8 text without NUL; stops reading at the first stray byte.
    private static func isText(_ body: ReportBody) throws(AFError) -> Bool {
        var carry: [UInt8] = []
        var valid = true
        try body.replay { piece throws(AFError) in
            var joined = carry
            joined.append(contentsOf: piece)
            let whole = joined.withUnsafeBytes { UTF8Cut.wholeLength($0) }
            valid = !joined.contains(0) && String(validating: joined[..<whole], as: UTF8.self) != nil
            carry = Array(joined[whole...])
            return valid
        }
        return valid && carry.isEmpty
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
