import AFEngine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// `--report=json`: one document whatever the outcome.
@Suite struct ReportTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    private func report(_ arguments: [String]) throws -> ([String: Any], AFResult) {
        let result = InProcessAF.run(["--report=json"] + arguments)
        let document = try #require(JSONHelpers.object(result.out), "not JSON: \(result.out)")
        for key in ["request", "response", "attempts", "redirects", "error"] { #expect(document.keys.contains(key), "missing \(key)") }
        return (document, result)
    }

    @Test func success() throws {
        let (document, result) = try report([server.url("/json")])
        #expect(result.status == 0)
        let response = try #require(document["response"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        #expect(response["http_version"] as? String == "HTTP/1.1")
        let body = try #require(response["body"] as? [String: Any])
        #expect(body["name"] as? String == "af")
        #expect(result.out.contains("\"big\":123456789012345678901234567890"))
        let attempts = try #require(document["attempts"] as? [[String: Any]])
        #expect(attempts.count == 1)
        let metrics = try #require(attempts[0]["metrics"] as? [String: Any])
        for key in ["dns", "connect", "tls", "first_byte", "total", "bytes_sent", "bytes_received", "remote_address"] {
            #expect(metrics[key] != nil, "metrics lacks \(key)")
        }
        #expect(document["error"] is NSNull)
        let request = try #require(document["request"] as? [String: Any])
        #expect(request["method"] as? String == "GET")
    }

    @Test func notFoundWithAndWithoutCheckStatus() throws {
        let (plain, plainResult) = try report([server.url("/status/404")])
        #expect(plainResult.status == 0)
        #expect((plain["response"] as? [String: Any])?["status"] as? Int == 404)
        #expect(plain["error"] is NSNull)
        let (checked, checkedResult) = try report(["--check-status", server.url("/status/404")])
        #expect(checkedResult.status == 4)
        let error = try #require(checked["error"] as? [String: Any])
        #expect(error["kind"] as? String == "http_status")
        #expect(error["exit_code"] as? Int == 4)
    }

    @Test func refusedConnection() throws {
        let closed = try TestServer()
        let url = closed.url("/x")
        closed.stop()
        let (document, result) = try report([url])
        #expect(result.status == 1)
        #expect(document["response"] is NSNull)
        let error = try #require(document["error"] as? [String: Any])
        #expect(error["kind"] as? String == "connection_refused")
        #expect(error["exit_code"] as? Int == 1)
        #expect((document["attempts"] as? [[String: Any]])?.first?["error"] is String)
    }

    @Test func timeout() throws {
        let (document, result) = try report(["--timeout=0.3", server.url("/delay/2")])
        #expect(result.status == 2)
        let error = try #require(document["error"] as? [String: Any])
        #expect(error["kind"] as? String == "timeout")
        #expect(error["exit_code"] as? Int == 2)
    }

