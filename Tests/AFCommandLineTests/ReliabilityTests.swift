import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// SPEC §5–§6: retries, timeouts, validation and exit codes, proven with server-side counters.
@Suite struct RetryTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    /// A route that answers the given statuses in turn (the last one repeats).
    private func script(_ path: String, _ statuses: [Int], headers: [(String, String)] = []) {
        server.route(path) { _, hit in
            let status = statuses[min(hit, statuses.count) - 1]
            return .response(status: status, headers: headers + [("Content-Type", "text/plain")], body: Array("answer \(hit): \(status)\n".utf8))
        }
    }

    @Test func retriesUntilSuccessWithBackoff() throws {
        script("/flaky", [503, 503, 200])
        let result = InProcessAF.run(["--retry=2", server.url("/flaky")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "answer 3: 200\n")
        let requests = server.requests(to: "/flaky")
        #expect(requests.count == 3)
        #expect(requests[1].receivedAt - requests[0].receivedAt >= 0.5)
        #expect(requests[2].receivedAt - requests[1].receivedAt >= 1.0)
        #expect(result.err == """
        af: retrying in 500ms (attempt 2 of 3): server answered 503 Service Unavailable
        af: retrying in 1s (attempt 3 of 3): server answered 503 Service Unavailable

        """)
    }

    /// Redirect hops are not tries: after a redirect, the retry of the hop that failed was
    /// "attempt 3 of 2", and one failure after a redirect ended "(after 2 attempts)".
    @Test func triesAreCountedWithoutRedirectHops() {
        script("/hop-target", [500])
        server.route("/hop") { _, _ in .response(status: 302, headers: [("Location", "/hop-target")]) }
        let retried = InProcessAF.run(["-F", "--check-status", "--retry=1", "--retry-delay=0.01", server.url("/hop")])
        #expect(retried.status == 5)
        #expect(retried.err == """
        af: retrying in 10ms (attempt 2 of 2): server answered 500 Internal Server Error
        af: error: server answered 500 Internal Server Error (after 2 attempts)

        """)
        let once = InProcessAF.run(["-F", "--check-status", server.url("/hop")])
        #expect(once.err == "af: error: server answered 500 Internal Server Error\n")
    }

    @Test func aRunThatExitsZeroReportsNoErrorAfterStatusRetries() throws {
        script("/busy", [503])
        let result = InProcessAF.run(["--retry=1", "--retry-delay=0.01", "--report=json", server.url("/busy")])
        #expect(result.status == 0, "\(result.err)")
        let report = try #require(JSONHelpers.object(result.out))
        #expect(report["error"] is NSNull)
        #expect((report["attempts"] as? [Any])?.count == 2)
        #expect(server.hits("/busy") == 2)
    }

    @Test func quietLeavesOutRetryNoticesButNotErrors() {
        script("/quiet", [503])
        let result = InProcessAF.run(["-q", "--check-status", "--retry=1", "--retry-delay=0.1", server.url("/quiet")])
        #expect(result.status == 5)
        #expect(result.out.isEmpty)
        #expect(result.err == "af: error: server answered 503 Service Unavailable (after 2 attempts)\n")
        #expect(server.hits("/quiet") == 2)
    }

    @Test func jitterDrawsEachDelayBelowItsBackoffValue() throws {
        script("/jitter", [503, 503, 503, 200])
        let result = InProcessAF.run(["--retry=3", "--retry-delay=0.2", "--retry-jitter", server.url("/jitter")])
        #expect(result.status == 0, "\(result.err)")
        let notices = result.err.split(separator: "\n").map(String.init)
        #expect(notices.count == 3)
        // Each notice reads "af: retrying in Nms (attempt K of 4): …"; without jitter they would
        // say exactly 200ms, 400ms and 800ms.
        let delays = notices.compactMap { line -> Int? in
            guard let start = line.range(of: "retrying in "), let end = line.range(of: "ms (", range: start.upperBound..<line.endIndex)
            else { return line.contains("retrying in 0s") ? 0 : nil }
            return Int(line[start.upperBound..<end.lowerBound])
        }
        #expect(delays.count == 3, "\(notices)")
        for (delay, bound) in zip(delays, [200, 400, 800]) { #expect(delay <= bound) }
        #expect(delays != [200, 400, 800])
        let requests = server.requests(to: "/jitter")
        #expect(requests.count == 4)
        for index in 1..<requests.count {
            let gap = requests[index].receivedAt - requests[index - 1].receivedAt
            #expect(gap >= Double(delays[index - 1]) / 1000 - 0.01)
        }
    }

    @Test func exhaustedRetriesKeepTheLastResponse() {
        script("/down", [503])
        let plain = InProcessAF.run(["--retry=1", "--retry-delay=0.1", server.url("/down")])
        #expect(plain.status == 0)
        #expect(plain.out == "answer 2: 503\n")
        let checked = InProcessAF.run(["--retry=1", "--retry-delay=0.1", "--check-status", server.url("/down")])
        #expect(checked.status == 5)
        #expect(checked.err.hasSuffix("af: error: server answered 503 Service Unavailable (after 2 attempts)\n"))
        #expect(server.hits("/down") == 4)
    }

    /// `--stream` prints as the body comes, so with retries a 503's page and head went out,
    /// then the next attempt's body after it without its own head. An answer of another
    /// status than 2xx is held until the request ends with it; a 2xx streams.
    @Test func aStreamShowsOnlyTheAnswerTheRequestEndsWith() {
        script("/busy", [503, 200])
        let result = InProcessAF.run(["--stream", "--retry=1", "--retry-delay=0.01", "-p", "hb", server.url("/busy")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 14\n\nanswer 2: 200\n")
        script("/down", [503])
        let ended = InProcessAF.run(["--stream", "--retry=1", "--retry-delay=0.01", "-p", "hb", server.url("/down")])
        #expect(ended.status == 0)
        #expect(ended.out == "HTTP/1.1 503 Service Unavailable\nContent-Type: text/plain\nContent-Length: 14\n\nanswer 2: 503\n")
    }

    @Test func retryAfterSecondsIsHonoured() throws {
        script("/busy", [429, 200], headers: [("Retry-After", "2")])
        let result = InProcessAF.run(["--retry=1", server.url("/busy")])
        #expect(result.status == 0)
        let requests = server.requests(to: "/busy")
        #expect(requests.count == 2)
        #expect(requests[1].receivedAt - requests[0].receivedAt >= 2.0)
        #expect(result.err.contains("retrying in 2s"))
    }

    /// A `Retry-After` past what an integer holds was ignored: the retry came after the
    /// default 0.5 s instead of the longest wait allowed.
    @Test func anEndlessRetryAfterIsCapped() throws {
        script("/forever", [503, 200], headers: [("Retry-After", "99999999999999999999")])
        let result = InProcessAF.run(["--retry=1", "--retry-max-delay=1", server.url("/forever")])
        #expect(result.status == 0)
        #expect(result.err.contains("retrying in 1s"), "\(result.err)")
        let requests = server.requests(to: "/forever")
        #expect(requests.count == 2)
        #expect(requests[1].receivedAt - requests[0].receivedAt >= 1.0)
    }

    @Test func retryAfterDateIsHonouredAndCapped() throws {
        server.route("/date") { _, hit in
            let when = Date().addingTimeInterval(60)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            return .response(status: hit == 1 ? 503 : 200, headers: [("Retry-After", formatter.string(from: when))], body: [])
        }
        let result = InProcessAF.run(["--retry=1", "--retry-max-delay=1", server.url("/date")])
        #expect(result.status == 0)
        let requests = server.requests(to: "/date")
        #expect(requests.count == 2)
        let wait = requests[1].receivedAt - requests[0].receivedAt
        #expect(wait >= 1.0 && wait < 3)
    }

    @Test func retryAfterBeyondMaxTimeStopsAtOnce() {
        script("/later", [503, 200], headers: [("Retry-After", "30")])
        let started = Date()
        let result = InProcessAF.run(["--retry=3", "--retry-max-delay=60", "--retry-max-time=5", "--check-status", server.url("/later")])
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(result.status == 5)
        #expect(server.hits("/later") == 1)
    }

    @Test func maxTimeBoundsTheWholeRun() {
        script("/always", [503])
        let started = Date()
        let result = InProcessAF.run(["--retry=10", "--retry-delay=0.4", "--retry-max-time=1.5", "--check-status", server.url("/always")])
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(result.status == 5)
        #expect(server.hits("/always") == 3)
    }

    @Test func postIsNotRetriedUnlessAsked() {
        script("/submit", [503, 200])
        let once = InProcessAF.run(["--retry=2", "--retry-delay=0.1", "post", server.url("/submit"), "a=1"])
        #expect(once.status == 0)
        #expect(server.hits("/submit") == 1)
        script("/submit-again", [503, 200])
        let again = InProcessAF.run(["--retry=2", "--retry-delay=0.1", "--retry-all-methods", "post", server.url("/submit-again"), "a=1"])
        #expect(again.status == 0)
        #expect(server.hits("/submit-again") == 2)
        #expect(server.requests(to: "/submit-again").map(\.bodyText) == [#"{"a": "1"}"#, #"{"a": "1"}"#])
        // When the failure is the run's error, it says why --retry did not retry it.
        script("/submit-checked", [503, 200])
        let checked = InProcessAF.run(["--retry=2", "--retry-delay=0.1", "--check-status", "post", server.url("/submit-checked"), "a=1"])
        #expect(checked.status == 5)
        #expect(checked.err == "af: error: server answered 503 Service Unavailable (POST is not retried without --retry-all-methods)\n")
        script("/submit-404", [404])
        let notRetryable = InProcessAF.run(["--retry=2", "--check-status", "post", server.url("/submit-404"), "a=1"])
        #expect(notRetryable.err == "af: error: server answered 404 Not Found\n", "a 404 is not retried for any method")
    }

    @Test func retryOnReplacesTheStatusList() {
        script("/teapot", [418, 200])
        #expect(InProcessAF.run(["--retry=1", "--retry-delay=0.1", "--retry-on=418", server.url("/teapot")]).status == 0)
        #expect(server.hits("/teapot") == 2)
        script("/gateway", [502, 200])
        #expect(InProcessAF.run(["--retry=1", "--retry-delay=0.1", "--retry-on=418", server.url("/gateway")]).status == 0)
        #expect(server.hits("/gateway") == 1)
    }

    @Test func noRetryMeansExactlyOneRequest() {
        script("/once", [503])
        #expect(InProcessAF.run(["--retry=0", server.url("/once")]).status == 0)
        #expect(server.hits("/once") == 1)
    }

    @Test func droppedConnectionMidBodyIsRetriedAndTheBodyIsWhole() {
        let body = TestData.bytes(count: 200_000)
        server.route("/unstable") { _, hit in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nContent-Type: application/octet-stream\r\n\r\n")
                if hit == 1 {
                    connection.write(Array(body[0..<70_000]))
                    connection.close()
                } else {
                    connection.write(body)
                }
            }
        }
        let result = InProcessAF.run(["--retry=2", "--retry-delay=0.1", server.url("/unstable")])
        #expect(result.status == 0, "\(result.err)")
        let whole = result.stdout == body
        #expect(whole)
        #expect(server.hits("/unstable") == 2)
        #expect(result.err.contains("retrying in 100ms (attempt 2 of 3): the connection to 127.0.0.1:\(server.port) broke during the response body") || result.err.contains("closed the connection before the body was complete"))
        // Without a validator to send in If-Range, the retry asks for the whole body again.
        #expect(server.requests(to: "/unstable").map { $0.header("Range") } == [nil, nil])
    }

    /// A printed body cut short was downloaded whole again by the retry (and a server that
    /// always broke at the same byte failed every attempt). With a validator for If-Range, the
    /// retry asks for the rest and the output is the whole body, shown under the head of the
    /// answer it belongs to; a server that ignores the range sends it whole again.
    @Test(arguments: [false, true])
    func aPrintedBodyCutShortIsResumedByARetry(ignoreRange: Bool) {
        server.serveRangedFile(size: 300_000, drop: 100_000, ignoreRange: ignoreRange)
        let result = InProcessAF.run(["--retry=2", "--retry-delay=0.01", "-p", "hb", server.url("/file/r.bin")])
        #expect(result.status == 0, "\(result.err)")
        let head = Array("HTTP/1.1 200 OK\nContent-Length: 300000\nETag: \"v1\"\nContent-Type: application/octet-stream\n\n".utf8)
        let whole = result.stdout == head + TestData.bytes(count: 300_000)
        #expect(whole, "\(result.stdout.count) bytes")
        let requests = server.requests(to: "/file/r.bin")
        #expect(requests.map { $0.header("Range") } == [nil, "bytes=100000-"])
        #expect(requests.last?.header("If-Range") == "\"v1\"")
    }

    /// A 503 between a body cut short and the retry that continues it threw the kept body
    /// away (the held answers had one spool), so the next retry started from byte 0. The
    /// 503 is held beside it; a run that ends with it prints it.
    @Test func aPrintedBodyCutShortIsResumedAcrossARetried503() {
        let whole = TestData.bytes(count: 300_000)
        server.route("/busy") { request, hit in
            switch hit {
            case 1:
                return .cut(Array(whole[..<100_000]), announcing: 300_000, headers: [("ETag", "\"v1\"")])
            case 2:
                return .response(status: 503, headers: [("Retry-After", "0")], body: Array("busy\n".utf8))
            default:
                return .response(status: 206, headers: [("Content-Range", "bytes 100000-299999/300000"), ("ETag", "\"v1\"")], body: Array(whole[100_000...]))
            }
        }
        let result = InProcessAF.run(["--retry=3", "--retry-delay=0.01", server.url("/busy")])
        #expect(result.status == 0, "\(result.err)")
        let same = result.stdout == whole
        #expect(same, "\(result.stdout.count) bytes")
        #expect(server.requests(to: "/busy").map { $0.header("Range") } == [nil, "bytes=100000-", "bytes=100000-"])
        server.route("/down") { _, hit in
            hit == 1 ? .cut(Array(whole[..<100_000]), announcing: 300_000, headers: [("ETag", "\"v1\"")]) : .response(status: 503, body: Array("busy\n".utf8))
        }
        let ended = InProcessAF.run(["--retry=2", "--retry-delay=0.01", "-p", "hb", server.url("/down")])
        #expect(ended.status == 0, "\(ended.err)")
        #expect(ended.out == "HTTP/1.1 503 Service Unavailable\nContent-Length: 5\n\nbusy\n")
    }

    /// An answer to the range af asked for to resume a printed body, that does not continue
    /// it, was printed as the response: the tail of the resource under a 206, exit 0. A range
    /// of a resource of another length than the one begun (no validator told it changed)
    /// does not continue it either.
    @Test(arguments: [
        ("elsewhere", "206 Partial Content (Content-Range: bytes 99000-299999/300000)"),
        ("refused", "416 Range Not Satisfiable (Content-Range: bytes */300000)"),
        ("longer", "206 Partial Content (Content-Range: bytes 100000-399999/400000)"),
    ])
    func anAnswerThatDoesNotContinueAPrintedBodyIsNotPrinted(mode: String, told: String) {
        server.route("/cut") { _, hit in
            guard hit > 1 else { return .cut(TestData.bytes(count: 100_000), announcing: 300_000, headers: [("ETag", "\"v1\"")]) }
            switch mode {
            case "refused": return .response(status: 416, headers: [("Content-Range", "bytes */300000")])
            case "longer": return .response(status: 206, headers: [("Content-Range", "bytes 100000-399999/400000")], body: Array(TestData.bytes(count: 400_000)[100_000...]))
            default: return .response(status: 206, headers: [("Content-Range", "bytes 99000-299999/300000")], body: Array(TestData.bytes(count: 300_000)[99_000...]))
            }
        }
        let result = InProcessAF.run(["--retry=2", "--retry-delay=0.01", "-p", "hb", server.url("/cut")])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty, "\(result.out.prefix(200))")
        #expect(result.err.hasSuffix("af: error: asked for the rest of the body from byte 100000, the server answered \(told), which does not continue it; run again to fetch it whole (after 2 attempts)\n"), "\(result.err)")
    }

    @Test func refusedConnectionsAreRetried() throws {
        let closed = try TestServer()
        let url = closed.url("/x")
        closed.stop()
        let result = InProcessAF.run(["--retry=2", "--retry-delay=0.05", url])
        #expect(result.status == 1)
        #expect(result.err.components(separatedBy: "af: retrying").count == 3)
        #expect(result.err.hasSuffix("af: error: connection refused by 127.0.0.1:\(closed.port); is the server running? (after 3 attempts)\n"))
    }

    @Test func stdinBodyIsSpooledAndResent() {
        script("/upload", [503, 201])
        let result = InProcessAF.run(["--retry=1", "--retry-delay=0.1", "put", server.url("/upload")], stdin: .bytes(Array("streamed".utf8)))
        #expect(result.status == 0)
        #expect(server.requests(to: "/upload").map(\.bodyText) == ["streamed", "streamed"])
    }
}

@Suite struct TimeoutAndStatusTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    @Test func stalledBodyTimesOut() {
        let result = InProcessAF.run(["--timeout=0.5", server.url("/stall")])
        #expect(result.status == 2)
        #expect(result.err == "af: error: no complete response from 127.0.0.1:\(server.port) within 500ms; raise --timeout if it needs longer\n")
    }

    @Test(arguments: [(301, Int32(3)), (404, 4), (418, 4), (500, 5), (503, 5), (200, 0), (204, 0)])
    func checkStatusMapsClasses(status: Int, exit: Int32) {
        let result = InProcessAF.run(["--check-status", server.url("/status/\(status)")])
        #expect(result.status == exit)
        if exit != 0 {
            #expect(result.err.hasPrefix("af: error: server answered \(status) "))
            #expect(result.err.split(separator: "\n").count == 1)
        }
        #expect(InProcessAF.run([server.url("/status/\(status)")]).status == 0)
    }

    @Test func redirectWithoutFollowSuggestsIt() {
        let result = InProcessAF.run(["--check-status", server.url("/redirect/1")])
        #expect(result.status == 3)
        #expect(result.err == "af: error: server answered 302 Found; add --follow to follow redirects\n")
    }

    /// A Location with a space or bytes past ASCII, as some servers send it, is followed with
    /// them percent-encoded (a space in the query as '+'), as curl and browsers follow it:
    /// an absolute one was refused as an invalid URL (a relative one libcurl encoded).
    @Test func aLocationWithSpacesIsFollowedEncoded() {
        let base = server.baseURL
        server.route("/spaced-absolute") { _, _ in .raw(Array("HTTP/1.1 302 Found\r\nLocation: \(base)/echo/a b?q=c d\r\nContent-Length: 0\r\n\r\n".utf8), close: true) }
        server.route("/spaced-relative") { _, _ in .raw(Array("HTTP/1.1 302 Found\r\nLocation: /echo/e f?q=\u{E9}\r\nContent-Length: 0\r\n\r\n".utf8), close: true) }
        let absolute = InProcessAF.run(["-F", server.url("/spaced-absolute")])
        #expect(absolute.status == 0, "\(absolute.err)")
        #expect(server.requests.last?.target == "/echo/a%20b?q=c+d")
        let relative = InProcessAF.run(["-F", server.url("/spaced-relative")])
        #expect(relative.status == 0, "\(relative.err)")
        #expect(server.requests.last?.target.lowercased() == "/echo/e%20f?q=%c3%a9")
    }

    /// A redirect status without a Location to go to (none, or an empty one, which libcurl
    /// ignores too) is the response itself, with or without --follow; --check-status says
    /// there is nothing to follow instead of suggesting --follow, and a 304 or 300 (which
    /// af never follows) gets no hint at all.
    @Test func redirectWithNothingToFollowIsTheResponse() throws {
        server.route("/no-location") { _, _ in .response(status: 302, headers: [], body: Array("here".utf8)) }
        server.route("/empty-location") { _, _ in .response(status: 301, headers: [("Location", "")], body: Array("here".utf8)) }
        server.route("/not-modified") { _, _ in .response(status: 304, headers: [("Location", "/get")]) }
        for (path, status, reason) in [("/no-location", 302, "Found"), ("/empty-location", 301, "Moved Permanently")] {
            for follow in [["--follow"], []] {
                let plain = InProcessAF.run(follow + [server.url(path)])
                #expect(plain.status == 0, "\(path) \(follow)")
                #expect(plain.out == "here")
                #expect(plain.err == "")
                let checked = InProcessAF.run(follow + ["--check-status", server.url(path)])
                #expect(checked.status == 3)
                #expect(checked.err == "af: error: server answered \(status) \(reason); the response has no Location to follow\n")
            }
        }
        // The hostile route's header is "Location:" with nothing after it at all.
        let bare = InProcessAF.run(["--follow", "--check-status", server.url("/hostile/empty-location")])
        #expect(bare.err == "af: error: server answered 302 Found; the response has no Location to follow\n")
        let report = InProcessAF.run(["--check-status", "--report=json", server.url("/empty-location")])
        let error = try #require(JSONHelpers.object(report.out)?["error"] as? [String: Any])
        #expect(error["message"] as? String == "server answered 301 Moved Permanently; the response has no Location to follow")
        for follow in [["--follow"], []] {
            let notModified = InProcessAF.run(follow + ["--check-status", server.url("/not-modified")])
            #expect(notModified.status == 3)
            #expect(notModified.err == "af: error: server answered 304 Not Modified\n")
        }
    }

    @Test func acceptStatusWidensCheckStatus() {
        #expect(InProcessAF.run(["--check-status", "--accept-status=404", server.url("/status/404")]).status == 0)
        #expect(InProcessAF.run(["--check-status", "--accept-status=400-410", server.url("/status/410")]).status == 0)
        #expect(InProcessAF.run(["--check-status", "--accept-status=404", server.url("/status/500")]).status == 5)
    }

    @Test func limitsAreExitOneAndNamed() {
        let headers = InProcessAF.run([server.url("/headers?count=150")])
        #expect(headers.status == 1)
        #expect(headers.err == "af: error: the response has more than 100 header lines; raise --max-headers if you trust the server\n")
        #expect(InProcessAF.run(["--max-headers=200", server.url("/headers?count=150")]).status == 0)
        let size = InProcessAF.run(["--max-filesize=1K", server.url("/bytes/5000")])
        #expect(size.status == 1)
        #expect(size.err == "af: error: response body exceeds --max-filesize (1024 bytes); raise it if you expect a body this large\n")
        let chunked = InProcessAF.run(["--max-filesize=100", server.url("/stream/20")])
        #expect(chunked.status == 1)
        let bomb = InProcessAF.run([server.url("/bomb?mb=64")])
        #expect(bomb.status == 1)
        #expect(bomb.err.hasPrefix("af: error: the response inflates more than 200× ("), "\(bomb.err)")
        #expect(bomb.err.hasSuffix(" MiB as it was decoded); refusing a likely decompression bomb; if you trust the server, --max-filesize=SIZE accepts up to SIZE decoded (or -d saves the compressed bytes)\n"), "\(bomb.err)")
        #expect(bomb.stdout.count < 64 << 20)
        // A limit the user gives rules instead: a body that inflates far (a repetitive log)
        // is whole below it, and refused as too large above it.
        let bounded = InProcessAF.run(["--max-filesize=64M", server.url("/bomb?mb=64")])
        #expect(bounded.status == 0, "\(bounded.err)")
        #expect(bounded.stdout.count == 64 << 20)
        let smaller = InProcessAF.run(["--max-filesize=16M", server.url("/bomb?mb=64")])
        #expect(smaller.status == 1)
        #expect(smaller.err == "af: error: response body exceeds --max-filesize (16777216 bytes); raise it if you expect a body this large\n")
    }

    @Test func compressedResponsesAreDecoded() {
        #expect(InProcessAF.run([server.url("/gzip")]).out == BuiltinRoutes.sampleJSON)
        #expect(InProcessAF.run([server.url("/deflate")]).out == BuiltinRoutes.sampleJSON)
    }

    @Test func malformedResponsesAreExitOne() {
        for path in ["/garbage", "/bad-chunk", "/no-response", "/wrong-length"] {
            let result = InProcessAF.run([server.url(path)])
            #expect(result.status == 1, "\(path): \(result.status) \(result.err)")
            #expect(result.err.hasPrefix("af: error: "), "\(path)")
            #expect(result.err.split(separator: "\n").count == 1, "\(path): \(result.err)")
        }
    }
}

@Suite struct RedirectTests {
    let first: TestServer
    let second: TestServer

    init() throws {
        first = try TestServer()
        second = try TestServer()
    }

    @Test func followsChainsAndCountsThem() {
        let result = InProcessAF.run(["-F", first.url("/redirect/3")])
        #expect(result.status == 0)
        #expect(result.out.contains("\"target\": \"/get\""))
        #expect(first.hits("/redirect/3") == 1 && first.hits("/redirect/1") == 1 && first.hits("/get") == 1)
        let limited = InProcessAF.run(["-F", "--max-redirects=2", first.url("/redirect/3")])
        #expect(limited.status == 6)
        #expect(limited.err == "af: error: more than 2 redirects; raise --max-redirects or check for a redirect loop\n")
    }

    @Test func postBecomesGetOn302AndKeepsBodyOn307() {
        first.route("/moved") { request, _ in
            .response(status: Int(request.queryValue("s") ?? "302") ?? 302, headers: [("Location", "/echo")])
        }
        #expect(InProcessAF.run(["-F", "post", first.url("/moved?s=302"), "a=1"]).status == 0)
        let afterFound = first.requests(to: "/echo").last
        #expect(afterFound?.method == "GET")
        #expect(afterFound?.body.isEmpty == true)
        #expect(afterFound?.header("Content-Type") == nil)
        #expect(InProcessAF.run(["-F", "post", first.url("/moved?s=307"), "a=1"]).status == 0)
        let afterTemporary = first.requests(to: "/echo").last
        #expect(afterTemporary?.method == "POST")
        #expect(afterTemporary?.bodyText == #"{"a": "1"}"#)
        #expect(InProcessAF.run(["-F", "put", first.url("/moved?s=303"), "a=1"]).status == 0)
        #expect(first.requests(to: "/echo").last?.method == "GET")
    }

    @Test func credentialsNeverReachAnotherOrigin() throws {
        first.route("/hop") { _, _ in .response(status: 302, headers: [("Location", self.second.url("/echo"))]) }
        let result = InProcessAF.run(["-F", "-a", "ada:secret", "--secret-header=X-Api-Key", first.url("/hop"),
                             "Cookie:session=1", "X-Api-Key:key", "X-Public:ok"])
        #expect(result.status == 0)
        let atFirst = try #require(first.requests(to: "/hop").last)
        #expect(atFirst.header("Authorization") == "Basic YWRhOnNlY3JldA==")
        #expect(atFirst.header("Cookie") == "session=1")
        #expect(atFirst.header("X-Api-Key") == "key")
        let atSecond = try #require(second.requests(to: "/echo").last)
        #expect(atSecond.header("Authorization") == nil)
        #expect(atSecond.header("Cookie") == nil)
        #expect(atSecond.header("X-Api-Key") == nil)
        #expect(atSecond.header("X-Public") == "ok")
        #expect(result.err == "af: redirect to \(second.url("/echo")) leaves the origin; not sending Authorization, Cookie, X-Api-Key there (--location-trusted keeps them)\n")
    }

    /// The notice of what a redirect left behind stays with -q and goes with -qq, whose
    /// standard error holds only errors.
    @Test func twiceQuietLeavesOutTheRedirectNotice() throws {
        first.route("/hop-quietly") { _, _ in .response(status: 302, headers: [("Location", self.second.url("/echo"))]) }
        let notice = "af: redirect to \(second.url("/echo")) leaves the origin; not sending Authorization there (--location-trusted keeps them)\n"
        #expect(InProcessAF.run(["-q", "-F", "-a", "ada:secret", first.url("/hop-quietly")]).err == notice)
        let result = InProcessAF.run(["-qq", "-F", "-a", "ada:secret", first.url("/hop-quietly")])
        #expect(result.status == 0)
        #expect(result.err.isEmpty, "\(result.err)")
        #expect(second.requests(to: "/echo").last?.header("Authorization") == nil)
    }

    /// In a batch, `-qq` given to the batch or on a line of its own leaves that notice out;
    /// a line's error and the run's one error line stay.
    @Test func twiceQuietInABatchLeavesOnlyErrors() throws {
        first.route("/hop-in-batch") { _, _ in .response(status: 302, headers: [("Location", self.second.url("/echo"))]) }
        let directory = try TemporaryDirectory.make(prefix: "quiet-batch")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let hop = "-F -a ada:secret \(first.url("/hop-in-batch"))"
        let port = try TestServer.closedPort()
        let refused = "http://127.0.0.1:\(port)/"
        let errors = "af: line 2: error: connection refused by 127.0.0.1:\(port); is the server running?\n"
            + "af: error: 1 of 2 requests failed (line 2)\n"
        let lines = try TemporaryDirectory.write("\(hop)\n\(refused)\n", named: "lines.txt", in: directory)
        let batch = InProcessAF.run(["batch", "-qq", lines])
        #expect(batch.status == 1)
        #expect(batch.err == errors)
        let own = try TemporaryDirectory.write("-qq \(hop)\n\(refused)\n", named: "own.txt", in: directory)
        let line = InProcessAF.run(["batch", own])
        #expect(line.err == errors)
        let once = InProcessAF.run(["batch", "-q", lines])
        #expect(once.err == "af: line 1: redirect to \(second.url("/echo")) leaves the origin; not sending Authorization there (--location-trusted keeps them)\n" + errors)
    }

    /// A Host header given for the first host was sent to the host a redirect named, which
    /// then served (or refused) a site of the first; it stays only while the host does, as in
    /// curl, --location-trusted or not.
    @Test func aGivenHostHeaderStaysWithItsHost() throws {
        first.route("/elsewhere") { _, _ in .response(status: 302, headers: [("Location", "http://localhost:\(self.second.port)/echo")]) }
        first.route("/port") { _, _ in .response(status: 302, headers: [("Location", self.second.url("/echo"))]) }
        for trusted in [false, true] {
            let result = InProcessAF.run(["-F"] + (trusted ? ["--location-trusted"] : []) + [first.url("/elsewhere"), "Host:api.internal"])
            #expect(result.status == 0, "\(result.err)")
            #expect(first.requests(to: "/elsewhere").last?.header("Host") == "api.internal")
            #expect(second.requests(to: "/echo").last?.header("Host") == "localhost:\(second.port)")
        }
        // The same host on another port: still the host the header was given for.
        #expect(InProcessAF.run(["-F", first.url("/port"), "Host:api.internal"]).status == 0)
        #expect(second.requests(to: "/echo").last?.header("Host") == "api.internal")
    }

    /// The test server's `/redirect-to` takes its URL unencoded, as a person types it (the
    /// server read a target whose query held `://` as a proxy's absolute URL, path `/`).
    @Test func theBuiltinRedirectTakesAnUnencodedURL() throws {
        let result = InProcessAF.run(["-F", first.url("/redirect-to?url=\(second.url("/echo"))")])
        #expect(result.status == 0, "\(result.err)")
        #expect(first.requests(to: "/redirect-to").count == 1)
        #expect(second.requests(to: "/echo").count == 1)
    }

    @Test func locationTrustedKeepsThem() throws {
        first.route("/hop") { _, _ in .response(status: 302, headers: [("Location", self.second.url("/echo"))]) }
        #expect(InProcessAF.run(["-F", "--location-trusted", "-a", "ada:secret", first.url("/hop")]).status == 0)
        #expect(second.requests(to: "/echo").last?.header("Authorization") == "Basic YWRhOnNlY3JldA==")
    }

    /// Credentials a `Location` names were never sent, though the notice for another origin
    /// said --location-trusted keeps them (and a space in them made the redirect exit 64,
    /// "invalid URL"). They are sent where curl sends them: to the same origin, or anywhere
    /// with --location-trusted; credentials of the request's own stay
    /// (`AuthTests.takingCredentialsOutOfARedirectKeepsItsHost`).
    @Test func credentialsALocationNamesAreSentWhereCurlSendsThem() throws {
        let same = first.url("/landing").replacingOccurrences(of: "http://", with: "http://bob:pw x@")
        first.route("/same") { _, _ in .response(status: 302, headers: [("Location", same)]) }
        first.route("/landing") { _, _ in .response(status: 200) }
        let sent = InProcessAF.run(["-F", "--check-status", first.url("/same")])
        #expect(sent.status == 0, "\(sent.err)")
        #expect(first.requests(to: "/landing").last?.header("Authorization") == "Basic Ym9iOnB3IHg=")
        let away = second.url("/basic-auth/bob/pw").replacingOccurrences(of: "http://", with: "http://bob:pw@")
        first.route("/away") { _, _ in .response(status: 302, headers: [("Location", away)]) }
        let refused = InProcessAF.run(["-F", "--check-status", first.url("/away")])
        #expect(refused.status == 4)
        #expect(refused.err.hasPrefix("af: redirect to \(second.url("/basic-auth/bob/pw")) leaves the origin; not sending URL credentials there (--location-trusted keeps them)\n"))
        #expect(InProcessAF.run(["-F", "--check-status", "--location-trusted", first.url("/away")]).status == 0)
    }

    @Test func retryAfterARedirectResendsOnlyTheFailingHop() {
        first.route("/start") { _, _ in .response(status: 302, headers: [("Location", self.second.url("/flaky"))]) }
        second.route("/flaky") { _, hit in .response(status: hit == 1 ? 503 : 200, body: Array("hop \(hit)\n".utf8)) }
        let result = InProcessAF.run(["-F", "--retry=2", "--retry-delay=0.1", first.url("/start")])
        #expect(result.status == 0)
        #expect(result.out == "hop 2\n")
        #expect(first.hits("/start") == 1)
        #expect(second.hits("/flaky") == 2)
    }

    @Test func allPrintsEveryHop() {
        let result = InProcessAF.run(["-F", "--all", "-v", first.url("/redirect/2")])
        #expect(result.status == 0)
        #expect(result.out.components(separatedBy: "HTTP/1.1 302 Found\n").count == 3)
        #expect(result.out.components(separatedBy: "GET /").count == 4)
        let plain = InProcessAF.run(["-F", "-v", first.url("/redirect/2")])
        #expect(plain.out.components(separatedBy: "HTTP/1.1 302 Found\n").count == 1)
        #expect(plain.out.hasPrefix("GET /get HTTP/1.1\n"))
    }

    /// HTTPie's `--history-print` (`-P`): what `--all` prints of the hops before the last,
    /// in `--print`'s letters. af had no such option (exit 64).
    @Test func historyPrintChoosesWhatTheHopsShow() {
        let requestHeads = InProcessAF.run(["-F", "--all", "-P", "H", "-p", "h", first.url("/redirect/2")])
        #expect(requestHeads.status == 0)
        let host = "127.0.0.1:\(first.port)"
        let sent = { (path: String) in "GET \(path) HTTP/1.1\nHost: \(host)\nUser-Agent: af/0.1.0\nAccept-Encoding: gzip, deflate, br, zstd\nAccept: */*\n\n" }
        #expect(requestHeads.out.hasPrefix(sent("/redirect/2") + sent("/redirect/1") + "HTTP/1.1 200 OK\n"), "\(requestHeads.out)")
        let responseHeads = InProcessAF.run(["-F", "--all", "--history-print=h", "-p", "b", first.url("/redirect/1")])
        #expect(responseHeads.out.hasPrefix("HTTP/1.1 302 Found\nLocation: /get\nContent-Length: 0\n\n{"), "\(responseHeads.out)")
        // Without --all it changes nothing; a letter outside HBhbm is a usage error.
        #expect(InProcessAF.run(["-F", "-P", "H", "-p", "h", first.url("/redirect/1")]).out.hasPrefix("HTTP/1.1 200 OK\n"))
        let bad = InProcessAF.run(["-F", "--all", "-P", "x", first.url("/redirect/1")])
        #expect(bad.status == 64)
        #expect(bad.err == "af: error: invalid value 'x' for -P: use the letters H, B, h, b and m\n")
    }
}
