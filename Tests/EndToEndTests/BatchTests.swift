import AFTestSupport
import Foundation
import Testing

/// SPEC §11: `af batch`, against the test server (and nghttpd for HTTP/2).
@Suite struct BatchTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-batch")
        server.routeAnswers()
    }

    /// Writes `lines` to a batch file and returns its path.
    private func file(_ lines: [String], name: String = "lines.txt") throws -> String {
        try TemporaryDirectory.write(lines.joined(separator: "\n") + "\n", named: name, in: directory)
    }

    @Test func printsOutputsInLineOrderWhenRequestsFinishOutOfOrder() throws {
        let delays = [0.6, 0, 0.4, 0, 0.2]
        let path = try file(["# a comment, then a blank line", ""] + delays.enumerated().map { index, delay in
            server.url("/answer/\(index + 1)?delay=\(delay)")
        })
        let started = Date()
        let result = AF.run(["batch", "--parallel=5", path])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "answer 1\nanswer 2\nanswer 3\nanswer 4\nanswer 5\n")
        #expect(result.err.isEmpty)
        // All five were in flight at once: one at a time would take 1.2 s.
        #expect(elapsed < 1.1, "took \(elapsed) s")
        let arrivals = server.requests.map(\.receivedAt)
        #expect((arrivals.max() ?? 0) - (arrivals.min() ?? 0) < 0.3)
    }

    /// A command line copied from a shell into the file starts with `af`, which was sent as
    /// the method AF (a pasted HTTPie line's `http` as the method HTTP), and may end in shell
    /// syntax.
    @Test func aLineCopiedFromAShellIsReadOrRefusedForWhatItIs() throws {
        let path = try file(["af " + server.url("/answer/1"), "af --check-status post " + server.url("/answer/2") + " a=1"])
        let result = AF.run(["batch", path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "answer 1\nanswer 2\n")
        #expect(server.requests(to: "/answer/1").map(\.method) == ["GET"])
        #expect(server.requests(to: "/answer/2").map(\.method) == ["POST"])
        let pasted = try file([server.url("/answer/3"), "http " + server.url("/answer/4")], name: "pasted.txt")
        let refused = AF.run(["batch", pasted])
        #expect(refused.status == 64)
        #expect(refused.err == "af: error: \(pasted):2: the line starts with 'http', another program's name, which would be sent as the method HTTP: "
                + "a line is af's [METHOD] URL [ITEMS] without a program name, as in 'get example.org/health' (write HTTP to send that method)\n")
        #expect(server.requests(to: "/answer/3").isEmpty)
        let piped = try file([server.url("/answer/5") + " | jq -r ."], name: "piped.txt")
        let shell = AF.run(["batch", piped])
        #expect(shell.status == 64)
        #expect(shell.err == "af: error: \(piped):1: '|' is shell syntax, but af batch runs each line without a shell: pipe the whole batch instead (af batch FILE | ...), whose output keeps line order\n")
        #expect(server.requests(to: "/answer/5").isEmpty)
        // Quoted, an operator is data, as in a shell.
        let quoted = try file(["--raw '|' post " + server.url("/answer/6")], name: "quoted.txt")
        let sent = AF.run(["batch", quoted])
        #expect(sent.status == 0, "\(sent.err)")
        #expect(server.requests(to: "/answer/6").map { String(decoding: $0.body, as: UTF8.self) } == ["|"])
    }

    /// A running request holds its output in memory up to 32 KiB; past that, and whenever it
    /// ends before an earlier line, its output waits in a temporary file.
    @Test func outputsOfEverySizeKeepLineOrderWhateverOrderTheyFinishIn() throws {
        let cases: [(delay: Double, size: Int)] = [(0.6, 10), (0, 32 * 1024), (0, 32 * 1024 + 1), (0.3, 200_000), (0, 10), (0.1, 70_000), (0, 0)]
        let path = try file(cases.enumerated().map { index, item in
            server.url("/answer/\(index + 1)?delay=\(item.delay)&size=\(item.size)")
        })
        let temporary = try TemporaryDirectory.make(prefix: "af-batch-tmp")
        let result = AF.run(["batch", "--parallel=7", path], environment: ["TMPDIR": temporary])
        #expect(result.status == 0, "\(result.err)")
        let expected = cases.enumerated().flatMap { index, item in TestServer.answer("\(index + 1)", size: item.size) }
        #expect(result.out.utf8.count == expected.count)
        #expect(Array(result.out.utf8) == expected)
        #expect(result.err.isEmpty)
        // The temporary files were unlinked as soon as they were made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
    }

    /// Outputs that wait share temporary files, each written from its start again once none
    /// of its outputs waits: over many lines finishing in every order, each output still
    /// comes out whole and in its place, a file's reuse never overwriting one not yet out.
    @Test func waitingOutputsShareTemporaryFilesWithoutOverwritingEachOther() throws {
        // Delays in a pattern that has later lines finish first, in waves; sizes of every
        // kind (one outgrows memory while running and gets a file of its own).
        let delays = [0.08, 0, 0.02, 0.05, 0, 0.01, 0.03, 0]
        let sizes = [10, 3000, 0, 20_000, 50_000, 700]
        let cases = (0..<48).map { (delay: delays[$0 % delays.count], size: sizes[($0 * 5) % sizes.count]) }
        let path = try file(cases.enumerated().map { index, item in
            server.url("/answer/\(index + 1)?delay=\(item.delay)&size=\(item.size)")
        })
        let temporary = try TemporaryDirectory.make(prefix: "af-batch-log")
        let result = AF.run(["batch", "--parallel=8", path], environment: ["TMPDIR": temporary])
        #expect(result.status == 0, "\(result.err)")
        // Compared line by line, so that a failure names the first line out of place.
        let expected = cases.enumerated().map { index, item in String(decoding: TestServer.answer("\(index + 1)", size: item.size), as: UTF8.self) }
        let printed = result.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { $0 + "\n" }
        #expect(printed.count == expected.count)
        let firstMisplacedLine = zip(printed, expected).enumerated().first { $0.element.0 != $0.element.1 }.map { $0.offset + 1 }
        #expect(firstMisplacedLine == nil)
        #expect(result.err.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
    }

    /// Standard output a pipe whose reader falls behind (`af batch … | jq`): the outputs that
    /// waited in the spool log are copied into the pipe by value. Copied by `sendfile`, the
    /// pipe held references to the log's pages, the log wrote later lines' outputs over the
    /// stretches it had printed, and the reader got those in place of earlier ones.
    @Test func outputsKeepLineOrderInAPipeWhoseReaderFallsBehind() throws {
        let count = 2_500
        let path = try file((1...count).map { server.url("/answer/\($0)?size=240") })
        let process = Process()
        process.executableURL = URL(fileURLWithPath: AF.binary)
        process.arguments = ["batch", "--parallel=10", path]
        process.environment = AF.environment()
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // A reader that keeps behind: a little at a time, with a pause after each read, so the
        // pipe stays full of outputs not yet read while af goes on.
        let reader = output.fileHandleForReading.fileDescriptor
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            data += chunk[..<got]
            usleep(300)
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let printed = String(decoding: data, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ".").first.map(String.init) ?? "" }
        #expect(printed.count == count)
        let firstMisplacedLine = printed.enumerated().first { $0.element != "answer \($0.offset + 1)" }.map { $0.offset + 1 }
        #expect(firstMisplacedLine == nil)
    }

    /// Without a usable temporary directory, output that must wait still waits in memory
    /// while it fits what a running request may hold; a larger one fails its line, whole.
    @Test func withoutATemporaryDirectoryOnlyALargeWaitingOutputFails() throws {
        let path = try file([
            server.url("/answer/1?delay=0.5"),
            server.url("/answer/2?size=100000"),
            server.url("/answer/3"),
        ])
        let result = AF.run(["batch", "--parallel=3", path], environment: ["TMPDIR": "/nonexistent-af-tmp"])
        #expect(result.status == 9)
        #expect(result.out == "answer 1\nanswer 3\n")
        #expect(result.err == """
        af: line 2: error: cannot create a temporary file in '/nonexistent-af-tmp' for the output of a later line: no such file or directory; set TMPDIR to a writable directory
        af: error: 1 of 3 requests failed (line 2)

        """)
    }

    /// libcurl matches connections by host and port: without care, a line would be sent over
    /// a connection made to the address another line's --resolve chose.
    @Test func linesThatResolveANameDifferentlyNeverShareAConnection() throws {
        let path = try file([
            "http://api.test:\(server.port)/answer/1 --resolve api.test:\(server.port):127.0.0.1",
            "http://api.test:\(server.port)/answer/2 --resolve api.test:\(server.port):127.0.0.2",
            "http://api.test:\(server.port)/answer/3 --resolve api.test:\(server.port):127.0.0.1",
        ])
        let result = AF.run(["batch", "--parallel=1", path])
        // The server listens on 127.0.0.1 only: line 2 is refused, line 3 reuses line 1's.
        #expect(result.status == 1)
        #expect(result.out == "answer 1\nanswer 3\n")
        #expect(result.err.hasPrefix("af: line 2: error: connection refused by api.test:\(server.port)"), "\(result.err)")
        #expect(server.requests.map(\.path) == ["/answer/1", "/answer/3"])
        #expect(Set(server.requests.map(\.connection)).count == 1)
    }

    /// Never more connections than requests in flight. libcurl sizes its connection cache by
    /// the transfers added at the moment: when several finish in one turn, it used to close
    /// idle connections the next lines then had to open again (12–26 for 500 at 10).
    /// Lines that each resolve the host their own way run apart, each set on its own thread
    /// and connections; those no line is using go once more than `--parallel` (at least 8)
    /// are idle, so such a file does not hold a thread and a connection per line.
    @Test func linesApartDoNotKeepAThreadAndConnectionEach() throws {
        server.route("/open") { [weak server] _, _ in
            .response(status: 200, headers: [("Content-Type", "text/plain")], body: Array("\(server?.openConnections ?? -1)\n".utf8))
        }
        let lines = (1...60).map { "http://host\($0).test:\(server.port)/answer/\($0) --resolve host\($0).test:\(server.port):127.0.0.1" }
        let path = try file(lines + [server.url("/open")])
        let result = AF.run(["batch", "--parallel=1", path])
        #expect(result.status == 0, "\(result.err)")
        let answers = result.out.split(separator: "\n")
        #expect(answers.count == 61)
        #expect(answers.prefix(60) == (1...60).map { "answer \($0)" }[...])
        // 8 idle sets at most, the line asking, and a few the server has not seen close yet.
        let open = Int(answers.last ?? "") ?? -1
        #expect(open >= 1 && open <= 20, "\(open) connections open after 60 lines apart")
        #expect(server.connections == 61)
    }

    @Test(arguments: [4, 10])
    func reusesConnectionsAcrossLines(parallel: Int) throws {
        let path = try file((1...400).map { server.url("/answer/\($0)") })
        let result = AF.run(["batch", "--parallel=\(parallel)", path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == (1...400).map { "answer \($0)\n" }.joined())
        #expect(server.requests.count == 400)
        let connections = Set(server.requests.map(\.connection))
        #expect(connections.count <= parallel, "\(connections.count) connections for 400 requests at --parallel=\(parallel)")
    }

    /// Cleartext HTTP/2 with prior knowledge: libcurl 7.88 failed every request that reused
    /// such a connection ("Error in the HTTP2 framing layer"; curl --http2-prior-knowledge URL
    /// URL fails the same way), so 49 of 50 lines failed. With that libcurl each line now has
    /// a connection of its own; from libcurl 8.0 they share one.
    @Test(.enabled(if: ExternalServer.available("nghttpd"), "nghttpd (Debian's nghttp2-server) is not installed; ./install.sh --dev installs it"))
    func cleartextPriorKnowledgeLinesAllSucceed() throws {
        let served = try TemporaryDirectory.make(prefix: "af-h2c-batch")
        try "h2c\n".write(toFile: served + "/x.txt", atomically: false, encoding: .utf8)
        let h2c = try ExternalServer(nghttpdServing: served, key: nil, certificate: nil)
        let path = try file((1...30).map { "http://127.0.0.1:\(h2c.port)/x.txt?n=\($0)" })
        let result = AF.run(["batch", "--parallel=10", "--http-version=2-prior-knowledge", "--report=json", path])
        #expect(result.status == 0, "\(result.err)")
        let reports = result.out.split(separator: "\n").map { JSONHelpers.object(String($0)) }
        #expect(reports.count == 30)
        #expect(Set(reports.compactMap { $0?["line"] as? Int }) == Set(1...30))
        for report in reports {
            let attempts = report?["attempts"] as? [[String: Any]]
            #expect((attempts?.first?["metrics"] as? [String: Any])?["http_version"] as? String == "HTTP/2")
        }
    }

    /// A server that closes an HTTP/2 connection after so many requests (nginx after its
    /// keepalive_requests) sends GOAWAY naming the last stream it took; libcurl 7.88 failed the
    /// streams it had not taken with "Error in the HTTP2 framing layer" (curl -Z too). af sends
    /// such a GET again on a new connection, as libcurl does for a refused stream; a POST only
    /// with --retry and --retry-all-methods (libcurl does not say it was GOAWAY).
    @Test func streamsAClosingServerDidNotTakeAreSentAgain() throws {
        let pki = TestPKI.shared
        var identity = try pki.issue(name: "h2goaway").identity
        identity.offersHTTP2 = true
        let h2 = try TestServer(tls: identity)
        h2.route("*") { request, _ in HostileRoutes.reply("h2-goaway-after-7", request) }
        let urls = (1...50).map { "https://127.0.0.1:\(h2.port)/x?n=\($0)" }
        let gets = AF.run(["batch", "--parallel=10", "--verify=\(pki.caCertificatePath)", try file(urls)])
        #expect(gets.status == 0, "\(gets.err)")
        #expect(gets.out.split(separator: "\n").count == 50)
        let posts = try file(urls.map { "POST \($0)" })
        let refused = AF.run(["batch", "--parallel=10", "--verify=\(pki.caCertificatePath)", posts])
        #expect(refused.status == 1)
        #expect(refused.err.contains("error: 127.0.0.1:\(h2.port) closed its HTTP/2 connection before answering (servers close one after so many requests); --retry sends it again (and --retry-all-methods a POST, which the server may have processed)\n"), "\(refused.err)")
        // Which streams land past a connection's 7th depends on timing: the lines started
        // when earlier ones end share the new connection with the retries, and a POST was
        // refused four times in a row about once in 50 runs (two CPU hogs beside it). Six
        // retries leave a margin, and the whole budget, since every refusal spends from it;
        // the run above, with none, proves they are what sends it.
        let retried = AF.run(["batch", "--parallel=10", "--retry=6", "--retry-budget=100", "--retry-all-methods", "--retry-delay=0", "--verify=\(pki.caCertificatePath)", posts])
        #expect(retried.status == 0, "\(retried.err)")
        #expect(retried.out.split(separator: "\n").count == 50)
    }

    @Test(.enabled(if: ExternalServer.available("nghttpd"), "nghttpd (Debian's nghttp2-server) is not installed; ./install.sh --dev installs it"))
    func http2RequestsToOneOriginShareOneConnection() throws {
        // Over TLS (ALPN): with libcurl 7.88 a cleartext prior-knowledge connection is never
        // reused (above).
        let pki = TestPKI.shared
        let issued = try pki.issue(name: "h2batch")
        let served = try TemporaryDirectory.make(prefix: "af-h2batch")
        try "h2\n".write(toFile: served + "/x.txt", atomically: false, encoding: .utf8)
        let h2 = try ExternalServer(nghttpdServing: served, key: issued.keyPath, certificate: issued.certificatePath)
        let path = try file((1...50).map { "https://127.0.0.1:\(h2.port)/x.txt?n=\($0)" })
        let result = AF.run(["batch", "--parallel=10", "--verify=\(pki.caCertificatePath)", "--report=json", path])
        #expect(result.status == 0, "\(result.err)")
        let reports = result.out.split(separator: "\n").map { JSONHelpers.object(String($0)) }
        #expect(reports.count == 50)
        let lines = Set(reports.compactMap { $0?["line"] as? Int })
        #expect(lines == Set(1...50))
        let opened = reports.compactMap { report -> Int? in
            guard let attempts = report?["attempts"] as? [[String: Any]], let metrics = attempts.first?["metrics"] as? [String: Any] else { return nil }
            #expect(metrics["http_version"] as? String == "HTTP/2")
            return metrics["new_connections"] as? Int
        }
        #expect(opened.count == 50)
        #expect(opened.reduce(0, +) == 1, "connections opened: \(opened.reduce(0, +))")
    }

    @Test func httpsToAnHTTP1ServerStillRunsInParallelAndPinsHoldPerLine() throws {
        let pki = TestPKI.shared
        let issued = try pki.issue(name: "batch-h1")
        let tls = try TestServer(tls: issued.identity)
        tls.route("/slow") { _, _ in
            usleep(500_000)
            return .response(status: 200, body: Array("slow\n".utf8))
        }
        let path = try file((1...4).map { _ in tls.url("/slow") })
        let started = Date()
        let result = AF.run(["batch", "--parallel=4", "--verify=\(pki.caCertificatePath)", path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == String(repeating: "slow\n", count: 4))
        #expect(Date().timeIntervalSince(started) < 1.5, "waiting for a connection that turned out HTTP/1.1 serialised the requests")
        // A line with a pin that does not match fails on its own connection, even after other
        // lines opened verified connections to the same origin.
        let pinned = try file([tls.url("/get"), "--pin=sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= \(tls.url("/get"))"], name: "pinned.txt")
        let outcome = AF.run(["batch", "--verify=\(pki.caCertificatePath)", pinned])
        #expect(outcome.status == 8, "\(outcome.err)")
        #expect(outcome.err.hasPrefix("af: line 2: error: "), "\(outcome.err)")
    }

    /// The batch's own trust settings are made into a configuration once (their files read
    /// once) and hold for every line that shares them: a pin that matches nothing fails each
    /// https line on its own, in line order, while an http line passes; a line with trust
    /// settings of its own makes its own.
    @Test func theBatchsTrustHoldsForEveryLineThatSharesIt() throws {
        let pki = TestPKI.shared
        let issued = try pki.issue(name: "batch-trust")
        let tls = try TestServer(tls: issued.identity)
        let wrongPin = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        let lines = [tls.url("/get?n=1"), server.url("/get"), tls.url("/get?n=3"), "--verify=no \(tls.url("/get?n=4"))", server.url("/get?n=5")]
        let path = try file(lines, name: "trust.txt")
        let pinned = AF.run(["batch", "--parallel=2", "--verify=\(pki.caCertificatePath)", "--pin=\(wrongPin)", path])
        #expect(pinned.status == 8, "\(pinned.err)")
        let summary = pinned.err.split(separator: "\n").last.map(String.init) ?? ""
        // Line 4 keeps the batch's pin (its own --verify=no leaves only the pins checked).
        #expect(summary == "af: error: 3 of 5 requests failed (lines 1, 3, 4)", "\(pinned.err)")
        // Without the pin, the same lines all pass: the CA is read for the first https line
        // and serves the others.
        let verified = AF.run(["batch", "--parallel=2", "--verify=\(pki.caCertificatePath)", path])
        #expect(verified.status == 0, "\(verified.err)")
        #expect(verified.err.contains("certificate verification is off"), "\(verified.err)")
    }

    @Test func tlsSessionsAreResumedAcrossLinesExceptWherePinsMustBeChecked() throws {
        let pki = TestPKI.shared
        let issued = try pki.issue(name: "batch-resume")
        let tls = try TestServer(tls: issued.identity)
        // The server closes each connection after its answer, so every line needs a new one.
        let path = try file((1...3).map { "\(tls.url("/get?n=\($0)")) Connection:close" })
        func handshakes(_ extra: [String]) -> [(resumed: Bool?, verified: Bool, pinned: String?)] {
            let result = AF.run(["batch", "--verify=\(pki.caCertificatePath)", "--report=json"] + extra + [path])
            #expect(result.status == 0, "\(result.err)")
            return result.out.split(separator: "\n").compactMap { line in
                guard let report = JSONHelpers.object(String(line)), let attempts = report["attempts"] as? [[String: Any]],
                      let metrics = attempts.last?["metrics"] as? [String: Any] else { return nil }
                #expect(metrics["new_connections"] as? Int == 1, "\(metrics)")
                return (metrics["tls_resumed"] as? Bool, metrics["tls_protocol"] != nil, metrics["pin_result"] as? String)
            }
        }
        let plain = handshakes([])
        #expect(plain.map(\.resumed) == [false, true, true])
        #expect(plain.allSatisfy { $0.verified })
        #expect(Set(tls.requests.map(\.connection)).count == 3)

        // A pin is judged on the certificates of a full handshake: no line resumes, and every
        // line's pin is checked on its own connection.
        let pin = try TestPKI.publicKeyPin(ofCertificate: issued.certificatePath)
        let pinned = handshakes(["--pin=\(pin)"])
        #expect(pinned.map(\.resumed) == [false, false, false])
        #expect(pinned.map(\.pinned) == Array(repeating: "public key pin matched \(pin)", count: 3))
    }

    @Test func aBadLineIsNamedAndNothingIsSent() throws {
        let path = try file([server.url("/answer/1"), "\(server.url("/answer/2")) --nope", server.url("/answer/3")])
        let result = AF.run(["batch", path])
        #expect(result.status == 64)
        #expect(result.err.hasPrefix("af: error: \(path):2: unknown option '--nope'"), "\(result.err)")
        #expect(result.err.split(separator: "\n").count == 1)
        #expect(result.out.isEmpty)
        #expect(server.requests.isEmpty)

        for (line, expected) in [
            ("\(server.url("/x")) 'open", "\(path):1: a single quote is not closed on its line (a line of af batch is one request; send a value of many lines from a file, with @FILE or name=@FILE)\n"),
            ("post \(server.url("/x")) bad:=[", "\(path):1: "),
            ("http://exa mple.org/", "\(path):1: "),
            ("\(server.url("/x")) --parallel=3", "\(path):1: --parallel applies to the whole batch: give it to af batch, not on a line"),
            ("post \(server.url("/x")) name@-", "\(path):1: 'name@-' reads standard input, which is never a request body in af batch"),
            ("\(server.url("/x")) -a ada", "\(path):1: -a gives a user without a password, and af may not ask for one with standard input ignored (-I, and on every line of af batch); give -a USER:PASSWORD (USER: for an empty password, or -A bearer -a TOKEN for a token)\n"),
            ("\(server.url("/x"))\u{0}.example.org/", "\(path):1: the line has a NUL byte, which no command line can hold\n"),
            ("\(server.url("/x")) -o -", "\(path):1: -o - would write past the order af batch keeps on standard output; leave it out (the body is printed there in line order) or give -o a file name\n"),
        ] {
            let bad = try file([line], name: "bad.txt")
            let outcome = AF.run(["batch", bad])
            #expect(outcome.status == 64, "\(line): \(outcome.err)")
            #expect(outcome.err.hasPrefix("af: error: \(expected.replacingOccurrences(of: path, with: bad))"), "\(line): \(outcome.err)")
        }
        #expect(server.requests.isEmpty)
    }

    /// A long command line goes on in the next line after a backslash, as in a shell script;
    /// the line numbers are the file's (an error names the first line of a joined one). A
    /// quote must still close on its line, so that a typo fails that line alone.
    @Test func aBackslashCarriesACommandLineOnToTheNext() throws {
        let path = try file([
            "POST \(server.url("/echo")) \\",
            "    X-Long:yes \\",
            "    'note=two words'",
            "\(server.url("/answer/4")) \"X-Q:a\\",
            "b\"",
        ])
        let result = AF.run(["batch", "--report=json", path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.split(separator: "\n").map { $0.contains("\"line\": 1") || $0.contains("\"line\": 4") } == [true, true])
        let posted = try #require(server.requests.first { $0.path == "/echo" })
        #expect(posted.header("X-Long") == "yes")
        #expect(posted.bodyText == #"{"note": "two words"}"#)
        #expect(server.requests.first { $0.path == "/answer/4" }?.header("X-Q") == "ab")

        let bad = try file(["\(server.url("/answer/1")) \\", "  --nope", server.url("/answer/2")], name: "bad.txt")
        let failed = AF.run(["batch", bad])
        #expect(failed.status == 64)
        #expect(failed.err.hasPrefix("af: error: \(bad):1: unknown option '--nope'"), "\(failed.err)")
        let streamed = AF.run(["batch", "-"], stdin: .bytes(Array("\(server.url("/answer/5")) \\\n X-A:1\n\(server.url("/answer/6")) 'open\n\(server.url("/answer/7"))\n".utf8)))
        #expect(streamed.status == 64)
        #expect(streamed.out == "answer 5\nanswer 7\n")
        #expect(streamed.err.hasPrefix("af: line 3: error: a single quote is not closed"), "\(streamed.err)")
        // 100,000 joined lines are read once each: the whole command was read again for every
        // line it gained (2 minutes for this file).
        let long = try TemporaryDirectory.write("\(server.url("/answer/8")) \\\n" + String(repeating: "a\\\n", count: 100_000) + "b\n", named: "long.txt", in: directory)
        let joined = AF.run(["batch", long], timeout: 20)
        #expect(!joined.timedOut)
        #expect(joined.status == 64)
        #expect(joined.err.hasPrefix("af: error: \(long):1: 'aaaa"), "\(joined.err.prefix(200))")
    }

    @Test func unreadableFileAndBadBatchOptions() throws {
        let missing = AF.run(["batch", directory + "/nothing.txt"])
        #expect(missing.status == 66)
        #expect(missing.err == "af: error: cannot read the batch file '\(directory)/nothing.txt': no such file or directory\n")
        // A URL where the file goes: af batch is not how one request is made.
        let url = AF.run(["batch", server.url("/answer/1")])
        #expect(url.status == 66)
        #expect(url.err == "af: error: cannot read the batch file '\(server.url("/answer/1"))': no such file or directory; "
                + "af batch reads command lines from a file, and 'af \(server.url("/answer/1"))' makes one request\n")
        // Without its scheme too, when it has a port (a name with a dot alone may be a file's).
        let hostPort = "localhost:\(server.port)/answer/1"
        #expect(AF.run(["batch", hostPort]).err == "af: error: cannot read the batch file '\(hostPort)': no such file or directory; "
                + "af batch reads command lines from a file, and 'af \(hostPort)' makes one request\n")
        #expect(server.hits("/answer/1") == 0)
        let path = try file([server.url("/answer/1")])
        for (option, message) in [
            ("--parallel=0", "invalid value '0' for --parallel: expected a whole number from 1 to 1000"),
            ("--parallel=100000", "invalid value '100000' for --parallel: expected a whole number from 1 to 1000"),
            ("--rate=0/s", "invalid value '0/s' for --rate: expected N/s, N/m or N/h with N from 1 to 1000000, such as 10/s"),
            ("--rate=abc", "invalid value 'abc' for --rate: expected N/s, N/m or N/h with N from 1 to 1000000, such as 10/s"),
            ("--retry-budget=101", "invalid value '101' for --retry-budget: expected a whole number from 0 to 100"),
        ] {
            let result = AF.run(["batch", option, path])
            #expect(result.status == 64)
            #expect(result.err == "af: error: \(message)\n")
        }
        // Batch options that need one another are named at the first line they apply to,
        // whether that line adds options of its own or not, and nothing is sent.
        let plainFirst = try file([server.url("/answer/1"), "\(server.url("/answer/2")) --cert=/nonexistent.pem"], name: "plain-first.txt")
        let lineWithOptionsFirst = try file(["\(server.url("/answer/1")) --timeout=5", server.url("/answer/2")], name: "options-first.txt")
        for batchFile in [plainFirst, lineWithOptionsFirst] {
            let unpaired = AF.run(["batch", "--cert-key=/nonexistent.key", batchFile])
            #expect(unpaired.status == 64)
            #expect(unpaired.err == "af: error: \(batchFile):1: --cert-key is the private key of a client certificate, and no --cert names one; add --cert=FILE\n")
        }
        let outside = AF.run(["--parallel=2", server.url("/answer/1")])
        #expect(outside.status == 64)
        #expect(outside.err.hasPrefix("af: error: --parallel=2 is an option of af batch") || outside.err.hasPrefix("af: error: --parallel is an option of af batch"), "\(outside.err)")
        let twoFiles = AF.run(["batch", path, path])
        #expect(twoFiles.status == 64)
        #expect(server.requests.isEmpty)
        // Only the first word in lower case is the subcommand: BATCH is a method.
        let method = AF.run(["BATCH", server.url("/answer/9")])
        #expect(method.status == 0)
        #expect(server.requests.last?.method == "BATCH")
    }

    @Test func lineOptionsOverrideBatchOptions() throws {
        let path = try file([
            "\(server.url("/status/404")) --no-check-status",
            server.url("/status/404"),
            "-q \(server.url("/answer/3"))",
        ])
        let result = AF.run(["batch", "--check-status", path])
        #expect(result.status == 4)
        #expect(result.err == """
        af: line 2: error: server answered 404 Not Found
        af: error: 1 of 3 requests failed (line 2)

        """)
        #expect(!result.out.contains("answer 3"))
    }

    /// The check builds every line before the run, but a line that reads a file reads it
    /// when it runs: here line 1 rewrites the file whose text lines 2 (a field, read while
    /// the request is built) and 3 (the whole body, streamed as it is sent) send.
    /// A batch file saved with a byte order mark and CRLF line ends (a Windows editor's) runs
    /// as written: the mark had become part of the first URL (exit 64).
    @Test func aByteOrderMarkAndCRLFLineEndsAreTheEditors() throws {
        let path = try TemporaryDirectory.write("\u{FEFF}\(server.url("/answer/1"))\r\n# note\r\n\(server.url("/answer/2"))\r\n", named: "bom.txt", in: directory)
        let result = AF.run(["batch", path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "answer 1\nanswer 2\n")
        let streamed = AF.run(["batch", "-"], stdin: .bytes(Array("\u{FEFF}\(server.url("/answer/3"))\n".utf8)))
        #expect(streamed.status == 0, "\(streamed.err)")
        #expect(streamed.out == "answer 3\n")
    }

    /// A batch with nothing to send (an empty or comment-only file, empty standard input)
    /// succeeds, but says so: a CI step whose endpoints file came out empty passed in silence.
    @Test func aBatchWithNoRequestsSaysSo() throws {
        let notice = "af: the batch had no requests to send (its input holds only blank lines and comments)\n"
        for result in [AF.run(["batch", try file(["# nothing yet", ""], name: "empty.txt")]), AF.run(["batch", "-"], stdin: .bytes([]))] {
            #expect(result.status == 0)
            #expect(result.out.isEmpty)
            #expect(result.err == notice)
        }
        #expect(AF.run(["batch", "-q", try file([], name: "quiet.txt")]).err.isEmpty)
    }

    @Test func aLineReadsItsFilesWhenItRunsNotWhenTheFileIsChecked() throws {
        let body = try TemporaryDirectory.write("old\n", named: "body.txt", in: directory)
        let path = try file([
            "get \(server.url("/answer/7")) -o \(body) --overwrite",
            "post \(server.url("/post")) text=@\(body)",
            "post \(server.url("/post")) @\(body)",
            "post \(server.url("/post")) name=ada",
        ])
        let result = AF.run(["batch", path])
        #expect(result.status == 0, "\(result.err)")
        let posted = server.requests.filter { $0.path == "/post" }.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(posted == [#"{"text": "answer 7\n"}"#, "answer 7\n", #"{"name": "ada"}"#])
    }

    /// Lines in flight together that save one session keep each other's cookies: each line
    /// applies what its exchange set or removed to the file as it is when it saves. (Each
    /// wrote back the session as it had read it, plus its own cookie: 2 of 20 cookies were
    /// left, one per wave of ten.) A cookie one line removes stays removed.
    @Test func linesSavingOneSessionKeepEachOthersCookies() throws {
        server.route("/forget") { _, _ in
            .response(status: 200, headers: [("Set-Cookie", "gone=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT")], body: Array("{}".utf8))
        }
        let session = directory + "/shared-session.json"
        let seeded = AF.run(["--session=\(session)", server.url("/cookies/set?gone=1&kept=1")])
        #expect(seeded.status == 0, "\(seeded.err)")
        let lines = (1...20).map { "--session=\(session) \(server.url("/cookies/set?k\($0)=v\($0)"))" } + ["--session=\(session) \(server.url("/forget"))"]
        let result = AF.run(["batch", "--parallel=10", try file(lines)])
        #expect(result.status == 0, "\(result.err)")
        let text = try String(contentsOfFile: session, encoding: .utf8)
        let cookies = JSONHelpers.object(text)?["cookies"] as? [[String: Any]] ?? []
        let names = Set(cookies.compactMap { $0["name"] as? String })
        #expect(names == Set((1...20).map { "k\($0)" } + ["kept"]), "\(names.sorted())")
    }

    @Test func failFastStopsStartingAndCancelsWhatIsInFlight() throws {
        let path = try file([
            server.url("/answer/1?delay=3"),
            server.url("/status/500"),
        ] + (3...10).map { server.url("/answer/\($0)") })
        let started = Date()
        let result = AF.run(["batch", "--parallel=2", "--check-status", "--fail-fast", path])
        #expect(result.status == 5)
        #expect(Date().timeIntervalSince(started) < 2.5)
        // Only lines 1 and 2 were started. (Line 1's request may be cancelled before the
        // server has read it, on a loaded machine, so it is not required to arrive.)
        let paths = server.requests.map(\.path)
        #expect(paths.contains { $0.hasPrefix("/status/500") }, "\(paths)")
        #expect(paths.allSatisfy { $0.hasPrefix("/status/500") || $0.hasPrefix("/answer/1") }, "\(paths)")
        #expect(result.err == """
        af: line 2: error: server answered 500 Internal Server Error
        af: error: 1 of 2 requests failed (line 2); --fail-fast started no more and cancelled 1

        """)
    }

    @Test func retriesDrawFromOneBudget() throws {
        server.route("/down/*") { _, _ in .response(status: 503) }
        let path = try file((1...20).map { server.url("/down/\($0)") })
        let result = AF.run(["batch", "--parallel=5", "--check-status", "-q", "--retry=5", "--retry-delay=0.01", "--retry-budget=0", path])
        #expect(result.status == 5)
        // 20 first attempts and the budget's floor of 10 retries, not 20 × 6 requests.
        #expect(server.requests.count == 30)
        let last = result.err.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("af: error: 20 of 20 requests failed (lines 1, 2, 3"), "\(last)")
        #expect(last.hasSuffix("; the retry budget (0 % of requests + 10) ran out after 10 retries, so 20 failures were not retried"), "\(last)")
    }

    @Test func rateSpacesTheStarts() throws {
        let path = try file((1...5).map { server.url("/answer/\($0)") })
        let started = Date()
        let result = AF.run(["batch", "--parallel=5", "--rate=10/s", path])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.err)")
        // Five starts 0.1 s apart: 0.4 s from the first to the last (server-side arrival
        // times carry the server's own thread start-up noise, and a slow first connection
        // (as under AddressSanitizer) shortens the span, so it is checked whole and with
        // slack; without --rate the five arrive within milliseconds).
        #expect(elapsed >= 0.4, "took \(elapsed) s")
        let arrivals = server.requests.map(\.receivedAt).sorted()
        #expect(arrivals.count == 5)
        #expect((arrivals.last ?? 0) - (arrivals.first ?? 0) >= 0.3)
    }

    @Test(arguments: [(SIGINT, Int32(130), "interrupted"), (SIGTERM, Int32(143), "terminated")])
    func signalsCancelWhatIsInFlightAndKeepWhatFinished(signal: Int32, status: Int32, word: String) throws {
        let path = try file([server.url("/answer/1"), server.url("/answer/2?delay=10"), server.url("/answer/3?delay=10")])
        let running = AF.start(["batch", "--parallel=3", path])
        let deadline = Date().addingTimeInterval(10)
        while server.requests.count < 3, Date() < deadline { usleep(10000) }
        usleep(200_000)
        let (result, seconds) = running.stop(with: signal)
        #expect(seconds < 2)
        #expect(result.status == status)
        #expect(result.out == "answer 1\n")
        #expect(result.err == "af: error: \(word); 1 of 3 requests had finished, 2 cancelled\n")
    }

    /// A run stopped by a signal has no summary of failed lines after its error line, so
    /// that line counts the failed ones with the finished and says how many failed (it
    /// counted only the successes as finished, and 100 failed lines read as "0 had finished").
    @Test func aSignalledRunSaysHowManyOfTheFinishedFailed() throws {
        let path = try file([server.url("/answer/1"), server.url("/status/404"), server.url("/answer/3?delay=10")])
        let running = AF.start(["batch", "--parallel=3", "--check-status", path])
        let deadline = Date().addingTimeInterval(10)
        while server.requests.count < 3, Date() < deadline { usleep(10000) }
        usleep(200_000)
        let (result, _) = running.stop(with: SIGTERM)
        #expect(result.status == 143)
        #expect(result.out.hasPrefix("answer 1\n"), "\(result.out)")
        let lines = result.err.split(separator: "\n")
        #expect(lines.last == "af: error: terminated; 2 of 3 requests had finished (1 failed), 1 cancelled", "\(result.err)")
    }

    /// `af batch -` that has read no line yet says only that it stopped: it said "0 of 0
    /// requests had finished, 0 cancelled".
    @Test func aSignalBeforeTheFirstLineSaysNoRequestHadStarted() throws {
        let running = AF.start(["batch", "-"], stdin: .openPipe)
        usleep(300_000)
        let (result, _) = running.stop(with: SIGTERM)
        #expect(result.status == 143)
        #expect(result.err == "af: error: terminated before any request had started\n")
    }

    /// A line that finished while an earlier one still ran waits in a temporary file; when
    /// the run is interrupted, the earlier line is cancelled and prints nothing, and the
    /// waiting output is printed all the same.
    @Test func anInterruptedRunPrintsWhatFinishedBehindALineThatDidNot() throws {
        let path = try file([server.url("/answer/1?delay=10"), server.url("/answer/2?size=5000"), server.url("/answer/3?delay=10")])
        let running = AF.start(["batch", "--parallel=3", path])
        let deadline = Date().addingTimeInterval(10)
        while server.requests.count < 3, Date() < deadline { usleep(10000) }
        usleep(300_000)
        running.signal(SIGINT)
        let result = running.wait(timeout: 10)
        #expect(result.status == 130)
        #expect(Array(result.out.utf8) == TestServer.answer("2", size: 5000))
        #expect(result.err == "af: error: interrupted; 1 of 3 requests had finished, 2 cancelled\n")
    }

    @Test func reportsAreOneJSONLineEachInCompletionOrder() throws {
        let path = try file([server.url("/answer/1?delay=0.5"), server.url("/json"), server.url("/status/404")])
        let result = AF.run(["batch", "--parallel=3", "--report=json", "--check-status", path])
        #expect(result.status == 4)
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        let reports = lines.compactMap { JSONHelpers.object($0) }
        #expect(reports.count == 3)
        #expect(reports.last?["line"] as? Int == 1, "the slow line finishes last")
        #expect(Set(reports.compactMap { $0["line"] as? Int }) == [1, 2, 3])
        let failed = reports.first { $0["line"] as? Int == 3 }
        #expect((failed?["error"] as? [String: Any])?["exit_code"] as? Int == 4)
    }

    @Test func downloadsGetBatchWideNames() throws {
        let output = try TemporaryDirectory.make(prefix: "af-batch-dl")
        let path = try file((1...3).map { _ in server.url("/answer/same") })
        let result = AF.run(["batch", "--parallel=3", "-d", "-q", "--output-dir=\(output)", path])
        #expect(result.status == 0, "\(result.err)")
        let names = try FileManager.default.contentsOfDirectory(atPath: output).sorted()
        #expect(names == ["same", "same-1", "same-2"])
        for name in names {
            #expect(try String(contentsOfFile: output + "/" + name, encoding: .utf8) == "answer same\n")
        }
        // Replacing, they take the same names again (all three wrote `same.part` at once).
        let again = AF.run(["batch", "--parallel=3", "-d", "-q", "--overwrite", "--output-dir=\(output)", path])
        #expect(again.status == 0, "\(again.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).sorted() == names)
    }

    /// A line's download cut short is resumed by running that line again with -c: the advice
    /// said "the same command", which in a batch is the whole batch.
    @Test func anInterruptedDownloadSaysToRunItsLineAgain() throws {
        let output = try TemporaryDirectory.make(prefix: "af-batch-cut")
        server.serveRangedFile(size: 100_000, drop: 40_000)
        let path = try file([server.url("/file/cut.bin") + " -d -q"])
        let result = AF.run(["batch", "--output-dir=\(output)", path])
        #expect(result.status == 1)
        #expect(result.err.contains("; the partial download is in '\(output)/cut.bin.part' (39.1 KiB): run the same line with -c to resume\n"), "\(result.err)")
    }

    /// Lines that save to one name while another is saving it are refused before they are
    /// sent (with or without --overwrite; `./` makes no other file): two downloads into one
    /// `.part` file truncated and interleaved each other's bytes, and the one renamed second
    /// found its file gone. One after another, the usual rules apply.
    @Test func linesSavingToOneNameAtOnceAreRefusedBeforeTheyAreSent() throws {
        let output = try TemporaryDirectory.make(prefix: "af-batch-o")
        let path = try file([
            server.url("/answer/1?delay=0.3&size=100000") + " -o same.txt",
            server.url("/answer/2?size=100000") + " -o same.txt",
            server.url("/answer/3?size=100000") + " -o ./same.txt --overwrite",
        ])
        let result = AF.run(["batch", "--parallel=3", path], directory: output)
        #expect(result.status == 9)
        #expect(result.err == """
        af: line 2: error: another download in progress is saving 'same.txt'; give each download a file of its own
        af: line 3: error: another download in progress is saving './same.txt'; give each download a file of its own
        af: error: 2 of 3 requests failed (lines 2, 3)

        """)
        #expect(FileManager.default.contents(atPath: output + "/same.txt") == Data(TestServer.answer("1", size: 100_000)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: output) == ["same.txt"])
        #expect(server.hits("/answer/2") == 0 && server.hits("/answer/3") == 0)

        let sequential = AF.run(["batch", "--parallel=1", path], directory: output)
        #expect(sequential.status == 9)
        #expect(sequential.err == """
        af: line 1: error: 'same.txt' exists; use --overwrite to replace it or -c to resume it
        af: line 2: error: 'same.txt' exists; use --overwrite to replace it or -c to resume it
        af: error: 2 of 3 requests failed (lines 1, 2)

        """)
        #expect(FileManager.default.contents(atPath: output + "/same.txt") == Data(TestServer.answer("3", size: 100_000)))
    }

    /// Lines already waiting on standard input when af starts: the reader hands the first
    /// one over at once. It used to do so before the batch drove its session, which then
    /// started a transfer thread of its own, and af stopped on a failed precondition
    /// ("a batch drives its own session", exit 132) — on the second of a few runs here.
    @Test func linesWaitingOnStandardInputBeforeTheRunStarts() throws {
        // A race: the release binary failed 6 of 100 runs with a file on standard input and 12
        // of 100 with a pipe; the debug binary the tests run seldom loses it, so many rounds.
        let path = try file([server.url("/answer/1")], name: "waiting.txt")
        for round in 1...40 {
            let result = AF.run(["batch", "-"], stdin: round % 2 == 0 ? .file(path) : .bytes(Array((server.url("/answer/1") + "\n").utf8)))
            #expect(result.status == 0, "round \(round): \(result.status) \(result.err)")
            #expect(result.out == "answer 1\n")
            if result.status != 0 { break }
        }
    }

    @Test func streamedLinesRunAsTheyComeAndABadOneFailsOnlyItself() throws {
        let input = [server.url("/answer/1"), "\(server.url("/answer/2")) \"open", server.url("/answer/3")].joined(separator: "\n") + "\n"
        let result = AF.run(["batch", "-"], stdin: .bytes(Array(input.utf8)))
        #expect(result.status == 64)
        #expect(result.out == "answer 1\nanswer 3\n")
        #expect(result.err == """
        af: line 2: error: a double quote is not closed on its line (a line of af batch is one request; end a line with \\ to go on in the next, or send a value of many lines from a file, with @FILE or name=@FILE)
        af: error: 1 of 3 requests failed (line 2)

        """)
        #expect(server.requests.count == 2)
    }

    /// `af batch -` starts each line as it arrives, not at the end of the input, and reads no
    /// further ahead than `--parallel * 2 + 16` lines (plus a read's worth): while a slow line
    /// runs, a writer with 400 KB more to say is held at a full pipe, not read into memory.
    @Test func streamedLinesStartAsTheyArriveAndAFastWriterWaitsForRoom() throws {
        let running = AF.start(["batch", "--parallel=1", "-"], stdin: .openPipe)
        let before = server.requests.count
        running.send(Array((server.url("/answer/1") + "\n").utf8))
        let deadline = Date().addingTimeInterval(10)
        while running.outputSoFar != "answer 1\n", Date() < deadline { usleep(10000) }
        #expect(running.outputSoFar == "answer 1\n")
        // 100 lines of 4 KB each behind a line that takes 3 seconds.
        let padding = String(repeating: "p", count: 4000)
        var rest = server.url("/answer/2?delay=3") + "\n"
        for number in 3...102 { rest += server.url("/answer/\(number)?pad=\(padding)") + "\n" }
        let bytes = Array(rest.utf8)
        let writer = Thread { running.send(bytes) }
        writer.start()
        while server.requests.count < before + 2, Date() < deadline { usleep(10000) }
        usleep(500_000)
        #expect(!writer.isFinished, "af read all 400 KB while a line held the run")
        let end = Date().addingTimeInterval(20)
        while !writer.isFinished, Date() < end { usleep(10000) }
        #expect(writer.isFinished)
        running.closeInput()
        let result = running.wait(timeout: 20)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == (1...102).map { "answer \($0)\n" }.joined())
        #expect(result.err.isEmpty)
    }

    /// Standard input that cannot be read (closed, or a directory) fails as a line of its
    /// own, exit 66; it used to end the input as if empty ("no requests to send", exit 0).
    @Test(arguments: [("<&-", "it was closed when af started (as <&- does); give the lines in a FILE or on a pipe"), ("< /", "is a directory")])
    func unreadableStandardInputFailsTheBatch(redirect: String, reason: String) throws {
        // Bounded: with its signal pipe taking the closed descriptor's number, af waited there.
        let (status, errors) = try AF.shell("exec timeout 20 '\(AF.binary)' batch - \(redirect)")
        #expect(status == 66)
        #expect(errors == """
        af: line 1: error: cannot read standard input: \(reason)
        af: error: 1 of 1 requests failed (line 1)

        """)
    }

    /// A streamed line over 1 MiB fails that line once and the lines after it run. (The
    /// reader once reported the same line again and again, without end.) Its message names
    /// the line once, as every streamed line's does (it said "line 2: error: standard
    /// input:2:"), and so does a line that is not UTF-8.
    @Test func aStreamedLineTooLongFailsOnlyItself() throws {
        var input = Array((server.url("/answer/1") + "\n").utf8)
        input += Array(repeating: UInt8(ascii: "a"), count: 2 << 20) + [10]
        input += Array((server.url("/answer/3") + "\n").utf8)
        input += Array("x\u{FF}".utf8.prefix(1)) + [0xFF, 10]
        let result = AF.run(["batch", "-"], stdin: .bytes(input), timeout: 20)
        #expect(!result.timedOut)
        #expect(result.status == 64)
        #expect(result.out == "answer 1\nanswer 3\n")
        #expect(result.err == """
        af: line 2: error: the line is longer than 1 MiB; one line holds one af command line
        af: line 4: error: the line 'x\\xFF' is not UTF-8 text; af reads its lines as UTF-8
        af: error: 2 of 4 requests failed (lines 2, 4)

        """)
    }

    /// A first streamed line that says the input is no text ends it there: over 1 MiB with
    /// no line break (`/dev/zero`, which af read for ever), or not UTF-8 (binary data, whose
    /// chance words between line feeds ran as requests: host names looked up, URLs fetched).
    /// The line after it, a good URL, is not sent.
    @Test func aFirstStreamedLineThatIsNoTextEndsTheInput() throws {
        let (status, errors) = try AF.shell("exec timeout 20 '\(AF.binary)' batch - < /dev/zero")
        #expect(status == 64)
        #expect(errors == """
        af: line 1: error: the line is longer than 1 MiB; one line holds one af command line; af reads no further lines of standard input
        af: error: 1 of 1 requests failed (line 1)

        """)
        for (first, message) in [
            ([0x8B, 0x1F, 0x41], "the line '\\x8B\\x1FA' is not UTF-8 text; af reads its lines as UTF-8"),
            ([0x7F, 0x45, 0x4C, 0x46, 0, 1, 0], "the line has NUL bytes, so this is no UTF-8 text file of command lines (UTF-16 text, a program, an archive?); af batch reads one af command line per line of UTF-8 text"),
        ] as [([UInt8], String)] {
            let input = first + [10] + Array((server.url("/answer/2") + "\n").utf8)
            let result = AF.run(["batch", "-"], stdin: .bytes(input), timeout: 20)
            #expect(result.status == 64)
            #expect(result.out.isEmpty)
            #expect(result.err == "af: line 1: error: \(message); af reads no further lines of standard input\naf: error: 1 of 1 requests failed (line 1)\n")
        }
    }

    /// Where the system refuses af more threads (`ulimit -u`, a container's limit on tasks),
    /// a batch runs its lines on the one lane it drives itself, and a line that needs a
    /// thread for connections of its own fails alone. It crashed at its second lane's thread
    /// (a fatal error, exit 132), and with one lane it hung: Dispatch, asked for the timer
    /// behind the silent-server notice, waited on the transfers' thread for a worker for ever.
    /// af runs as nobody, whose limit is its own (root's is not enforced), with `ulimit -u 1`.
    @Test(.enabled(if: AF.canRunLimited, "needs root, to run af as nobody under a limit of its own"))
    func aBatchRunsOnTheThreadsTheSystemAllows() throws {
        let port = try #require(URL(string: server.url("/"))?.port)
        let path = try file([
            server.url("/answer/1"), server.url("/answer/2"),
            "--resolve=own.test:\(port):127.0.0.1 http://own.test:\(port)/answer/3",
            server.url("/answer/4"),
        ])
        #expect(chmod(directory, 0o755) == 0 && chmod(path, 0o644) == 0)
        let result = AF.runLimited(["batch", "--parallel=8", path], processes: 1)
        let (out, err) = (result.out, result.err)
        #expect(result.status == 1)
        #expect(out == "answer 1\nanswer 2\nanswer 4\n")
        #expect(err == """
        af: line 3: error: cannot start a thread for this line's own connections (its --verify, --pin, --proxy, --resolve or the like keep them apart from other lines'): the system refuses more threads (ulimit -u, or a container's limit on tasks); give such options to the whole batch, or run the line on its own
        af: error: 1 of 4 requests failed (line 3)

        """)
    }

    /// FILE that cannot be read twice (a FIFO, `<(…)`, a device) is copied as it is checked,
    /// so a bad line ends the copy: `/dev/zero` is one line over 1 MiB, not a copy that
    /// grows until the disk is full (it did, without end). Nothing is sent, nothing is left.
    @Test func aDeviceThatNeverEndsFailsAtItsFirstLine() throws {
        let temporary = try TemporaryDirectory.make(prefix: "af-batch-tmp")
        let result = AF.run(["batch", "/dev/zero"], environment: ["TMPDIR": temporary], timeout: 20)
        #expect(!result.timedOut)
        #expect(result.status == 64)
        #expect(result.out.isEmpty)
        #expect(result.err == "af: error: /dev/zero:1: the line is longer than 1 MiB; one line holds one af command line\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
    }

    /// A FIFO is checked whole before anything is sent, like a file: its bad line is named,
    /// and its good lines run in order when every line is good.
    @Test func aFIFOIsCheckedWholeThenRun() throws {
        let temporary = try TemporaryDirectory.make(prefix: "af-batch-tmp")
        for (lines, bad) in [([server.url("/answer/1"), server.url("/answer/2")], false), ([server.url("/answer/1"), "get --no-such-option " + server.url("/answer/2")], true)] {
            let fifo = directory + "/lines-\(bad).fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let text = lines.joined(separator: "\n") + "\n"
            let writer = Thread {
                guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
                handle.write(Data(text.utf8))
                try? handle.close()
            }
            writer.start()
            let before = server.requests.count
            let result = AF.run(["batch", fifo], environment: ["TMPDIR": temporary], timeout: 20)
            #expect(!result.timedOut)
            if bad {
                #expect(result.status == 64)
                #expect(result.out.isEmpty)
                #expect(result.err.hasPrefix("af: error: \(fifo):2: "), "\(result.err)")
                #expect(server.requests.count == before)
            } else {
                #expect(result.status == 0, "\(result.err)")
                #expect(result.out == "answer 1\nanswer 2\n")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty)
        }
    }

    /// Output printed to the terminal the progress line is on erases the line first: the
    /// second output was written on after it ("af: 1/2 done, 0 failed, 9.8 requests/sHTTP/1.1").
    @Test func outputOnTheTerminalErasesTheProgressLineFirst() throws {
        let path = try file([server.url("/answer/1"), server.url("/answer/2?delay=0.4")])
        let outcome = PTYRunner.run(["batch", path])
        #expect(outcome.status == 0)
        let pieces = outcome.output.components(separatedBy: "requests/s")
        #expect(pieces.count >= 3, "a line drawn after each output: \(outcome.output.debugDescription)")
        for piece in pieces.dropFirst().dropLast() {
            #expect(piece.isEmpty || piece.hasPrefix("\r"), "written on after the progress line: \(outcome.output.debugDescription)")
        }
        #expect(pieces.last == "\r\n", "the last drawing stays: \(outcome.output.debugDescription)")
        #expect(outcome.output.contains("answer 2"))
    }

    @Test func progressLineOnATerminal() throws {
        let path = try file((1...3).map { server.url("/answer/\($0)") })
        let outcome = PTYRunner.run(["batch", path])
        #expect(outcome.status == 0)
        #expect(outcome.output.contains("af: 3/3 done, 0 failed"), "\(outcome.output)")
        #expect(outcome.output.contains("answer 3"))
        // On success the last drawing stays as the run's summary (it was erased, and a batch
        // with its output redirected left nothing behind); a failed run erases it for its
        // error line.
        let tail = outcome.output.components(separatedBy: "af: 3/3 done, 0 failed").last ?? ""
        #expect(tail.hasSuffix("requests/s\r\n") && !tail.contains("\u{1B}[K"), "\(outcome.output.debugDescription)")
        let failing = try file([server.url("/answer/1"), server.url("/status/500")])
        let failed = PTYRunner.run(["batch", "--check-status", failing])
        #expect(failed.status == 5)
        #expect(failed.output.hasSuffix("\r\u{1B}[Kaf: error: 1 of 2 requests failed (line 2)\r\n"), "\(failed.output.debugDescription)")
    }

    /// On a narrow terminal the progress line keeps to one row: one that wrapped left a copy
    /// of its first row behind at every redraw ("af: 7/31 done, 0 failed, 45.3 requests/s"
    /// is 42 columns).
    @Test func progressLineFitsANarrowTerminal() throws {
        let path = try file((1...8).map { server.url("/answer/\($0)?delay=0.15") })
        let (output, status) = PTYRunner.run(["batch", "--parallel=2", path], columns: 30)
        #expect(status == 0)
        let lines = PTYRunner.statusLines(in: output, holding: "/8")
        #expect(lines.count >= 3, "\(output.debugDescription)")
        for line in lines { #expect(line.unicodeScalars.count <= 29, "\(line.debugDescription) on a 30-column terminal") }
        #expect(lines.last == "af: 8/8 done, 0 failed", "\(output.debugDescription)")
    }

    /// A terminal narrowed while the batch runs gets lines that fit its new width.
    @Test func progressLineFollowsATerminalNarrowedWhileItRuns() throws {
        let path = try file((1...8).map { server.url("/answer/\($0)?delay=0.15") })
        let outcome = PTYRunner.run(["batch", "--parallel=2", path], columns: 120, narrowedTo: 20, waitFor: "requests/s")
        #expect(outcome.status == 0)
        let lines = PTYRunner.statusLines(in: outcome.output, holding: "/8")
        #expect(lines.first?.hasSuffix("requests/s") == true, "\(outcome.output.debugDescription)")
        #expect(lines.last == "8/8, 0 failed", "\(outcome.output.debugDescription)")
    }
}