    /// A report is kept (a CI job's artifact), so the credentials af sent are named in it but
    /// their values hidden, as `--debug` hides them: `-a`'s, a cookie's, a `--secret-header`'s,
    /// and a token `--auth-cmd` fetched. What the server answered stays as it came, its
    /// `Set-Cookie` included; other headers are as sent, in the order sent.
    @Test func credentialsSentAreHidden() throws {
        let (document, result) = try report(["-a", "ada:s3cret", "--secret-header=x-token", server.url("/cookies/set?new=v4lue"),
                                             "Cookie:sid=abc; theme=dark", "X-Token:t0ken", "X-Trace:visible"])
        #expect(result.status == 0)
        let sent = try #require(server.requests.last)
        #expect(sent.header("Authorization") == "Basic YWRhOnMzY3JldA==")
        #expect(sent.header("X-Token") == "t0ken")
        let headers = try #require((document["request"] as? [String: Any])?["headers"] as? [[String]])
        #expect(headers.filter { !["User-Agent", "Accept-Encoding", "Accept"].contains($0[0]) }
            == [["Host", "127.0.0.1:\(server.port)"], ["Cookie", "sid=(hidden); theme=(hidden)"], ["X-Token", "(hidden)"], ["X-Trace", "visible"],
                ["Authorization", "Basic (hidden)"]])
        let answered = try #require((document["response"] as? [String: Any])?["headers"] as? [[String]])
        #expect(answered.contains(["Set-Cookie", "new=v4lue; Path=/"]))
        for secret in ["s3cret", "YWRhOnMzY3JldA", "abc", "dark", "t0ken"] { #expect(!result.out.contains(secret), "\(secret) in the report") }

        let (fetched, fetchedResult) = try report(["--auth-cmd=printf tok-42", server.url("/status/204")])
        #expect(fetchedResult.status == 0)
        #expect(server.requests.last?.header("Authorization") == "Bearer tok-42")
        let fetchedHeaders = try #require((fetched["request"] as? [String: Any])?["headers"] as? [[String]])
        #expect(fetchedHeaders.last == ["Authorization", "Bearer (hidden)"])
        #expect(!fetchedResult.out.contains("tok-42"))
    }

    /// The request's headers are the head libcurl sent, as the server received them (the
    /// `Host` and `Content-Length` it adds included), in their order; where no head was sent,
    /// the headers af would have sent.
    @Test func requestHeadersAreTheHeadSent() throws {
        let (document, result) = try report(["post", server.url("/post"), "a=1", "X-Trace:visible"])
        #expect(result.status == 0, "\(result.err)")
        let sent = try #require(server.requests.last)
        let headers = try #require((document["request"] as? [String: Any])?["headers"] as? [[String]])
        #expect(headers == sent.headers.map { [$0.name, $0.value] })
        #expect(headers.first == ["Host", "127.0.0.1:\(server.port)"])
        #expect(headers.contains(["Content-Length", "10"]))

        let closed = try TestServer()
        let url = closed.url("/x")
        closed.stop()
        let (unsent, _) = try report([url, "X-Trace:visible"])
        #expect((unsent["request"] as? [String: Any])?["headers"] as? [[String]]
            == [["User-Agent", "af/0.1.0"], ["Accept-Encoding", CurlRuntime.acceptEncodingValue], ["Accept", "*/*"], ["X-Trace", "visible"]])
    }

    @Test func bodyAsStringOrBase64() throws {
        let (text, _) = try report([server.url("/text/utf8")])
        #expect((text["response"] as? [String: Any])?["body"] as? String == "héllo wörld ✓\n")
        let (binary, _) = try report([server.url("/binary")])
        let body = try #require((binary["response"] as? [String: Any])?["body"] as? [String: Any])
        #expect(body["base64"] as? String == "iVBORw0KGgoAAAANSUhEUg==")
    }
}

/// A body past what `--report=json` keeps in memory is kept in a temporary file and written
/// from it in pieces (256 KiB reads): every form comes out as it would from memory, with
/// characters, base64 groups and the compaction's state carried across the pieces.
@Suite struct LargeReportBodyTests {
    let server: TestServer
    /// Where the first piece read back ends.
    static let cut = 256 * 1024

    init() throws {
        server = try TestServer()
    }

    private func reportedBody(_ body: [UInt8], type: String) throws -> (raw: String, value: Any?) {
        server.route("/large") { _, _ in .response(status: 200, headers: [("Content-Type", type)], body: body) }
        let result = InProcessAF.run(["--report=json", server.url("/large")])
        #expect(result.status == 0, "\(result.err)")
        let document = try #require(JSONHelpers.object(result.out), "not JSON")
        return (result.out, (document["response"] as? [String: Any])?["body"])
    }

