/// Assembles response heads from the header lines libcurl delivers one at a time.
///
/// Interim (1xx) heads are kept with the head they precede (`informational`, up to
/// `ResponseHead.keptInformational`); a status line after a complete head starts a new one
/// (an authentication round trip inside one transfer); lines after the final head are
/// trailers (`trailers`), counted against the same limit as header lines: libcurl keeps
/// every trailer it reads, so a server sending trailers without end would otherwise grow
/// memory without end.
struct ResponseHeadParser {
    enum Step {
        case needMore
        case complete(ResponseHead)
        /// An informational (1xx) head; the final head will carry it too.
        case informational(ResponseHead)
        case failure(AFError)
    }

    var maxHeaders = 100
    /// The server's `host:port`, which failures name.
    var origin = ""
    private var version = ""
    private var status: Int?
    private var reason = ""
    private var headers = HTTPHeaders()
    private var lineCount = 0
    /// Interim heads received before the head being read.
    private var informational: [ResponseHead] = []
    /// The last interim head received before a final one (nil once that came).
    var lastInterim: ResponseHead? { informational.last }
    /// Lines after a complete head (trailers), until the next status line.
    private var trailerCount = 0
    /// The trailer fields after the final head's body (lines without a colon are left out).
    private(set) var trailers = HTTPHeaders()
    /// A final head was complete: lines without a status line before them are trailers.
    private var finalHeadSeen = false
    /// Room reserved for a head's headers: most responses carry fewer.
    static let typicalHeaders = 16

