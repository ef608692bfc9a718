@testable import AFEngine
import AFTestSupport
import Foundation
import Testing

/// The engine states facts; advice about command-line options is the command line's.
@Suite struct EngineBoundaryTests {
    /// What a fresh parser answers to each line, fed one `consume` per line.
    static func steps(_ lines: [[UInt8]]) -> [ResponseHeadParser.Step] {
        var parser = ResponseHeadParser()
        return lines.map { line in line.withUnsafeBytes { parser.consume($0) } }
    }

    static func steps(_ lines: [String]) -> [ResponseHeadParser.Step] {
        steps(lines.map { Array($0.utf8) })
    }

    @Test func noEngineSourceNamesACommandLineOption() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let engine = root.appendingPathComponent("Sources/AFEngine").path
        let files = FileManager.default.enumerator(atPath: engine)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        #expect(files.count > 30)
        var offenders: [String] = []
        for file in files {
            let text = try String(contentsOfFile: engine + "/" + file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.range(of: "--[a-z]", options: .regularExpression) != nil {
                offenders.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }

    @Test func limitFailuresCarryTheLimitAsAFact() {
        var parser = ResponseHeadParser()
        parser.maxHeaders = 1
        var step = ResponseHeadParser.Step.needMore
        for line in ["HTTP/1.1 200 OK\r\n", "A: 1\r\n", "B: 2\r\n"] {
            step = Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        }
        guard case .failure(.transport(let failure)) = step else {
            Issue.record("expected a failure, got \(step)")
            return
        }
        #expect(failure.kind == .limitExceeded)
        #expect(failure.cause == .tooManyHeaderLines(limit: 1))
        #expect(failure.message == "the response has more than 1 header line")
    }

    /// Header bytes that are not UTF-8 are read as ISO-8859-1 (they were U+FFFD, and the byte
    /// was lost); in a `Location`, which is followed, they are percent-encoded instead.
    @Test func headerBytesThatAreNotUTF8AreKept() {
        let lines: [[UInt8]] = [
            Array("HTTP/1.1 302 Found\r\n".utf8), Array("X-Latin: caf".utf8) + [0xE9, 13, 10],
            Array("X-UTF8: caf\u{E9}\r\n".utf8), Array("Location: /caf".utf8) + [0xE9] + Array(" x?q=".utf8) + [0xFF, 13, 10],
            Array("Location-Like: /caf\u{E9}\r\n".utf8), [13, 10],
        ]
        let step = Self.steps(lines).last
        guard case .complete(let head) = step else {
            Issue.record("expected the head, got \(String(describing: step))")
            return
        }
        #expect(head.headers.value(for: "X-Latin") == "caf\u{E9}")
        #expect(head.headers.value(for: "X-UTF8") == "caf\u{E9}")
        #expect(head.headers.value(for: .location) == "/caf%E9 x?q=%FF")
        #expect(head.headers.value(for: "Location-Like") == "/caf\u{E9}")
    }

    /// Trailers (lines after the final head) are ignored but counted: libcurl keeps each one,
    /// so a server sending them without end grew memory without end (1.6 GB in 20 s).
    @Test func trailerLinesAreLimitedLikeHeaderLines() {
        for (trailers, fails) in [(2, false), (3, true)] {
            var parser = ResponseHeadParser()
            parser.maxHeaders = 2
            var steps: [ResponseHeadParser.Step] = []
            for line in ["HTTP/1.1 200 OK\r\n", "A: 1\r\n", "\r\n"] + Array(repeating: "T: 1\r\n", count: trailers) {
                steps.append(Array(line.utf8).withUnsafeBytes { parser.consume($0) })
            }
            guard case .complete(let head) = steps[2] else {
                Issue.record("expected the head, got \(steps[2])")
                continue
            }
            #expect(head.headers.value(for: "A") == "1")
            guard case .failure(.transport(let failure)) = steps.last, fails else {
                if fails { Issue.record("expected a failure, got \(String(describing: steps.last))") }
                continue
            }
            #expect(failure.cause == .tooManyHeaderLines(limit: 2))
            #expect(failure.message == "the response has more than 2 trailer lines")
        }
        // A new head (an authentication round trip) starts the count again.
        var parser = ResponseHeadParser()
        parser.maxHeaders = 2
        var last = ResponseHeadParser.Step.needMore
        for line in ["HTTP/1.1 401 No\r\n", "\r\n", "T: 1\r\n", "T: 2\r\n", "HTTP/1.1 200 OK\r\n", "\r\n", "T: 1\r\n", "T: 2\r\n"] {
            last = Array(line.utf8).withUnsafeBytes { parser.consume($0) }
            if case .failure = last { break }
        }
        guard case .needMore = last else {
            Issue.record("expected no failure, got \(last)")
            return
        }
    }

    /// Header names keep their spelling and compare by their `lowercased()` form, which an
    /// ASCII name gets byte by byte.
    @Test(arguments: [
        Array("Content-Type".utf8), Array("content-type".utf8), Array("X-A".utf8), Array("".utf8),
        Array("ÄÖ-Ü".utf8), Array("x-\u{130}".utf8), [0x58, 0xFF, 0x59], [0x5B, 0x40, 0x5A, 0x7B],
    ])
    func headerNamesCompareLowerCased(bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let made = HTTPHeaders.Name(text)
        #expect(made.rawValue == text)
        #expect(made.canonical == text.lowercased())
        #expect(made == HTTPHeaders.Name(text.uppercased()))
    }

    @Test func headerLinesKeepTheirNamesAndTrimmedValues() {
        var parser = ResponseHeadParser()
        var step = ResponseHeadParser.Step.needMore
        for line in ["HTTP/1.1 200 OK\r\n", "Content-TYPE : \t text/plain \r\n", "x-lower:1\r\n", "Empty:\r\n", "\r\n"] {
            step = Array(line.utf8).withUnsafeBytes { parser.consume($0) }
        }
        guard case .complete(let head) = step else {
            Issue.record("expected a head, got \(step)")
            return
        }
        #expect(head.headers.map(\.name.rawValue) == ["Content-TYPE", "x-lower", "Empty"])
        #expect(head.headers.map(\.value) == ["text/plain", "1", ""])
        #expect(head.headers.value(for: .contentType) == "text/plain")
        let noColon = Array("HTTP/1.1 200 OK\r\n".utf8).withUnsafeBytes { parser.consume($0) }
        #expect({ if case .needMore = noColon { true } else { false } }())
        guard case .failure(.transport(let failure)) = Array("no colon here\r\n".utf8).withUnsafeBytes({ parser.consume($0) }) else {
            Issue.record("a line without a colon must fail")
            return
        }
        #expect(failure.message == "malformed response: the header line 'no colon here' has no colon")
    }

    /// A Content-Length past what 64 bits hold is refused (libcurl would ignore it and read
    /// to the close); the largest that fits, and leading zeros, are a length like any other.
    /// Anything but digits (or one number repeated in a list) is refused too: libcurl read
    /// `0x2` as 0 and dropped the body, `+2` and `2 2` as 2 (RFC 9112 makes them errors).
    @Test(arguments: [
        ("9223372036854775807", nil), ("9223372036854775808", "is larger than any body can be"),
        ("99999999999999999999999", "is larger than any body can be"), ("0000000000000000000000000001", nil), ("12", nil),
        ("2, 2", nil), ("2,2,2", nil), ("2, 3", "is not a number of bytes"), ("+2", "is not a number of bytes"),
        ("0x2", "is not a number of bytes"), ("2 2", "is not a number of bytes"), ("2,", "is not a number of bytes"),
        ("-1", "is not a number of bytes"), ("1.0", "is not a number of bytes"), ("\u{661}", "is not a number of bytes"),
    ] as [(String, String?)])
    func contentLengthsAreNumbers(value: String, refusal: String?) {
        let steps = Self.steps(["HTTP/1.1 200 OK\r\n", "Content-Length: \(value)\r\n", "\r\n"])
        // The first failure, or else the last answer.
        let outcome = steps.first { if case .failure = $0 { true } else { false } } ?? steps.last
        switch outcome {
        case .complete(let head): #expect(refusal == nil && head.headers.value(for: .contentLength) == value, "\(value)")
        case .failure(.transport(let failure)):
            #expect(refusal.map { failure.message == "malformed response: the Content-Length '\(value)' \($0)" } ?? false, "\(value): \(failure.message)")
        default: Issue.record("\(value): \(steps)")
        }
    }

    /// libcurl takes a status line in any case (`http/1.1 200`); af said the server "sent a
    /// body without a response head". Such a response now names its first line; after a
    /// final head, lines without a status line are trailers as before.
    @Test func aResponseMustStartWithAStatusLine() {
        let steps = Self.steps(["http/1.1 200 OK\r\n", "A: 1\r\n", "\r\n"])
        if case .failure(.transport(let failure)) = steps.first {
            #expect(failure.message == "malformed response: it does not start with a status line: 'http/1.1 200 OK'")
        } else {
            Issue.record("\(steps)")
        }
        let trailers = Self.steps(["HTTP/1.1 200 OK\r\n", "\r\n", "X-Trailer: 1\r\n", "\r\n"])
        #expect(trailers.count == 4)
        for step in trailers.dropFirst(2) {
            guard case .needMore = step else { Issue.record("a trailer is not a failure: \(trailers)"); break }
        }
    }

    /// Status lines, read as bytes: version, three digits, and the reason without the
    /// blanks around it.
    @Test(arguments: [
        ("HTTP/1.1 200 OK", "HTTP/1.1 200 OK"), ("HTTP/2 204", "HTTP/2 204 "), ("HTTP/1.0 404  Not  Found \t", "HTTP/1.0 404 Not  Found"),
        ("HTTP/1.1  999 x", "HTTP/1.1 999 x"), ("HTTP/1.1 100 Continue", nil), ("HTTP/1.1 20 OK", "malformed"),
        ("HTTP/1.1 2000 OK", "malformed"), ("HTTP/1.1 +200 OK", "malformed"), ("HTTP/1.1 099 x", "malformed"),
        ("HTTP/1.1", "malformed"), ("HTTP/1.1\t200 OK", "malformed"), ("HTTP/1.1 2x0 OK", "malformed"),
    ] as [(String, String?)])
    func statusLines(line: String, expected: String?) {
        let steps = Self.steps([line + "\r\n", "A: 1\r\n", "\r\n"])
        switch (steps[0], steps[2]) {
        case (.failure(.transport(let failure)), _):
            #expect(expected == "malformed" && failure.message.hasPrefix("malformed response: the status line 'HTTP/") && failure.message.hasSuffix("' has no status code from 100 to 999"), "\(line)")
        case (.needMore, .complete(let head)):
            #expect("\(head.httpVersion) \(head.status) \(head.reason)" == expected, "\(line)")
            #expect(head.headers.value(for: "A") == "1")
        case (.needMore, .informational(let head)):
            #expect(expected == nil && head.status == 100 && head.headers.value(for: "A") == "1", "\(line): an interim response is handed on as such")
        default:
            Issue.record("\(line): \(steps)")
        }
    }
}

/// A retrier that gives up with its own error keeps the failure it was asked about.
@Suite struct RetrierGivesUpTests {
    struct GivingUp: RequestRetrier {
        func retry(_ request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
            completion(.doNotRetryWithError(.adaptationFailed(reason: "the token command failed")))
        }
    }

    @Test func bothErrorsAreKept() throws {
        let server = try AFTestSupport.TestServer()
        let session = Session(configuration: .init(interceptor: Interceptor(adapters: [], retriers: [GivingUp()])))
        let response = session.request(RequestDescription(url: server.url("/status/503")), validation: StatusValidation(acceptable: [200...299]))
            .resume().waitForCompletion()
        let expected = AFError.requestRetryFailed(
            retryError: .adaptationFailed(reason: "the token command failed"),
            originalError: .responseValidationFailed(status: 503, reason: "Service Unavailable")
        )
        #expect(response.error == expected)
        #expect(response.error?.underlyingError == .adaptationFailed(reason: "the token command failed"))
        #expect(response.attempts.count == 1)
    }
}

/// Retriers see every response: a status can be retried without being called a failure.
@Suite struct ResponseRetryHookTests {
    @Test func aRetryableStatusIsRetriedWithoutValidation() throws {
        let server = try AFTestSupport.TestServer()
        server.route("/flaky") { _, hit in
            hit < 3 ? .response(status: 503) : .response(status: 200, body: Array("ok".utf8))
        }
        let session = Session(configuration: .init(interceptor: Interceptor(retriers: [RetryPolicy(retryLimit: 3, delayScale: 0.01)])))
        defer { session.shutdown() }
        let response = session.request(RequestDescription(url: server.url("/flaky"))).resume().waitForCompletion()
        #expect(response.status == 200)
        #expect(response.error == nil)
        #expect(response.attempts.map { $0.response?.status } == [503, 503, 200])
        #expect(response.attempts.map(\.error) == [nil, nil, nil], "a 503 nobody validated is not an error")
    }

    @Test func exhaustedRetriesEndWithTheLastResponseAndNoError() throws {
        let server = try AFTestSupport.TestServer()
        let session = Session(configuration: .init(interceptor: Interceptor(retriers: [RetryPolicy(retryLimit: 1, delayScale: 0.01)])))
        defer { session.shutdown() }
        let response = session.request(RequestDescription(url: server.url("/status/503"))).resume().waitForCompletion()
        #expect(response.status == 503)
        #expect(response.error == nil)
        #expect(response.attempts.count == 2)
        #expect(server.hits("/status/503") == 2)
    }
}