    /// An anti-XSSI prefix, whitespace between tokens, a character the first piece cuts (a
    /// string's '€' starts at its last byte), a stray byte (U+FFFD in the report, which is
    /// UTF-8) and 1.2 MB of four-byte characters.
    @Test func jsonIsCompactedAcrossPieces() throws {
        let opening = Array(")]}'\n[\n  \"".utf8)
        var body = opening + Array(repeating: UInt8(ascii: "a"), count: Self.cut - opening.count - 1) + Array("€\",\n  \"bad".utf8) + [0xFF]
        body += Array("\",\n  \"".utf8) + Array(String(repeating: "😀", count: 300_000).utf8) + Array("\"\n]\n".utf8)
        #expect(body[Self.cut - 1] == 0xE2)
        let (raw, _) = try reportedBody(body, type: "application/json")
        let expected = "[\"" + String(repeating: "a", count: Self.cut - opening.count - 1) + "€\",\"bad\u{FFFD}\",\"" + String(repeating: "😀", count: 300_000) + "\"]"
        #expect(raw.contains("\"body\": " + expected + "}, \"attempts\""))
    }

    @Test func textIsEscapedAcrossPieces() throws {
        let text = String(repeating: "a", count: Self.cut - 1) + String(repeating: "é€😀\t\"\\", count: 150_000)
        #expect(Array(text.utf8)[Self.cut - 1] == 0xC3)
        let (_, value) = try reportedBody(Array(text.utf8), type: "text/plain")
        #expect(value as? String == text)
    }

    /// 262,144 is no multiple of 3: the first piece leaves a byte for the next group.
    @Test func binaryIsBase64AcrossPieces() throws {
        let body = (0..<1_500_001).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let (_, value) = try reportedBody(body, type: "application/octet-stream")
        let encoded = try #require((value as? [String: Any])?["base64"] as? String)
        #expect(encoded == Data(body).base64EncodedString())
    }
}

/// `--trace`: lifecycle events in order with monotonic timestamps.
@Suite struct TraceTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    @Test func jsonTraceEvents() throws {
        let result = InProcessAF.run(["--trace=json", server.url("/get")])
        #expect(result.status == 0)
        let events = result.err.split(separator: "\n").compactMap { JSONHelpers.object(String($0)) }
        #expect(events.count == result.err.split(separator: "\n").count)
        let names = events.compactMap { $0["event"] as? String }
        #expect(names == ["request_built", "request_adapted", "attempt_started", "resolved", "connected", "request_sent", "response_head", "attempt_finished", "finished"])
        let times = events.compactMap { $0["time"] as? Double }
        #expect(times == times.sorted())
    }

    @Test func textTraceGoesToStandardError() {
        let result = InProcessAF.run(["--trace", server.url("/get")])
        #expect(result.out.contains("\"method\": \"GET\""))
        let lines = result.err.split(separator: "\n")
        #expect(lines.first?.hasPrefix("af: [") == true)
        #expect(lines.contains { $0.contains("] attempt 1 response: HTTP/1.1 200 OK") })
    }
}