    mutating func consume(_ raw: UnsafeRawBufferPointer) -> Step {
        var end = raw.count
        while end > 0, raw[end - 1] == 10 || raw[end - 1] == 13 { end -= 1 }
        // Header lines are read as bytes; only a status line, a continuation or an error
        // needs the whole line as text.
        let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<end])
        if bytes.isEmpty {
            guard let code = status else { return .needMore }
            if (100..<200).contains(code) && code != 101 {
                let head = ResponseHead(status: code, reason: reason, httpVersion: version, headers: headers)
                if informational.count < ResponseHead.keptInformational { informational.append(head) }
                reset()
                return .informational(head)
            }
            finalHeadSeen = true
            let head = ResponseHead(status: code, reason: reason, httpVersion: version, headers: headers, informational: informational)
            if !informational.isEmpty { informational = [] }
            reset()
            return .complete(head)
        }
        if Self.isStatusLine(bytes) {
            reset()
            return parseStatusLine(bytes)
        }
        guard status != nil else {
            // libcurl takes a status line in any case (`http/1.1 200`); HTTP's name is
            // case-sensitive, and af reads such a response as having no head at all.
            guard finalHeadSeen else { return malformed("it does not start with a status line: '\(Self.quoted(bytes))'") }
            trailerCount += 1
            if maxHeaders > 0, trailerCount > maxHeaders { return tooManyLines("trailer") }
            if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
                trailers.add(name: HTTPHeaders.Name(Self.trimmedText(raw, from: 0, to: colon)), value: Self.trimmedText(raw, from: colon + 1, to: end))
            }
            return .needMore
        }
        if bytes[0] == 32 || bytes[0] == 9 {
            headers.continueLastValue(with: Self.trimmedText(raw, from: 0, to: end))
            return .needMore
        }
        lineCount += 1
        // Room for a typical head at its first header, not before: a head without headers,
        // and the one after the last, allocate nothing.
        if lineCount == 1 { headers.reserveCapacity(Self.typicalHeaders) }
        if maxHeaders > 0, lineCount > maxHeaders { return tooManyLines("header") }
        var colon = 0
        while colon < end, raw[colon] != UInt8(ascii: ":") { colon += 1 }
        guard colon < end else {
            return malformed("the header line '\(Self.quoted(bytes))' has no colon")
        }
        let header = HTTPHeaders.Name(Self.trimmedText(raw, from: 0, to: colon))
        let value = Self.trimmedText(raw, from: colon + 1, to: end, percentEncodingOtherBytes: header == .location)
        if header == .contentLength {
            switch Self.contentLength(value) {
            case .valid(let length):
                if let earlier = headers.value(for: .contentLength), case .valid(let before) = Self.contentLength(earlier), before != length {
                    // Two lengths leave the body's end to whoever reads it: a response-splitting hazard.
                    return malformed("two different Content-Length values ('\(earlier.prefix(40))' and '\(value.prefix(40))')")
                }
            case .tooLarge:
                // libcurl ignores a length past 2^63 and reads to the close, so a body cut
                // short would pass as complete.
                return malformed("the Content-Length '\(value.prefix(40))' is larger than any body can be")
            case .invalid:
                // libcurl reads the digits it can ('0x2' is 0, '+2' and '2 2' are 2) and takes the
                // rest of the bytes for the next response or drops them; RFC 9112 (6.3) makes an
                // invalid length an unrecoverable error.
                return malformed("the Content-Length '\(value.prefix(40))' is not a number of bytes")
            }
        }
        headers.add(name: header, value: value)
        return .needMore
    }

    /// The bytes `start..<end` as text, without leading and trailing spaces and tabs.
    ///
    /// Bytes that are not UTF-8 are read as ISO-8859-1, as HTTP/1.1 once defined header text
    /// (HTTPie shows them so too): `caf\xE9` is `café`, where decoding as UTF-8 alone made
    /// it `caf\u{FFFD}` and lost the byte. With `percentEncodingOtherBytes` (a `Location`,
    /// which is followed) they become `%XX` instead, so the redirect asks for the bytes the
    /// server named, as curl does.
    private static func trimmedText(_ raw: UnsafeRawBufferPointer, from start: Int, to end: Int, percentEncodingOtherBytes: Bool = false) -> String {
        var low = start
        var high = end
        while low < high, raw[low] == 32 || raw[low] == 9 { low += 1 }
        while high > low, raw[high - 1] == 32 || raw[high - 1] == 9 { high -= 1 }
        let bytes = UnsafeRawBufferPointer(rebasing: raw[low..<high])
        // ASCII, the common case, without `String(validating:)`, which is not specialised and
        // looks up generic metadata on every call (3.6 % more instructions for a batch).
        if !bytes.contains(where: { $0 >= 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        guard percentEncodingOtherBytes else { return String.utf8OrLatin1(bytes).text }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var text = ""
        for byte in bytes {
            if byte < 0x80 { text.unicodeScalars.append(Unicode.Scalar(byte)) } else { text += "%" + Hex.encode([byte], uppercase: true) }
        }
        return text
    }

    enum ContentLength: Equatable {
        case valid(Int64)
        case tooLarge
        case invalid
    }

    /// A `Content-Length` value: digits, or a comma-separated list of one number repeated
    /// (which RFC 9112 lets a recipient read as that number, as a proxy may join two
    /// headers); anything else is invalid.
    static func contentLength(_ value: String) -> ContentLength {
        // In place, without splitting into arrays: it runs for nearly every response.
        value.utf8.withContiguousStorageIfAvailable(contentLength) ?? Array(value.utf8).withUnsafeBufferPointer(contentLength)
    }

    private static func contentLength(_ bytes: UnsafeBufferPointer<UInt8>) -> ContentLength {
        var result: Int64?
        var index = 0
        repeat {
            // One element: blanks, digits, blanks, then a comma or the end.
            while index < bytes.count, bytes[index] == 32 || bytes[index] == 9 { index += 1 }
            let start = index
            var number: Int64 = 0
            var tooLarge = false
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                let (times, overflow) = number.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times.addingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
                if overflow || carry { tooLarge = true } else { number = sum }
                index += 1
            }
            guard index > start else { return .invalid }
            while index < bytes.count, bytes[index] == 32 || bytes[index] == 9 { index += 1 }
            guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else { return .invalid }
            if tooLarge { return .tooLarge }
            if let result, result != number { return .invalid }
            result = number
            index += 1
        } while index <= bytes.count
        return result.map { .valid($0) } ?? .invalid
    }

    /// Whether a line starts with `HTTP/` (a status line), compared in place.
    private static func isStatusLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 5 && bytes[0] == UInt8(ascii: "H") && bytes[1] == UInt8(ascii: "T") && bytes[2] == UInt8(ascii: "T")
            && bytes[3] == UInt8(ascii: "P") && bytes[4] == UInt8(ascii: "/")
    }

    /// `VERSION SP STATUS [SP REASON]`, read as bytes (it comes with every response).
    private mutating func parseStatusLine(_ bytes: UnsafeRawBufferPointer) -> Step {
        let count = bytes.count
        var versionEnd = 0
        while versionEnd < count, bytes[versionEnd] != 32 { versionEnd += 1 }
        var codeStart = versionEnd
        while codeStart < count, bytes[codeStart] == 32 { codeStart += 1 }
        var codeEnd = codeStart
        var code = 0
        while codeEnd < count, bytes[codeEnd] != 32, codeEnd - codeStart < 4 {
            let digit = bytes[codeEnd] &- 48
            guard digit < 10 else { return malformedStatusLine(bytes) }
            code = code * 10 + Int(digit)
            codeEnd += 1
        }
        guard codeEnd - codeStart == 3, codeEnd == count || bytes[codeEnd] == 32, (100...999).contains(code) else {
            return malformedStatusLine(bytes)
        }
        version = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<versionEnd]), as: UTF8.self)
        status = code
        reason = codeEnd < count ? Self.trimmedText(bytes, from: codeEnd + 1, to: count) : ""
        return .needMore
    }

    private func malformedStatusLine(_ bytes: UnsafeRawBufferPointer) -> Step {
        malformed("the status line '\(Self.quoted(bytes))' has no status code from 100 to 999")
    }

    /// A response af cannot read, with what is wrong (`origin` names the server).
    private func malformed(_ problem: String) -> Step {
        let from = origin.isEmpty ? "" : " from \(origin)"
        return .failure(.transport(TransportFailure(kind: .malformedResponse, message: "malformed response\(from): \(problem)")))
    }

    /// A line to quote in a failure: its first 80 characters, without trailing blanks.
    private static func quoted(_ bytes: UnsafeRawBufferPointer) -> String {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 32 || bytes[end - 1] == 9 { end -= 1 }
        return String(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self).prefix(80))
    }

    /// Past `maxHeaders` lines of a kind ("header" or "trailer").
    private func tooManyLines(_ kind: String) -> Step {
        .failure(.transport(TransportFailure(
            kind: .limitExceeded,
            message: "the response has more than \(maxHeaders) \(kind) \(maxHeaders == 1 ? "line" : "lines")",
            cause: .tooManyHeaderLines(limit: maxHeaders)
        )))
    }

    /// Forgets the head so far; also what counts trailers, since a new head (an interim or
    /// an authentication round trip) or the end of one comes before any trailer line.
    private mutating func reset() {
        version = ""
        status = nil
        reason = ""
        headers = HTTPHeaders()
        lineCount = 0
        trailerCount = 0
        if !trailers.isEmpty { trailers = HTTPHeaders() }
    }
}