/// `--curl` prints a command that, run by the real curl, sends what af sends.
@Suite struct CurlExportTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-curl")
    }

    private func shell(_ command: String) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // Without its line break: a redirection after it would apply to an empty command.
        process.arguments = ["-c", command.trimmingCharacters(in: .newlines) + " > /dev/null 2>&1"]
        try? process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Sends with af, then with the printed curl command; returns both requests as received.
    private func both(_ arguments: [String], environment: [String: String] = [:]) throws -> (ServerRequest, ServerRequest) {
        #expect(InProcessAF.run(arguments, environment: environment).status == 0)
        let fromAF = try #require(server.requests.last)
        let printed = InProcessAF.run(["--curl"] + arguments, environment: environment)
        #expect(printed.status == 0)
        #expect(server.requests.count == 1, "--curl must not send")
        #expect(shell(printed.out) == 0, "curl failed: \(printed.out)")
        let fromCurl = try #require(server.requests.last)
        #expect(server.requests.count == 2)
        return (fromAF, fromCurl)
    }

    private func comparable(_ request: ServerRequest, dropping: Set<String> = []) -> [String] {
        let ignored = Set(["user-agent"]).union(dropping)
        return request.headers.filter { !ignored.contains($0.name.lowercased()) }.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
    }

    @Test func json() throws {
        let (a, c) = try both(["post", server.url("/echo?x=1"), "name=O'Brien \"quoted\" $HOME", "n:=1.10", "X-A:b;c", "q==a b"])
        #expect(a.method == c.method)
        #expect(a.target == c.target)
        #expect(comparable(a) == comparable(c))
        #expect(a.body == c.body)
    }

    /// A quote followed by a combining mark is one character to Swift but still a quote to
    /// the shell, so it is escaped like any other (af 0.1 compared characters and left it,
    /// which ended the quoting early and let the shell run what came after).
    @Test func quoteBeforeACombiningMark() throws {
        let (a, c) = try both(["post", server.url("/echo"), "name=x'\u{301} $(echo pwned) y", "X-Note:a'\u{301}b"])
        #expect(comparable(a) == comparable(c))
        #expect(a.body == c.body)
        #expect(String(decoding: c.body, as: UTF8.self).contains("$(echo pwned)"))
    }

    /// The same in a multipart field and a file name, which curl -F quotes its own way.
    @Test func quoteBeforeACombiningMarkInMultipart() throws {
        let path = directory + "/a\"\u{301}b.txt"
        // A name that starts with a combining mark: the slash before it still ends the directory.
        let marked = directory + "/\u{301}c.txt"
        try "file body\n".write(toFile: path, atomically: false, encoding: .utf8)
        try "other body\n".write(toFile: marked, atomically: false, encoding: .utf8)
        let (fa, fc) = try both(["--multipart", "post", server.url("/echo"), "title=a\"\u{301};type=x", "doc@\(path)", "more@\(marked)"])
        func parts(_ request: ServerRequest) throws -> [MultipartPart] {
            let type = try #require(request.header("Content-Type"))
            let boundary = String(try #require(type.split(separator: "=", maxSplits: 1).last))
            return try #require(MultipartParser.parse(request.body, boundary: boundary))
        }
        let afParts = try parts(fa), curlParts = try parts(fc)
        let title = "a\"\u{301};type=x"
        #expect(afParts.map(\.body) == curlParts.map(\.body))
        #expect(afParts.first?.text == title)
        #expect(afParts.map(\.filename) == curlParts.map(\.filename))
        // Compared as bytes: the test's multipart parser reads parameters by characters.
        let expected = Array("filename=\"\u{301}c.txt\"".utf8)
        let disposition = Array((afParts.last?.headers["content-disposition"] ?? "").utf8)
        #expect(disposition.suffix(expected.count).elementsEqual(expected), "\(disposition)")
    }

    @Test func form() throws {
        let (a, c) = try both(["-f", "put", server.url("/echo"), "a=1", "b=é & ü"])
        #expect(a.method == c.method)
        #expect(comparable(a) == comparable(c))
        #expect(a.body == c.body)
    }

    @Test func multipart() throws {
        let path = directory + "/it's here;x.txt"
        try "file body\n".write(toFile: path, atomically: false, encoding: .utf8)
        let (a, c) = try both([server.url("/echo"), "title=x;y @z", "doc@\(path);type=text/markdown"])
        #expect(a.method == c.method)
        #expect(comparable(a, dropping: ["content-type", "content-length"]) == comparable(c, dropping: ["content-type", "content-length"]))
        func parts(_ request: ServerRequest) throws -> [MultipartPart] {
            let type = try #require(request.header("Content-Type"))
            let boundary = String(try #require(type.split(separator: "=", maxSplits: 1).last))
            return try #require(MultipartParser.parse(request.body, boundary: boundary))
        }
        let afParts = try parts(a)
        let curlParts = try parts(c)
        #expect(afParts.map(\.name) == curlParts.map(\.name))
        #expect(afParts.map(\.filename) == curlParts.map(\.filename))
        #expect(afParts.map(\.body) == curlParts.map(\.body))
        #expect(afParts.map { $0.headers["content-type"] } == curlParts.map { $0.headers["content-type"] })
    }

    @Test func wholeFileBody() throws {
        let path = directory + "/payload.bin"
        _ = FileManager.default.createFile(atPath: path, contents: Data(TestData.bytes(count: 5000)))
        let (a, c) = try both(["post", server.url("/echo"), "@\(path)", "X-Kind:raw"])
        #expect(comparable(a) == comparable(c))
        let same = a.body == c.body
        #expect(same)
    }

    /// `--chunked` (or a `Transfer-Encoding: chunked` header) reaches curl as that header,
    /// which makes curl frame the body in chunks too (af 0.1 printed a command that sent a
    /// Content-Length).
    @Test(arguments: [["--chunked", "a=1"], ["Transfer-Encoding:chunked", "@/etc/hostname"]])
    func chunkedBody(items: [String]) throws {
        let (a, c) = try both(["post", server.url("/echo")] + items)
        #expect(a.chunked && c.chunked)
        #expect(comparable(a) == comparable(c))
        #expect(a.body == c.body)
    }

    /// `-d` and `-o` reach curl as where to save the body: the printed command saved nothing
    /// (it wrote the body to standard output). Run in a directory of its own, it saves what
    /// af saves, under the same name, replaces nothing, and saves no error body for `-d`.
    @Test func downloadsAreSavedByThePrintedCommandToo() throws {
        server.route("/report") { _, _ in
            .response(status: 200, headers: [("Content-Disposition", "attachment; filename=\"q3.csv\"")], body: Array("a,b\n1,2\n".utf8))
        }
        for (arguments, name) in [(["-d", server.url("/report")], "q3.csv"), (["-d", server.url("/bytes/10")], "10"),
                                  (["-o", "out.bin", server.url("/bytes/10")], "out.bin"),
                                  (["-d", "--output-dir=sub", "--create-dirs", server.url("/report")], "sub/q3.csv")] {
            let viaAF = try TemporaryDirectory.make(prefix: "af-curl-af")
            let viaCurl = try TemporaryDirectory.make(prefix: "af-curl-curl")
            #expect(InProcessAF.run(["--output-dir", viaAF] + arguments.filter { !$0.hasPrefix("--output-dir") }).status == 0)
            let printed = InProcessAF.run(["--curl"] + arguments)
            #expect(printed.status == 0)
            #expect(shell("cd '\(viaCurl)' && " + printed.out) == 0, "\(printed.out)")
            let saved = FileManager.default.contents(atPath: viaCurl + "/" + name)
            #expect(saved != nil && saved == FileManager.default.contents(atPath: viaAF + "/" + (name.hasPrefix("sub/") ? String(name.dropFirst(4)) : name)), "\(arguments)")
            // Run again, it replaces nothing (curl's --no-clobber saves NAME.1 instead).
            #expect(shell("cd '\(viaCurl)' && " + printed.out) == 0)
            #expect(FileManager.default.contents(atPath: viaCurl + "/" + name) == saved)
        }
        let failing = try TemporaryDirectory.make(prefix: "af-curl-fail")
        let printed = InProcessAF.run(["--curl", "-d", server.url("/status/404")])
        #expect(printed.out.contains(" --fail"))
        #expect(shell("cd '\(failing)' && " + printed.out) != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: failing).isEmpty, "no error body saved")
        #expect(!InProcessAF.run(["--curl", "-o", "-", server.url("/bytes/10")]).out.contains("--output"))
    }

    /// `--check-status` fails the printed command on an error status too, with the body
    /// still printed (`--fail-with-body`); the line ran and exited 0 where af exits 5.
    @Test func checkStatusMakesTheCommandFailOnAnErrorStatus() {
        let printed = InProcessAF.run(["--curl", "--check-status", server.url("/status/503")])
        #expect(printed.status == 0)
        #expect(printed.out.hasSuffix(" --fail-with-body\n"), "\(printed.out)")
        #expect(shell(printed.out) == 22)
        #expect(shell(InProcessAF.run(["--curl", "--check-status", server.url("/get")]).out) == 0)
        #expect(!InProcessAF.run(["--curl", server.url("/get")]).out.contains("--fail"))
        // A status --accept-status takes is no failure to curl either.
        #expect(!InProcessAF.run(["--curl", "--check-status", "--accept-status=503", server.url("/status/503")]).out.contains("--fail"))
        #expect(InProcessAF.run(["--curl", "--check-status", "--accept-status=304", server.url("/get")]).out.contains(" --fail-with-body"))
    }

    /// curl cannot deflate a body: `-x` gets a warning that the command sends it as it is.
    @Test func compressionIsNamedAsNotCarriedOver() {
        let printed = InProcessAF.run(["--curl", "-x", "post", server.url("/echo"), "a=\(String(repeating: "x", count: 500))"])
        #expect(printed.status == 0)
        #expect(printed.err == "af: warning: curl has no option to compress a request body: the command sends it uncompressed, without Content-Encoding: deflate\n")
        #expect(InProcessAF.run(["--curl", "-x", server.url("/echo")]).err.isEmpty, "no body, nothing to say")
        // One -x leaves a body that deflate makes no smaller as it is, as the command does.
        let small = InProcessAF.run(["--curl", "-x", "post", server.url("/echo"), "a=1"])
        #expect(small.status == 0)
        #expect(small.err.isEmpty, "\(small.err)")
        #expect(InProcessAF.run(["--curl", "-xx", "post", server.url("/echo"), "a=1"]).err.hasPrefix("af: warning: curl has no option"))
    }

    /// The connection phase gets 30 s when neither limit is given (libcurl alone waits 300 s);
    /// --timeout alone bounds it with the rest of the attempt.
    @Test func connectingHasADefaultLimit() {
        #expect(InProcessAF.run(["--curl", server.url("/get")]).out.contains(" --connect-timeout 30"))
        #expect(!InProcessAF.run(["--curl", "--timeout=60", server.url("/get")]).out.contains("--connect-timeout"))
        #expect(InProcessAF.run(["--curl", "--connect-timeout=90", server.url("/get")]).out.contains(" --connect-timeout 90"))
    }

    /// Credentials af takes from a netrc reach curl without being printed: the line names
    /// the file, which curl reads as af does (af 0.1 left it out, so the printed line was
    /// refused where af was let in).
    @Test func netrcCredentialsAreCarriedUnprinted() throws {
        let netrc = try TemporaryDirectory.write("machine 127.0.0.1 login nu password s3cret\n", named: "netrc", in: directory)
        let (a, c) = try both([server.url("/get")], environment: ["NETRC": netrc])
        #expect(a.header("Authorization") == "Basic bnU6czNjcmV0")
        #expect(comparable(a) == comparable(c))
        let printed = InProcessAF.run(["--curl", server.url("/get")], environment: ["NETRC": netrc])
        #expect(printed.out.contains(" --netrc-file \(netrc) "))
        #expect(!printed.out.contains("s3cret") && !printed.out.contains("bnU6czNjcmV0"))
        // Credentials of the request's own leave the netrc out, as they do for af.
        for own in [["-a", "x:y"], ["-a", "x:y", "-A", "digest"], ["-A", "bearer", "-a", "t"]] {
            #expect(!InProcessAF.run(["--curl", "-F"] + own + [server.url("/get")], environment: ["NETRC": netrc]).out.contains("--netrc-file"), "\(own)")
        }
        #expect(InProcessAF.run(["--curl", "-F", "http://other.test/"], environment: ["NETRC": netrc]).out.contains(" --netrc-file \(netrc) "),
                "a redirect may lead to a host the netrc names")
    }

    /// So does an `--auth-cmd` token: the line runs the command when it runs, as af does.
    @Test func anAuthCommandsTokenIsCarriedUnprinted() throws {
        let command = #"printf %s "it's-$((6 * 7))""#
        let (b, d) = try both(["--auth-cmd=\(command)", server.url("/get")])
        #expect(b.header("Authorization") == "Bearer it's-42")
        #expect(comparable(b) == comparable(d))
        #expect(!InProcessAF.run(["--curl", "--auth-cmd=\(command)", server.url("/get")]).out.contains("it's-42"))
    }

    @Test func optionsAreCarriedOver() {
        let printed = InProcessAF.run(["--curl", "--timeout=5", "--connect-timeout=2", "--retry=3", "-F", "--max-redirects=4", "--http-version=1.1",
                              "--verify=no", "--pin=sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "--proxy=http:http://proxy:3128",
                              "-a", "ada:pw", "-A", "digest", "http://example.org/"])
        for word in ["--max-time 5", "--connect-timeout 2", "--retry 3", "--location --max-redirs 4", "--http1.1", "--insecure",
                     "--pinnedpubkey sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "--proxy http://proxy:3128", "--digest --user ada:pw"] {
            #expect(printed.out.contains(word), "missing \(word) in \(printed.out)")
        }
    }
}

/// Informational (1xx) responses, as `curl -i` and HTTPie 4 show them: `103 Early Hints`
/// is a block of its own before the final head, in the heads, the report and the trace.
@Suite struct InformationalResponseTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    @Test func earlyHintsComeBeforeTheFinalHead() throws {
        let url = server.url("/hostile/early-hints")
        let heads = InProcessAF.run(["-h", url])
        #expect(heads.status == 0, "\(heads.err)")
        #expect(heads.out == "HTTP/1.1 103 Early Hints\nLink: </style.css>; rel=preload; as=style\n\nHTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: 8\n")
        // Into a pipe the body alone, as before.
        #expect(InProcessAF.run([url]).out == "{\"a\": 1}")

        let report = InProcessAF.run(["--report=json", url])
        let document = try #require(JSONHelpers.object(report.out), "not JSON: \(report.out)")
        let response = try #require(document["response"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        let informational = try #require(response["informational"] as? [[String: Any]])
        #expect(informational.count == 1)
        #expect(informational.first?["status"] as? Int == 103)
        #expect(informational.first?["reason"] as? String == "Early Hints")
        #expect(informational.first?["headers"] as? [[String]] == [["Link", "</style.css>; rel=preload; as=style"]])
        // A response without any has no such member.
        let plain = try #require(JSONHelpers.object(InProcessAF.run(["--report=json", server.url("/get")]).out))
        #expect((plain["response"] as? [String: Any])?.keys.contains("informational") == false)

        let trace = InProcessAF.run(["--trace=json", url])
        let names = trace.err.split(separator: "\n").compactMap { JSONHelpers.object(String($0))?["event"] as? String }
        #expect(names.suffix(4) == ["informational_response", "response_head", "attempt_finished", "finished"])
    }

    /// A server may send interim heads without end; the first 16 are kept and shown.
    @Test func aStormOfInterimHeadsKeepsSixteen() {
        let result = InProcessAF.run(["-h", server.url("/hostile/continue-storm?n=500")])
        #expect(result.status == 0, "\(result.err)")
        let blocks = result.out.components(separatedBy: "\n\n")
        #expect(blocks.count == 17)
        #expect(blocks.dropLast().allSatisfy { $0 == "HTTP/1.1 100 Continue" })
        #expect(blocks.last == "HTTP/1.1 200 OK\nContent-Length: 3\n")
    }
}
