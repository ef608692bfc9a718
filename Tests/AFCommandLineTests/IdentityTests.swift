@testable import AFCommandLine
import AFEngine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// SPEC §8: who you are.
@Suite struct AuthTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-auth")
    }

    /// The colon of `-a USER:PASSWORD`, and the `=` of `--option=VALUE`, are found as bytes:
    /// followed by a combining mark each is one `Character` with it, which a character search
    /// missed (the whole value became the user name, or the option was unknown).
    @Test func separatorsBeforeACombiningMark() throws {
        let password = "\u{301}pw"
        for arguments in [["-a", "ada:" + password], ["--auth=ada:" + password], ["--auth", "ada:" + password]] {
            let result = InProcessAF.run(arguments + [server.url("/get")])
            #expect(result.status == 0, "\(result.err)")
            #expect(server.requests.last?.header("Authorization") == "Basic " + Data("ada:\(password)".utf8).base64EncodedString())
        }
        let raw = InProcessAF.run(["--raw=\u{301}é", server.url("/post")])
        #expect(raw.status == 0, "\(raw.err)")
        #expect(server.requests.last?.body == Array("\u{301}é".utf8))
    }

    @Test func basicBearerAndDigest() throws {
        let basic = InProcessAF.run(["-a", "ada:s3cret", server.url("/basic-auth/ada/s3cret")])
        #expect(basic.out == #"{"authenticated": true, "user": "ada"}"#)
        #expect(server.requests.last?.header("Authorization") == "Basic YWRhOnMzY3JldA==")
        let bearer = InProcessAF.run(["-A", "bearer", "-a", "tok en", server.url("/bearer")])
        #expect(bearer.out == #"{"authenticated": true, "token": "tok en"}"#)
        let digest = InProcessAF.run(["-A", "digest", "-a", "ada:s3cret", server.url("/digest-auth/ada/s3cret")])
        #expect(digest.status == 0)
        #expect(digest.out == #"{"authenticated": true, "user": "ada"}"#)
        #expect(server.requests(to: "/digest-auth/ada/s3cret").count == 2)
        #expect(server.requests.last?.header("Authorization")?.hasPrefix("Digest username=\"ada\"") == true)
        let wrong = InProcessAF.run(["--check-status", "-A", "digest", "-a", "ada:nope", server.url("/digest-auth/ada/s3cret")])
        #expect(wrong.status == 4)
        #expect(wrong.err == "af: error: server answered 401 Unauthorized\n", "refused credentials get no hint")
        // A 401 whose challenge asks for what was not sent says what to give.
        let basicForDigest = InProcessAF.run(["--check-status", "-q", "-a", "ada:s3cret", server.url("/digest-auth/ada/s3cret")])
        #expect(basicForDigest.err == "af: error: server answered 401 Unauthorized; the server asks for Digest authentication: -A digest -a USER:PASSWORD\n")
        let none = InProcessAF.run(["--check-status", "-q", "--ignore-netrc", server.url("/basic-auth/ada/s3cret")])
        #expect(none.err == "af: error: server answered 401 Unauthorized; the server asks for credentials: -a USER:PASSWORD\n")
        #expect(Execution.challengeSchemes(#"Basic realm="x", Digest realm="c", nonce="d", Bearer"#) == ["basic", "digest", "bearer"])
        // A token given as -a without -A bearer went as Basic credentials; Basic credentials
        // given with -A bearer went as a token.
        let tokenAsBasic = InProcessAF.run(["--check-status", "-q", "-a", "tok:", server.url("/bearer")])
        #expect(tokenAsBasic.status == 4)
        #expect(tokenAsBasic.err == "af: error: server answered 401 Unauthorized; the server asks for a token, and -a sent Basic credentials: -A bearer -a TOKEN\n")
        let basicAsToken = InProcessAF.run(["--check-status", "-q", "-A", "bearer", "-a", "ada:s3cret", server.url("/basic-auth/ada/nope")])
        #expect(basicAsToken.status == 4)
        #expect(basicAsToken.err == "af: error: server answered 401 Unauthorized; the server asks for Basic credentials, and -A bearer sent a token: -a USER:PASSWORD without -A bearer\n")
        server.route("/bearer-only-refuses") { _, _ in .response(status: 401, headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")], body: []) }
        let refusedToken = InProcessAF.run(["--check-status", "-q", "-A", "bearer", "-a", "tok", server.url("/bearer-only-refuses")])
        #expect(refusedToken.status == 4)
        #expect(refusedToken.err == "af: error: server answered 401 Unauthorized\n", "a refused token of the asked scheme gets no hint")
        // Credentials a redirect to another origin dropped were not sent to the server that
        // answered 401: no word on what they were.
        let other = try TestServer()
        server.route("/elsewhere") { _, _ in .response(status: 302, headers: [("Location", other.url("/bearer"))], body: []) }
        let dropped = InProcessAF.run(["--check-status", "-q", "-F", "-a", "tok:", server.url("/elsewhere")])
        #expect(dropped.status == 4)
        #expect(dropped.err == "af: redirect to \(other.url("/bearer")) leaves the origin; not sending Authorization there (--location-trusted keeps them)\n"
            + "af: error: server answered 401 Unauthorized\n")
    }

    /// A digest challenge libcurl cannot use (no nonce, a value past its limit) is not answered:
    /// libcurl ends the transfer with that 401, which is then the response, as curl shows it.
    /// af took every digest 401 for one libcurl would answer and reported "sent no response head".
    @Test func aDigestChallengeThatCannotBeAnsweredIsTheResponse() {
        let challenges = ["Digest", #"Digest realm="a""#, #"Digest realm="\#(String(repeating: "r", count: 5_000))", nonce="n""#]
        for (index, challenge) in challenges.enumerated() {
            let path = "/odd-digest-\(index)"
            server.route(path) { _, _ in
                .response(status: 401, reason: "Unauthorized", headers: [("WWW-Authenticate", challenge)], body: Array("denied".utf8))
            }
            let plain = InProcessAF.run(["-A", "digest", "-a", "ada:s3cret", server.url(path)])
            #expect(plain.status == 0, "\(index): \(plain.err)")
            #expect(plain.out == "denied", "\(index)")
            #expect(plain.err == "", "\(index)")
            let checked = InProcessAF.run(["--check-status", "-q", "-A", "digest", "-a", "ada:s3cret", server.url(path)])
            #expect(checked.status == 4, "\(index)")
            #expect(checked.err == "af: error: server answered 401 Unauthorized\n", "\(index)")
            let all = InProcessAF.run(["-v", "--all", "-A", "digest", "-a", "ada:s3cret", server.url(path)])
            let statusLines = all.out.split(separator: "\n").filter { $0.hasPrefix("HTTP/1.1 ") }
            #expect(statusLines == ["HTTP/1.1 401 Unauthorized"], "\(index)")
            #expect(server.hits(path) == 3, "\(index): one request a run")
        }
        // One libcurl can answer still is: the 401 is a step, the 200 the response.
        let digest = InProcessAF.run(["-v", "--all", "-A", "digest", "-a", "ada:s3cret", server.url("/digest-auth/ada/s3cret")])
        #expect(digest.out.split(separator: "\n").filter { $0.hasPrefix("HTTP/1.1 ") } == ["HTTP/1.1 401 Unauthorized", "HTTP/1.1 200 OK"])
        let report = InProcessAF.run(["--report=json", "-A", "digest", "-a", "ada:s3cret", server.url("/odd-digest-0")])
        #expect(report.status == 0)
        #expect(report.out.contains(#""response": {"status": 401, "reason": "Unauthorized""#), "\(report.out)")
    }

    @Test func credentialsInTheURL() {
        let result = InProcessAF.run(["http://ada:pw%40x@127.0.0.1:\(server.port)/basic-auth/ada/pw@x"])
        #expect(result.out == #"{"authenticated": true, "user": "ada"}"#)
        #expect(server.requests.last?.target == "/basic-auth/ada/pw@x")
        // A user without a password has an empty one (curl and HTTPie): no prompt, no error.
        for url in ["http://ada@127.0.0.1:\(server.port)/echo", "http://ada:@127.0.0.1:\(server.port)/echo"] {
            let bare = InProcessAF.run([url], stdin: .null)
            #expect(bare.status == 0, "\(bare.err)")
            #expect(server.requests.last?.header("Authorization") == "Basic YWRhOg==")
        }
        // -a wins over the URL's.
        #expect(InProcessAF.run(["-a", "ada:pw@x", "http://ada:wrong@127.0.0.1:\(server.port)/basic-auth/ada/pw@x"]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Basic YWRhOnB3QHg=")
    }

    @Test func noPromptWithoutATerminal() throws {
        let scratch = try TemporaryDirectory.make(prefix: "af-noprompt")
        for stdin in [StandardInput.null, .bytes(Array("pw\n".utf8))] {
            let result = InProcessAF.run(["-a", "ada", server.url("/basic-auth/ada/pw")], stdin: stdin, environment: ["TMPDIR": scratch])
            #expect(result.status == 64)
            #expect(result.err == "af: error: -a gives a user without a password, and standard input is not a terminal to ask on; give -a USER:PASSWORD (USER: for an empty password, or -A bearer -a TOKEN for a token)\n")
        }
        #expect(server.requests.isEmpty)
        // Standard input read (and spooled) before the error is not left on disk.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }

    /// A netrc machine written in Unicode matches the URL's host, which is in its ASCII form
    /// by then, whichever form the URL and the netrc use.
    @Test func netrcMachinesInUnicodeMatchTheirASCIIForm() throws {
        let netrc = directory + "/netrc-idn"
        try "machine Bücher.example login ada password pw\n".write(toFile: netrc, atomically: false, encoding: .utf8)
        let resolve = "--resolve=xn--bcher-kva.example:\(server.port):127.0.0.1"
        for url in ["http://bücher.example:\(server.port)/echo", "http://xn--bcher-kva.example:\(server.port)/echo"] {
            let result = InProcessAF.run([url, resolve], environment: ["NETRC": netrc])
            #expect(result.status == 0, "\(result.err)")
            #expect(server.requests.last?.header("Authorization") == "Basic YWRhOnB3", "\(url)")
        }
    }

    /// A fully qualified name (`host.`, with DNS's trailing dot) is the same host to the netrc,
    /// in both directions: its machine was not found (and a `default` entry's credentials
    /// went in its place).
    @Test func netrcMachinesMatchTheFullyQualifiedName() throws {
        let netrc = directory + "/netrc-dot"
        try "machine dotted.example login ada password pw\nmachine other.example. login bob password qq\ndefault login eve password ev\n"
            .write(toFile: netrc, atomically: false, encoding: .utf8)
        for (host, expected) in [("dotted.example.", "Basic YWRhOnB3"), ("other.example", "Basic Ym9iOnFx")] {
            let result = InProcessAF.run(["http://\(host):\(server.port)/echo", "--resolve=\(host):\(server.port):127.0.0.1"], environment: ["NETRC": netrc])
            #expect(result.status == 0, "\(result.err)")
            #expect(server.requests.last?.header("Authorization") == expected, "\(host)")
        }
    }

    @Test func netrcIsUsedUnlessIgnoredAndLookedUpPerHost() throws {
        let netrc = directory + "/netrc"
        try """
        # comment
        machine a.test login alice password "a pass"
        machine b.test
          login bob
          password bpass
        macdef init
          ignored
          lines

        default login anon password x
        """.write(toFile: netrc, atomically: false, encoding: .utf8)
        let second = try TestServer()
        server.route("/hop") { _, _ in .response(status: 302, headers: [("Location", "http://b.test:\(second.port)/echo")]) }
        let resolve = ["--resolve=a.test:\(server.port):127.0.0.1", "--resolve=b.test:\(second.port):127.0.0.1"]
        let result = InProcessAF.run(["-F", "http://a.test:\(server.port)/hop"] + resolve, environment: ["NETRC": netrc])
        #expect(result.status == 0, "\(result.err)")
        #expect(server.requests.last?.header("Authorization") == "Basic YWxpY2U6YSBwYXNz")
        #expect(second.requests.last?.header("Authorization") == "Basic Ym9iOmJwYXNz")
        #expect(InProcessAF.run(["--ignore-netrc", "http://a.test:\(server.port)/echo"] + resolve, environment: ["NETRC": netrc]).status == 0)
        #expect(server.requests.last?.header("Authorization") == nil)
        #expect(InProcessAF.run(["-a", "explicit:pw", "http://a.test:\(server.port)/echo"] + resolve, environment: ["NETRC": netrc]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Basic ZXhwbGljaXQ6cHc=")
        #expect(InProcessAF.run(["http://127.0.0.1:\(server.port)/echo"], environment: ["NETRC": netrc]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Basic YW5vbjp4")
        // A home of its own: the shared one would hand this login to every test running now.
        let home = directory + "/home-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try "machine 127.0.0.1 login home password h\n".write(toFile: home + "/.netrc", atomically: false, encoding: .utf8)
        #expect(InProcessAF.run([server.url("/echo")], environment: ["HOME": home]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Basic aG9tZTpo")
    }

    /// Refused credentials that nothing on the command line shows came from the netrc: the
    /// error said the server "asks for credentials", as if none had been sent.
    @Test func refusedNetrcCredentialsAreNamedAsSuch() throws {
        let netrc = directory + "/netrc-refused-\(UUID().uuidString)"
        try "machine 127.0.0.1 login ada password stale\n".write(toFile: netrc, atomically: false, encoding: .utf8)
        let refused = InProcessAF.run(["--check-status", "-q", server.url("/basic-auth/ada/s3cret")], environment: ["NETRC": netrc])
        #expect(refused.status == 4)
        #expect(refused.err == "af: error: server answered 401 Unauthorized; af sent the credentials '\(netrc)' holds for 127.0.0.1: correct them there, or give -a USER:PASSWORD (--ignore-netrc sends none)\n")
        #expect(!refused.err.contains("stale"), "the password is never printed")
        let ignored = InProcessAF.run(["--check-status", "-q", "--ignore-netrc", server.url("/basic-auth/ada/s3cret")], environment: ["NETRC": netrc])
        #expect(ignored.err == "af: error: server answered 401 Unauthorized; the server asks for credentials: -a USER:PASSWORD\n")
    }

    /// A netrc entry written with another format's words (`passwd` for `password`, `user`
    /// for `login`): the format skips words it does not know, so af sent the login with an
    /// empty password and said only that the netrc's credentials were refused. The refusal
    /// names the words and what to write; the value after them (here a word of the same
    /// list) is never named.
    @Test func aNetrcEntryWithAnotherFormatsWordsIsNamedWhenRefused() throws {
        let netrc = directory + "/netrc-misnamed-\(UUID().uuidString)"
        try "machine 127.0.0.1 login ada passwd pass\n".write(toFile: netrc, atomically: false, encoding: .utf8)
        let refused = InProcessAF.run(["--check-status", "-q", server.url("/basic-auth/ada/pass")], environment: ["NETRC": netrc])
        #expect(refused.status == 4)
        #expect(server.requests.last?.header("Authorization") == "Basic YWRhOg==", "the login with an empty password, as curl sends it")
        #expect(refused.err == "af: error: server answered 401 Unauthorized; af sent the credentials '\(netrc)' holds for 127.0.0.1, whose entry's 'passwd' is not a netrc word, so af read no value from it (write password): correct them there, or give -a USER:PASSWORD (--ignore-netrc sends none)\n")
        try "machine 127.0.0.1 user ada pass s3cret\n".write(toFile: netrc, atomically: false, encoding: .utf8)
        let both = InProcessAF.run(["--check-status", "-q", server.url("/basic-auth/ada/s3cret")], environment: ["NETRC": netrc])
        #expect(both.err == "af: error: server answered 401 Unauthorized; af sent the credentials '\(netrc)' holds for 127.0.0.1, whose entry's 'user' and 'pass' are not netrc words, so af read no value from them (write login and password): correct them there, or give -a USER:PASSWORD (--ignore-netrc sends none)\n")
        #expect(!both.err.contains("s3cret"))
        // Keywords in capitals are keywords, as curl reads them.
        try "Machine 127.0.0.1 Login ada PASSWORD s3cret\n".write(toFile: netrc, atomically: false, encoding: .utf8)
        #expect(InProcessAF.run(["--check-status", "-q", server.url("/basic-auth/ada/s3cret")], environment: ["NETRC": netrc]).status == 0)
    }

    /// The same for credentials a session file keeps from an earlier run.
    @Test func refusedSessionCredentialsAreNamedAsSuch() throws {
        let session = directory + "/refused-\(UUID().uuidString).json"
        let url = server.url("/basic-auth/ada/s3cret")
        #expect(InProcessAF.run(["--session=\(session)", "-a", "ada:stale", "--check-status", "-q", url]).err
                == "af: error: server answered 401 Unauthorized\n")
        let later = InProcessAF.run(["--session=\(session)", "--check-status", "-q", url])
        #expect(later.status == 4)
        #expect(later.err == "af: error: server answered 401 Unauthorized; af sent the credentials the session '\(session)' keeps: give -a USER:PASSWORD to replace them\n")
        #expect(InProcessAF.run(["--session=\(session)", "-a", "ada:s3cret", "--check-status", "-q", url]).status == 0)
    }

    /// A netrc saved with Windows line ends reads like any other (as curl reads it).
    @Test func netrcWithCRLFLineEnds() throws {
        let netrc = directory + "/netrc-crlf-\(UUID().uuidString)"
        try "machine 127.0.0.1\r\nlogin alice\r\npassword s3cret\r\n\r\nmacdef init\r\ncd /\r\n\r\ndefault login anon password x\r\n"
            .write(toFile: netrc, atomically: false, encoding: .utf8)
        #expect(InProcessAF.run([server.url("/echo")], environment: ["NETRC": netrc]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Basic YWxpY2U6czNjcmV0")
        #expect(InProcessAF.run(["http://localhost:\(server.port)/echo"], environment: ["NETRC": netrc]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Basic YW5vbjp4")
    }

    /// Netrc words are split on blanks and quotes read as scalars: a password that starts
    /// with a combining mark, after a blank or inside quotes, is still a word of its own.
    @Test func netrcWordsBeforeACombiningMark() throws {
        let netrc = directory + "/netrc-marks-\(UUID().uuidString)"
        try "machine 127.0.0.1 login ada password \u{301}pw\nmachine localhost login bob password \"\u{301}q r\"\n"
            .write(toFile: netrc, atomically: false, encoding: .utf8)
        #expect(InProcessAF.run([server.url("/echo")], environment: ["NETRC": netrc]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Basic " + Data("ada:\u{301}pw".utf8).base64EncodedString())
        #expect(InProcessAF.run(["http://localhost:\(server.port)/echo"], environment: ["NETRC": netrc]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Basic " + Data("bob:\u{301}q r".utf8).base64EncodedString())
    }

    private func counterScript() throws -> (command: String, counter: String) {
        let counter = directory + "/count-\(UUID().uuidString)"
        let script = directory + "/token-\(UUID().uuidString).sh"
        try """
        #!/bin/sh
        n=$(cat '\(counter)' 2>/dev/null || echo 0)
        n=$((n + 1))
        echo $n > '\(counter)'
        echo "token-$n"
        """.write(toFile: script, atomically: false, encoding: .utf8)
        return ("sh '\(script)'", counter)
    }

    @Test func authCommandRefreshesExactlyOnceOnA401() throws {
        server.route("/protected") { request, _ in
            request.header("Authorization") == "Bearer token-2" ? .json("{\"ok\": true}") : .response(status: 401, headers: [("WWW-Authenticate", "Bearer")])
        }
        let (command, counter) = try counterScript()
        let result = InProcessAF.run(["--auth-cmd", command, server.url("/protected")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "{\"ok\": true}")
        // Said as what it is: it read "retrying in 0s (attempt 2 of 1)" without --retry.
        #expect(result.err == "af: server answered 401 Unauthorized: it refused the token; running --auth-cmd again for a new one\n")
        #expect(server.requests(to: "/protected").map { $0.header("Authorization") } == ["Bearer token-1", "Bearer token-2"])
        #expect(try String(contentsOfFile: counter, encoding: .utf8) == "2\n")
    }

    /// A refreshed token is not a retry: `--retry=2` still allows two retries of the 503s
    /// that follow it (the refresh took one of them, and the second 503 was the answer), and
    /// the notices number the retries 2 and 3 of 3, as without the refresh.
    @Test func aRefreshedTokenLeavesRetryAllItsAttempts() throws {
        server.route("/expired-then-busy") { request, hit in
            if request.header("Authorization") != "Bearer token-2" { return .response(status: 401) }
            return hit < 4 ? .response(status: 503, body: Array("busy\n".utf8)) : .json("{\"hit\": \(hit)}")
        }
        let (command, counter) = try counterScript()
        let result = InProcessAF.run(["--retry=2", "--retry-delay=0.01", "--retry-backoff=1", "--auth-cmd", command, server.url("/expired-then-busy")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "{\"hit\": 4}")
        #expect(result.err == """
            af: server answered 401 Unauthorized: it refused the token; running --auth-cmd again for a new one
            af: retrying in 10ms (attempt 2 of 3): server answered 503 Service Unavailable
            af: retrying in 10ms (attempt 3 of 3): server answered 503 Service Unavailable

            """)
        #expect(server.requests(to: "/expired-then-busy").map { $0.header("Authorization") } == ["Bearer token-1"] + Array(repeating: "Bearer token-2", count: 3))
        #expect(try String(contentsOfFile: counter, encoding: .utf8) == "2\n")
    }

    /// A POST that fails after a refresh is still told why `--retry` did not retry it: the
    /// refresh made two attempts, and the hint looked for one.
    @Test func aPostNotRetriedAfterARefreshSaysWhy() throws {
        server.route("/expired-then-down") { request, _ in
            request.header("Authorization") != "Bearer token-2" ? .response(status: 401) : .response(status: 503)
        }
        let (command, _) = try counterScript()
        let result = InProcessAF.run(["--retry=2", "--check-status", "--auth-cmd", command, "post", server.url("/expired-then-down"), "a=1"])
        #expect(result.status == 5)
        #expect(result.err == """
            af: server answered 401 Unauthorized: it refused the token; running --auth-cmd again for a new one
            af: error: server answered 503 Service Unavailable (after 2 attempts) (POST is not retried without --retry-all-methods)

            """)
        #expect(server.hits("/expired-then-down") == 2)
    }

    /// The lines of a batch share one --auth-cmd token: the command runs once for all of
    /// them, and once more when the token is refused, however many lines the 401 reached (it
    /// ran once per line, and again per refused line).
    @Test func batchLinesShareOneAuthCommandToken() throws {
        server.route("/rotated/*") { request, _ in
            request.header("Authorization") == "Bearer token-2" ? .json("{\"ok\": true}") : .response(status: 401, headers: [("WWW-Authenticate", "Bearer")])
        }
        let (command, counter) = try counterScript()
        let lines = (1...12).map { server.url("/rotated/\($0)") }.joined(separator: "\n") + "\n"
        let path = try TemporaryDirectory.write(lines, named: "rotated-\(UUID().uuidString).txt", in: directory)
        let result = InProcessAF.run(["batch", "--parallel=4", "--auth-cmd", command, path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == String(repeating: "{\"ok\": true}", count: 12))
        #expect(try String(contentsOfFile: counter, encoding: .utf8) == "2\n")
        let accepted = try counterScript()
        server.route("/plain-token/*") { request, _ in
            request.header("Authorization") == "Bearer token-1" ? .json("{}") : .response(status: 401)
        }
        let plain = try TemporaryDirectory.write((1...8).map { server.url("/plain-token/\($0)") }.joined(separator: "\n"), named: "plain-\(UUID().uuidString).txt", in: directory)
        #expect(InProcessAF.run(["batch", "--parallel=3", "--auth-cmd", accepted.command, plain]).status == 0)
        #expect(try String(contentsOfFile: accepted.counter, encoding: .utf8) == "1\n")
    }

    @Test func authCommandDoesNotLoopOnRepeated401() throws {
        server.route("/never") { _, _ in .response(status: 401) }
        let (command, counter) = try counterScript()
        let result = InProcessAF.run(["--check-status", "--auth-cmd", command, server.url("/never")])
        #expect(result.status == 4)
        #expect(server.hits("/never") == 2)
        #expect(try String(contentsOfFile: counter, encoding: .utf8) == "2\n")
    }

    @Test func failingAuthCommandIsAClearError() {
        let result = InProcessAF.run(["--auth-cmd", "echo 'no vault' >&2; exit 3", server.url("/bearer")])
        #expect(result.status == 1)
        #expect(result.err == "af: error: --auth-cmd 'echo 'no vault' >&2; exit 3' exited with status 3: no vault; run it yourself to see why\n")
        #expect(server.requests.isEmpty)
        let crlf = InProcessAF.run(["--auth-cmd", #"printf 'locked\r\nmore\r\n' >&2; exit 2"#, server.url("/bearer")])
        #expect(crlf.err == #"af: error: --auth-cmd 'printf 'locked\r\nmore\r\n' >&2; exit 2' exited with status 2: locked; run it yourself to see why"# + "\n")
        let empty = InProcessAF.run(["--auth-cmd", "true", server.url("/bearer")])
        #expect(empty.err == "af: error: --auth-cmd 'true' printed no token; it should print the token on standard output\n")
        // Two lines, however they are broken (a CRLF is one Swift character).
        for command in [#"printf 'a\r\nX-Injected: 1'"#, #"printf 'a\nb'"#, #"printf 'a\rb'"#] {
            let twoLines = InProcessAF.run(["--auth-cmd", command, server.url("/bearer")])
            #expect(twoLines.status == 1, "\(command)")
            #expect(twoLines.err == "af: error: --auth-cmd '\(command)' printed more than one line; it should print one line, the token\n")
        }
        // Output without end was read into memory until af was killed (`yes` crashed it
        // under a memory limit); now the command is stopped past 64 KiB.
        let endless = InProcessAF.run(["--auth-cmd", "yes", server.url("/bearer")])
        #expect(endless.status == 1)
        #expect(endless.err == "af: error: --auth-cmd 'yes' printed more than 64.0 KiB and was stopped; it should print one line, the token\n")
        // A flood on standard error keeps only its start (its first line is the message).
        let noisy = InProcessAF.run(["--auth-cmd", "yes denied | head -c 5000000 >&2; exit 4", server.url("/bearer")])
        #expect(noisy.err == "af: error: --auth-cmd 'yes denied | head -c 5000000 >&2; exit 4' exited with status 4: denied; run it yourself to see why\n")
        #expect(server.requests.isEmpty)
    }

    /// The command is done when its shell exits, even while something it started in the
    /// background (an agent, a cache daemon) holds its output open: af waited for the pipes
    /// to close, which here took the background process's 30 s, and forever for a daemon.
    @Test func authCommandIsDoneWhenItsShellExits() throws {
        server.route("/bearer") { request, _ in .json("{\"auth\": \"\(request.header("Authorization") ?? "")\"}") }
        let pidFile = directory + "/background-\(UUID().uuidString).pid"
        defer {
            if let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                kill(pid, SIGKILL)
            }
        }
        let started = Date()
        let result = InProcessAF.run(["--auth-cmd", "echo background-token; (sleep 30 & echo $! > '\(pidFile)')", server.url("/bearer")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "{\"auth\": \"Bearer background-token\"}")
        #expect(Date().timeIntervalSince(started) < 15)
        // A background process that keeps writing to standard error does not hold af either.
        let noisy = InProcessAF.run(["--auth-cmd", "echo noisy-token; (yes >&2 &)", server.url("/bearer")])
        #expect(noisy.status == 0, "\(noisy.err)")
        #expect(noisy.out == "{\"auth\": \"Bearer noisy-token\"}")
    }

    /// With --timeout the token command may take that long and is stopped after, as an
    /// attempt is: a command that waits (for a prompt no one answers, an agent that hangs)
    /// held af for as long as it waited. Without --timeout it is given its time.
    @Test func authCommandIsStoppedAtTheTimeout() throws {
        server.route("/bearer") { request, _ in .json("{\"auth\": \"\(request.header("Authorization") ?? "")\"}") }
        let started = Date()
        let stopped = InProcessAF.run(["--timeout=0.5", "--auth-cmd", "exec sleep 30", server.url("/bearer")])
        #expect(stopped.status == 1)
        #expect(stopped.err == "af: error: --auth-cmd 'exec sleep 30' did not finish within 500ms (--timeout) and was stopped; run it yourself to see where it waits\n")
        #expect(Date().timeIntervalSince(started) < 15)
        // One that closes its output first is waited for no longer.
        let closed = InProcessAF.run(["--timeout=0.5", "--auth-cmd", "exec >&- 2>&-; exec sleep 30", server.url("/bearer")])
        #expect(closed.err == "af: error: --auth-cmd 'exec >&- 2>&-; exec sleep 30' did not finish within 500ms (--timeout) and was stopped; run it yourself to see where it waits\n")
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(server.requests.isEmpty)
        // What the command started is stopped with it (it lingered for its 30 s).
        let pidFile = directory + "/started-\(UUID().uuidString).pid"
        let family = InProcessAF.run(["--timeout=0.5", "--auth-cmd", "sleep 30 & echo $! > '\(pidFile)'; wait", server.url("/bearer")])
        #expect(family.status == 1)
        let background = try #require(Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        func running(_ pid: Int32) -> Bool {
            // Gone, or a zombie its new parent has not reaped yet.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let nameEnd = stat.lastIndex(of: ")") else { return false }
            return !stat[stat.index(after: nameEnd)...].hasPrefix(" Z")
        }
        var waited = 0
        while running(background), waited < 50 {
            Thread.sleep(forTimeInterval: 0.05)
            waited += 1
        }
        #expect(!running(background), "the command's background sleep (\(background)) is still running")
        if running(background) { kill(background, SIGKILL) }
        let slow = InProcessAF.run(["--auth-cmd", "sleep 0.7; echo slow-token", server.url("/bearer")])
        #expect(slow.status == 0, "\(slow.err)")
        #expect(slow.out == "{\"auth\": \"Bearer slow-token\"}")
        // In a batch, lines with different limits do not share one run of the command.
        let lines = try TemporaryDirectory.write("\(server.url("/bearer"))\n\(server.url("/bearer")) --timeout=0.3\n", named: "limits-\(UUID().uuidString).txt", in: directory)
        let batch = InProcessAF.run(["batch", "--auth-cmd", "sleep 0.7; echo batch-token", lines])
        #expect(batch.status == 1)
        #expect(batch.out == "{\"auth\": \"Bearer batch-token\"}")
        #expect(batch.err.contains("af: line 2: error: --auth-cmd 'sleep 0.7; echo batch-token' did not finish within 300ms (--timeout) and was stopped"), "\(batch.err)")
    }

    @Test func authCommandTokenStaysWithItsOrigin() throws {
        let other = try TestServer()
        server.route("/away") { _, _ in .response(status: 302, headers: [("Location", other.url("/echo"))]) }
        #expect(InProcessAF.run(["-F", "--auth-cmd", "echo t", server.url("/away")]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Bearer t")
        #expect(other.requests.last?.header("Authorization") == nil)
    }

    /// A redirect to a same-origin URL with credentials whose path starts with a combining
    /// mark and holds an `@` (what an open redirect lets anyone write): the credentials are
    /// taken out of the URL, not the host. Taking them out once scanned Characters, missed
    /// the slash (one Character with the mark) and cut at the later `@`, so the next request
    /// went to the host after it, Authorization and all.
    @Test func takingCredentialsOutOfARedirectKeepsItsHost() throws {
        let other = try TestServer()
        let location = "http://u:p@127.0.0.1:\(server.port)/\u{301}@localhost:\(other.port)/echo"
        server.route("/open") { _, _ in .response(status: 302, headers: [("Location", location)]) }
        let result = InProcessAF.run(["-F", "-a", "ada:pw", server.url("/open")])
        #expect(other.requests.isEmpty, "\(other.requests.map { $0.header("Authorization") ?? "-" })")
        #expect(server.requests.count == 2, "\(result.err)")
        #expect(server.requests.last?.header("Authorization") == "Basic YWRhOnB3")
    }
}

@Suite struct SessionTests {
    let server: TestServer
    let config: String

    init() throws {
        server = try TestServer()
        config = try TemporaryDirectory.make(prefix: "af-config")
    }

    private func run(_ arguments: [String]) -> AFResult {
        InProcessAF.run(arguments, environment: ["AF_CONFIG_DIR": config])
    }

    /// A run that waits long for another af to finish writing its session (one stopped with
    /// Ctrl-Z while it held the session's directory) says so once, then saves when it may;
    /// a short wait says nothing.
    @Test func aLongWaitForAnotherWriterIsSaid() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-session-wait")
        for (held, said) in [(1.2, true), (0.0, false)] {
            let lock = open(directory, O_RDONLY | O_DIRECTORY)
            #expect(flock(lock, LOCK_EX) == 0)
            Thread { Thread.sleep(forTimeInterval: held); close(lock) }.start()
            let result = InProcessAF.run(["--session=\(directory)/s.json", server.url("/cookies/set?a=1")],
                                         noticeDelays: NoticeDelays(silentInput: 0.4))
            #expect(result.status == 0, "\(result.err)")
            #expect(result.err == (said ? "af: another af has been writing the session '\(directory)/s.json' for 400ms; waiting for it to finish (one stopped with Ctrl-Z holds it until 'fg' resumes it)\n" : ""))
            #expect(FileManager.default.fileExists(atPath: directory + "/s.json"))
        }
    }

    /// A session path that is a symbolic link (a session kept with one's dotfiles) is
    /// written through: the atomic save replaced the link with a file, and the file it
    /// pointed to never saw the change.
    @Test func aSessionReachedThroughASymbolicLinkIsWrittenThrough() throws {
        let kept = try TemporaryDirectory.make(prefix: "af-dotfiles")
        let target = kept + "/session.json"
        let link = config + "/linked.json"
        #expect(run(["--session=\(target)", server.url("/cookies/set?a=1")]).status == 0)
        #expect(symlink(target, link) == 0)
        #expect(run(["--session=\(link)", server.url("/cookies/set?b=2")]).status == 0)
        #expect(FileIO.isSymbolicLink(link), "the link is still a link")
        let text = try String(contentsOfFile: target, encoding: .utf8)
        #expect(text.contains("\"name\": \"a\"") && text.contains("\"name\": \"b\""), "\(text)")
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // A link to a session not made yet (relative, as dotfile managers make them) is where
        // the new session goes; it was read as a file, and failed with exit 66.
        let dangling = config + "/dangling.json"
        #expect(symlink("later.json", dangling) == 0)
        let fresh = run(["--session=\(dangling)", server.url("/cookies/set?c=3")])
        #expect(fresh.status == 0, "\(fresh.err)")
        #expect(FileIO.isSymbolicLink(dangling))
        #expect(try String(contentsOfFile: config + "/later.json", encoding: .utf8).contains("\"name\": \"c\""))
    }

    @Test func sessionKeepsCookiesHeadersAndAuthAcrossRuns() throws {
        #expect(run(["--session=work", server.url("/cookies/set?sid=abc&theme=dark"), "X-Team:blue", "Content-Type:text/plain", "-a", "ada:pw"]).status == 0)
        let path = "\(config)/sessions/127.0.0.1_\(server.port)/work.json"
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let second = run(["--session=work", server.url("/cookies")])
        #expect(["{\"cookie\": \"sid=abc; theme=dark\"}", "{\"cookie\": \"theme=dark; sid=abc\"}"].contains(second.out))
        let request = try #require(server.requests.last)
        #expect(request.header("X-Team") == "blue")
        #expect(request.header("Content-Type") == nil)
        #expect(request.header("Authorization") == "Basic YWRhOnB3")
        #expect(run(["--session=work", server.url("/echo"), "X-Team:green"]).status == 0)
        #expect(server.requests.last?.header("X-Team") == "green")
        #expect(run(["--session=work", server.url("/echo")]).status == 0)
        #expect(server.requests.last?.header("X-Team") == "green")
    }

    /// A Cookie header goes on the line of the cookies libcurl sends (a session's, those a
    /// redirect set): there were two Cookie lines, of which servers read the first, and a
    /// session's old value of a cookie the header gives went first.
    @Test func aCookieHeaderJoinsTheCookiesSentOnOneLine() throws {
        let path = config + "/cookies.json"
        #expect(run(["--session=\(path)", server.url("/cookies/set?a=1")]).status == 0)
        #expect(run(["--session=\(path)", server.url("/cookies"), "Cookie:b=2"]).out == "{\"cookie\": \"a=1; b=2\"}")
        #expect(server.requests.last?.headers.filter { $0.name.lowercased() == "cookie" }.count == 1)
        // b=2 is the session's now; given again with a new value, only the new one is sent.
        #expect(run(["--session=\(path)", server.url("/cookies"), "Cookie:b=3"]).out == "{\"cookie\": \"a=1; b=3\"}")
        #expect(server.requests.last?.headers.filter { $0.name.lowercased() == "cookie" }.count == 1)
        #expect(run(["--session=\(path)", server.url("/cookies")]).out == "{\"cookie\": \"a=1; b=3\"}")
        // Without a session: a cookie set on the way through a redirect, beside the header.
        server.route("/set-and-redirect") { _, _ in
            .response(status: 302, headers: [("Set-Cookie", "r=9; Path=/"), ("Location", "/cookies")])
        }
        let followed = run(["--follow", server.url("/set-and-redirect"), "Cookie:c=4"])
        #expect(followed.out == "{\"cookie\": \"r=9; c=4\"}")
        #expect(server.requests.last?.headers.filter { $0.name.lowercased() == "cookie" }.count == 1)
    }

    /// A session's cookies go in the order it keeps them (oldest first, RFC 6265 §5.4), as
    /// `--offline` prints them and as HTTPie sends them: libcurl sent the newest first
    /// ("cookie2=foo; cookie1=foo" from HTTPie's own test session).
    @Test func aSessionsCookiesAreSentOldestFirst() throws {
        let path = config + "/ordered.json"
        try #"{"cookies": {"cookie1": {"value": "foo"}, "cookie2": {"value": "foo"}, "cookie3": {"value": "bar"}}}"#
            .write(toFile: path, atomically: false, encoding: .utf8)
        let sent = run(["--session=\(path)", server.url("/cookies")])
        #expect(sent.status == 0, "\(sent.err)")
        #expect(sent.out == "{\"cookie\": \"cookie1=foo; cookie2=foo; cookie3=bar\"}")
        let offline = run(["--offline", "--session=\(path)", server.url("/cookies")])
        #expect(offline.out.split(separator: "\n").filter { $0.hasPrefix("Cookie:") } == ["Cookie: cookie1=foo; cookie2=foo; cookie3=bar"])
        // In an af session, set one after the other.
        let own = config + "/own-order.json"
        for name in ["x", "y", "z"] { #expect(run(["--session=\(own)", server.url("/cookies/set?\(name)=1")]).status == 0) }
        #expect(run(["--session=\(own)", server.url("/cookies")]).out == "{\"cookie\": \"x=1; y=1; z=1\"}")
    }

    /// Which of a session's cookies a printed request carries: those libcurl would send
    /// (RFC 6265 §5.4), longest path first.
    @Test func theCookieLineOfAPrintedRequestFollowsTheCookieRules() throws {
        var session = SessionFile(path: "/dev/null", host: "api.example.org")
        session.cookies = [
            Cookie(name: "root", value: "1", domain: "api.example.org"),
            Cookie(name: "deep", value: "2", domain: "api.example.org", path: "/v1"),
            Cookie(name: "near", value: "3", domain: "api.example.org", path: "/v1x"),
            Cookie(name: "parent", value: "4", domain: "example.org", includeSubdomains: true),
            Cookie(name: "hostonly", value: "5", domain: "example.org"),
            Cookie(name: "secure", value: "6", domain: "api.example.org", secure: true),
            Cookie(name: "old", value: "7", domain: "api.example.org", expires: 1000),
            Cookie(name: "later", value: "8", domain: "api.example.org", expires: 3000),
        ]
        let plain = try HTTPURL(parsing: "http://API.example.org/v1/items")
        #expect(session.cookieLine(for: plain, given: [], now: 2000) == "deep=2; root=1; parent=4; later=8")
        let secure = try HTTPURL(parsing: "https://api.example.org/v1")
        #expect(session.cookieLine(for: secure, given: [HTTPHeader("Cookie", "root=9; x=1")], now: 2000) == "deep=2; parent=4; secure=6; later=8; root=9; x=1")
        #expect(session.cookieLine(for: try HTTPURL(parsing: "http://other.org/"), given: [], now: 2000) == nil)
    }

    /// `--offline` and `--curl` print the request as it would go, the session's cookies on
    /// its Cookie line: they left them out (libcurl adds them only when it sends), so the
    /// printed curl command did not make the same request.
    @Test func printedRequestsCarryTheSessionsCookies() throws {
        let path = config + "/printed.json"
        #expect(run(["--session=\(path)", server.url("/cookies/set?a=1")]).status == 0)
        let requests = server.requests.count
        let offline = run(["--offline", "--session=\(path)", server.url("/cookies"), "Cookie:b=2"])
        #expect(offline.out.split(separator: "\n").filter { $0.hasPrefix("Cookie:") } == ["Cookie: a=1; b=2"])
        let curl = run(["--curl", "--session=\(path)", server.url("/cookies")])
        #expect(curl.out.contains(" --header 'Cookie: a=1' "), "\(curl.out)")
        // Given anew, a session's cookie goes with the new value only.
        let other = run(["--offline", "--session=\(path)", server.url("/cookies"), "Cookie:a=5"])
        #expect(other.out.split(separator: "\n").filter { $0.hasPrefix("Cookie:") } == ["Cookie: a=5"])
        #expect(server.requests.count == requests)
    }

    @Test func readOnlySessionIsNeverWritten() throws {
        let path = config + "/mine.json"
        #expect(run(["--session=\(path)", server.url("/cookies/set?a=1")]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = run(["--session=\(path)", "--session-read-only", server.url("/cookies/set?b=2"), "X-New:1"])
        #expect(result.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(server.requests.last?.header("Cookie") == "a=1")
    }

    /// A session whose file fails as it is synced or closed (a network file system's
    /// delayed write error: quota, a full disk on the server) is not saved over the old one:
    /// that stays as it was, no temporary file is left, and the error names the session.
    @Test(arguments: [(EIO, Int32(0)), (Int32(0), EDQUOT)])
    func aSessionThatFailsAtSyncOrCloseKeepsTheFileItHad(syncAnswer: Int32, closeAnswer: Int32) throws {
        let path = config + "/delayed-\(syncAnswer)-\(closeAnswer).json"
        #expect(run(["--session=\(path)", server.url("/cookies/set?a=1")]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        var calls = FileCalls.system
        calls.sync = { _ in syncAnswer }
        calls.close = { fd in
            _ = Glibc.close(fd)
            return closeAnswer
        }
        let url = try HTTPURL(parsing: server.url("/"))
        do throws(CommandFailure) {
            try SessionFile.update(path: path, url: url, calls: calls) { session in
                session.headers.append(HTTPHeader(name: "X-New", value: "1"))
            }
            Issue.record("the session was saved")
        } catch {
            let reason = POSIXFailure(code: syncAnswer == 0 ? closeAnswer : syncAnswer).description
            #expect(error == CommandFailure("cannot write the session '\(path)': \(reason)", exitCode: ExitStatus.output))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let left = try FileManager.default.contentsOfDirectory(atPath: config).filter { $0.hasPrefix(".af-session") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func sessionHeadersStayWithTheirHost() throws {
        let other = try TestServer()
        let path = config + "/shared.json"
        #expect(run(["--session=\(path)", server.url("/echo"), "X-Secret:1"]).status == 0)
        #expect(run(["--session=\(path)", other.url("/echo")]).status == 0)
        #expect(other.requests.last?.header("X-Secret") == nil)
    }

    /// A server that sets new cookies on every response cannot grow a session without end
    /// (until it is too large to read back): the 1,000 newest are kept, the oldest dropped,
    /// and a line on standard error says so.
    @Test func sessionsKeepTheNewestThousandCookies() throws {
        // libcurl takes at most 50 cookies from one response: 21 responses of 50 new ones.
        server.route("/many-cookies/*") { request, _ in
            let round = request.path.split(separator: "/").last.map(String.init) ?? "?"
            let cookies = (0..<50).map { ("Set-Cookie", "r\(round)_\($0)=v; Path=/") }
            return .response(status: 200, headers: cookies + [("Content-Type", "text/plain")], body: Array("ok\n".utf8))
        }
        let path = config + "/many.json"
        for round in 1...20 {
            let result = run(["--session=\(path)", server.url("/many-cookies/\(round)")])
            #expect(result.status == 0 && result.err.isEmpty, "\(round): \(result.err)")
        }
        let last = run(["--session=\(path)", server.url("/many-cookies/21")])
        #expect(last.status == 0)
        #expect(last.err == "af: the session '\(path)' keeps at most 1000 cookies; 50 of the oldest were dropped\n")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let cookies = JSONHelpers.object(text)?["cookies"] as? [[String: Any]] ?? []
        let names = Set(cookies.compactMap { $0["name"] as? String })
        #expect(cookies.count == 1000)
        #expect(names.isSuperset(of: (0..<50).map { "r21_\($0)" }), "the newest are all kept")
        #expect(!names.contains { $0.hasPrefix("r1_") }, "the first response's are the oldest")
    }

    /// Oldest first: unchanged cookies in the order the file had them, then new and changed
    /// ones; the oldest go past the limit.
    @Test func keptCookiesDropTheOldestFirst() {
        let earlier = ["a", "b", "c"].map { Cookie(name: $0, value: "1", domain: "h") }
        let now = [Cookie(name: "c", value: "1", domain: "h"), Cookie(name: "a", value: "2", domain: "h"),
                   Cookie(name: "d", value: "1", domain: "h"), Cookie(name: "b", value: "1", domain: "h")]
        let (kept, dropped) = SessionFile.keptCookies(now, earlier: earlier, limit: 3)
        #expect(kept.map { "\($0.name)=\($0.value)" } == ["c=1", "a=2", "d=1"])
        #expect(dropped == 1)
        #expect(SessionFile.keptCookies(now, earlier: earlier).dropped == 0)
    }

    /// An exchange's cookie changes (set, changed, removed) land on the file as it is now;
    /// what the exchange did not touch stays as the file has it.
    @Test func cookieChangesApplyToTheSessionAsItIsNow() {
        func jar(_ pairs: [(String, String)]) -> [Cookie] { pairs.map { Cookie(name: $0.0, value: $0.1, domain: "h") } }
        let before = jar([("a", "1"), ("b", "1"), ("c", "1")])
        // The exchange changed a, removed b, kept c and set d; meanwhile another line
        // changed c and set e in the file.
        let after = jar([("a", "2"), ("c", "1"), ("d", "1")])
        let current = jar([("a", "1"), ("b", "1"), ("c", "9"), ("e", "1")])
        let merged = SessionFile.applying(changesFrom: before, to: after, onto: current)
        #expect(merged.map { "\($0.name)=\($0.value)" } == ["c=9", "e=1", "a=2", "d=1"])
        #expect(SessionFile.applying(changesFrom: [], to: after, onto: []) == after, "a new session is the exchange's cookies")
    }

    /// A session path whose directories start with a combining mark: the directories are
    /// made at each slash, and the file lands where the path says (it was not saved).
    @Test func sessionPathsSplitAtEverySlash() throws {
        let path = config + "/s/\u{301}t/\u{301}session.json"
        #expect(run(["--session=\(path)", server.url("/echo"), "X-Kept:1"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(run(["--session=\(path)", server.url("/echo")]).status == 0)
        #expect(server.requests.last?.header("X-Kept") == "1")
    }

    /// A named session lives under the home directory, which af never makes: with a `HOME`
    /// that is not there (`/nonexistent`, as system accounts have), af made it, and as root
    /// even `/nonexistent`. It refuses before sending; read-only, or with XDG_CONFIG_HOME
    /// naming where configuration goes (made as the XDG specification asks), it goes on.
    @Test func aNamedSessionNeedsAHomeThatIsThere() throws {
        let missing = config + "/no-home"
        let refused = InProcessAF.run(["--session=work", server.url("/get")], environment: ["HOME": missing], unsetting: ["AF_CONFIG_DIR", "XDG_CONFIG_HOME"])
        #expect(refused.status == 9)
        #expect(refused.err == "af: error: cannot write the session in '\(missing)/.config/af/sessions/127.0.0.1_\(server.port)': the home directory '\(missing)' is not there; set HOME to one that is (or AF_CONFIG_DIR), give --session a path, or use --session-read-only to use it without saving it\n")
        #expect(server.requests.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: missing))
        let readOnly = InProcessAF.run(["--session-read-only=work", server.url("/get")], environment: ["HOME": missing], unsetting: ["AF_CONFIG_DIR", "XDG_CONFIG_HOME"])
        #expect(readOnly.status == 0, "\(readOnly.err)")
        let xdg = config + "/xdg"
        let kept = InProcessAF.run(["--session=work", server.url("/get")], environment: ["HOME": missing, "XDG_CONFIG_HOME": xdg], unsetting: ["AF_CONFIG_DIR"])
        #expect(kept.status == 0, "\(kept.err)")
        #expect(FileManager.default.fileExists(atPath: "\(xdg)/af/sessions/127.0.0.1_\(server.port)/work.json"))
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func expiredAndForeignCookiesAreNotSent() throws {
        let path = config + "/cookies.json"
        // A name other than localhost: libcurl treats localhost as a secure context.
        try """
        {"af_session": 1, "host": "site.test:\(server.port)", "headers": [], "auth": null, "cookies": [
          {"name": "fresh", "value": "1", "domain": "site.test", "path": "/", "expires": 0},
          {"name": "old", "value": "2", "domain": "site.test", "path": "/", "expires": 1000},
          {"name": "other", "value": "3", "domain": "example.org", "path": "/", "expires": 0},
          {"name": "deep", "value": "4", "domain": "site.test", "path": "/elsewhere", "expires": 0},
          {"name": "tls", "value": "5", "domain": "site.test", "path": "/", "secure": true, "expires": 0}
        ]}
        """.write(toFile: path, atomically: false, encoding: .utf8)
        let result = run(["--session=\(path)", "--resolve=site.test:\(server.port):127.0.0.1", "http://site.test:\(server.port)/cookies"])
        #expect(result.out == #"{"cookie": "fresh=1"}"#)
        let saved = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!saved.contains("\"old\""))
        #expect(saved.contains("\"other\""))
    }

    @Test func corruptSessionIsAnErrorAndKept() throws {
        let path = config + "/broken.json"
        try "{not json".write(toFile: path, atomically: false, encoding: .utf8)
        let result = run(["--session=\(path)", server.url("/echo")])
        #expect(result.status == 64)
        #expect(result.err.hasPrefix("af: error: the session file '\(path)' is not valid JSON"))
        #expect(result.err.hasSuffix("; fix it or remove it (af never replaces it)\n"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{not json")
        #expect(server.requests.isEmpty)
    }

    /// A cookie with a line break or a stray control character (only an edited file has one)
    /// is refused with the file: `--offline` printed its line break into the request, and
    /// libcurl read the rest of the value as another line of its cookie list.
    @Test(arguments: [("a", "1\r\nX-Evil: yes"), ("b\tc", "2"), ("", "3"), ("d", "x\u{7F}")])
    func aSessionCookieWithAControlCharacterIsRefused(name: String, value: String) throws {
        let path = config + "/edited.json"
        let document = "{\"af_session\": 1, \"host\": \"127.0.0.1:\(server.port)\", \"cookies\": [{\"name\": \(JSONText.string(name)), "
            + "\"value\": \(JSONText.string(value)), \"domain\": \"127.0.0.1\"}]}"
        try document.write(toFile: path, atomically: false, encoding: .utf8)
        for mode in ["--offline", "--curl", "-v"] {
            let result = run([mode, "--session-read-only=\(path)", server.url("/cookies")])
            #expect(result.status == 64)
            #expect(result.err == "af: error: the session file '\(path)' has a cookie '\(Quote.controls(name))' with an empty name or a control character in it; "
                    + "fix it or remove it (af never replaces it)\n")
            #expect(result.out.isEmpty)
        }
        #expect(server.requests.isEmpty)
    }

    /// So are a header or credentials no request can carry: a line break in a header value
    /// or a bearer token printed a header line of its own with `--offline` and `--curl`, and
    /// a name that is no token was sent as it was.
    @Test(arguments: [
        (#""headers": [["X-A", "1\r\nX-Evil: yes"]]"#, "has a header 'X-A' whose value contains a line break; header values must be one line"),
        (#""headers": [["X A", "1"]]"#, "has a header named 'X A', which is no header name"),
        (#""auth": {"type": "bearer", "user": "", "password": "t\r\nX-Evil: yes"}"#, "has credentials with a line break or a NUL character in them"),
        (#""auth": {"type": "basic", "user": "u", "password": "p\r"}"#, "has credentials with a line break or a NUL character in them"),
    ])
    func aSessionHeaderOrCredentialsNoRequestCanCarryAreRefused(member: String, problem: String) throws {
        let path = config + "/edited-\(UUID().uuidString).json"
        try "{\"af_session\": 1, \"host\": \"127.0.0.1:\(server.port)\", \(member)}".write(toFile: path, atomically: false, encoding: .utf8)
        for mode in ["--offline", "--curl", "-v"] {
            let result = run([mode, "--session-read-only=\(path)", server.url("/get")])
            #expect(result.status == 64)
            #expect(result.err == "af: error: the session file '\(path)' \(problem); fix it or remove it (af never replaces it)\n")
            #expect(result.out.isEmpty)
        }
        #expect(server.requests.isEmpty)
    }

    /// `-a` with a line break: a bearer token carried it into a header line of its own with
    /// `--offline` and `--curl`, and `-a "u:$(cat pass.txt)"` of a file with CRLF line ends
    /// sent a password with a CR in it. The message does not repeat the secret.
    @Test func credentialsWithALineBreakAreRefused() {
        let cases: [([String], String)] = [
            (["-a", "u:p\r"], "the credentials given with -a end with a carriage return (\\r), as text from a file with CRLF line ends does; remove it (tr -d '\\r')"),
            (["-A", "bearer", "-a", "t\r\nX-Evil: yes"], "the credentials given with -a hold a line break or a NUL character, which no credentials can; check how the value was made"),
        ]
        for (arguments, message) in cases {
            for mode in ["--offline", "--curl", "-v"] {
                let result = run([mode] + arguments + [server.url("/get")])
                #expect(result.status == 64)
                #expect(result.err == "af: error: \(message)\n")
                #expect(result.out.isEmpty)
            }
        }
        #expect(server.requests.isEmpty)
    }

    /// A session an HTTPie user brings (`--session=PATH` to HTTPie's file) was refused as "not
    /// an af session", and then read but never written back, so a cookie a login set was lost
    /// to the next run. Both of HTTPie's layouts are read — 3.2's lists and `raw_auth`, older
    /// objects and `username`/`password` — and written back in the layout the file had, as
    /// HTTPie writes it (four spaces, its keys), its other members (`__meta__`, a header left
    /// out as null, an unbound cookie's empty domain) as they were. A file with HTTPie's keys
    /// and no others is HTTPie's too, as HTTPie reads it. An exchange that changes nothing
    /// leaves the file alone.
    @Test(arguments: [
        (#"""
        {"__meta__": {"about": "HTTPie session file", "help": "https://httpie.io/docs#sessions", "httpie": "3.2.2"},
         "auth": {"raw_auth": "ada:pw", "type": "basic"},
         "cookies": [{"domain": "", "expires": null, "name": "sid", "path": "/", "secure": false, "value": "abc"}],
         "headers": [{"name": "X-Team", "value": "core"}]}
        """#, #"""
        {
            "__meta__": {
                "about": "HTTPie session file",
                "help": "https://httpie.io/docs#sessions",
                "httpie": "3.2.2"
            },
            "auth": {
                "raw_auth": "ada:pw",
                "type": "basic"
            },
            "cookies": [
                {
                    "domain": "",
                    "expires": null,
                    "name": "sid",
                    "path": "/",
                    "secure": false,
                    "value": "abc"
                },
                {
                    "domain": "127.0.0.1",
                    "expires": null,
                    "name": "n",
                    "path": "/",
                    "secure": false,
                    "value": "1"
                }
            ],
            "headers": [
                {
                    "name": "X-Team",
                    "value": "core"
                }
            ]
        }

        """#),
        (#"""
        {"__meta__": {"about": "HTTPie session file", "help": "https://httpie.org/doc#sessions", "httpie": "2.6.0"},
         "auth": {"password": "pw", "type": "basic", "username": "ada"},
         "cookies": {"sid": {"expires": null, "path": "/", "secure": false, "value": "abc"}},
         "headers": {"X-Team": "core", "User-Agent": null}}
        """#, #"""
        {
            "__meta__": {
                "about": "HTTPie session file",
                "help": "https://httpie.org/doc#sessions",
                "httpie": "2.6.0"
            },
            "auth": {
                "password": "pw",
                "type": "basic",
                "username": "ada"
            },
            "cookies": {
                "sid": {
                    "expires": null,
                    "path": "/",
                    "secure": false,
                    "value": "abc"
                },
                "n": {
                    "expires": null,
                    "path": "/",
                    "secure": false,
                    "value": "1"
                }
            },
            "headers": {
                "X-Team": "core",
                "User-Agent": null
            }
        }

        """#),
        // Written by hand, as HTTPie's documentation and tests write one: no "__meta__".
        (#"""
        {"auth": {"raw_auth": "ada:pw", "type": "basic"}, "cookies": {"sid": {"value": "abc"}}, "headers": {"X-Team": "core"}}
        """#, #"""
        {
            "auth": {
                "raw_auth": "ada:pw",
                "type": "basic"
            },
            "cookies": {
                "sid": {
                    "expires": null,
                    "path": "/",
                    "secure": false,
                    "value": "abc"
                },
                "n": {
                    "expires": null,
                    "path": "/",
                    "secure": false,
                    "value": "1"
                }
            },
            "headers": {
                "X-Team": "core"
            }
        }

        """#),
    ])
    func httpieSessionsAreReadAndWrittenBackInTheirLayout(text: String, written: String) throws {
        let path = config + "/httpie.json"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let used = run(["--session=\(path)", server.url("/echo")])
        #expect(used.status == 0, "\(used.err)")
        #expect(used.err.isEmpty)
        let request = try #require(server.requests.last)
        #expect(request.header("Cookie") == "sid=abc")
        #expect(request.header("X-Team") == "core")
        #expect(request.header("Authorization") == "Basic YWRhOnB3")
        #expect(request.header("User-Agent") == "af/0.1.0")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text, "nothing changed: the file is left as it was")
        let changed = run(["--session=\(path)", server.url("/cookies/set?n=1")])
        #expect(changed.status == 0)
        #expect(changed.err.isEmpty)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == written)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        // Read back, by af as by HTTPie: both cookies go.
        #expect(run(["--session=\(path)", server.url("/echo")]).status == 0)
        #expect(server.requests.last?.header("Cookie") == "sid=abc; n=1")
    }

    /// What a run changes in HTTPie's file: a header given replaces the session's of that name
    /// and a new one is added, credentials given replace the session's (a bearer token as
    /// `raw_auth`, the only way HTTPie reads one), and a cookie the server expires is taken
    /// out. `--session-read-only` writes nothing.
    @Test func anHTTPieSessionKeepsWhatARunChanges() throws {
        let path = config + "/httpie-changes.json"
        let text = #"""
        {"__meta__": {"httpie": "3.2.2"}, "auth": {"password": null, "type": null, "username": null},
         "cookies": [{"domain": "127.0.0.1", "expires": null, "name": "sid", "path": "/", "secure": false, "value": "abc"},
                     {"domain": "127.0.0.1", "expires": null, "name": "keep", "path": "/", "secure": false, "value": "1"},
                     {"name": "bare", "value": "2"}],
         "headers": [{"name": "X-Team", "value": "core"}]}
        """#
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        server.route("/logout") { _, _ in .response(status: 200, headers: [("Set-Cookie", "sid=; Path=/; Max-Age=0")]) }
        let readOnly = run(["--session-read-only=\(path)", "-A", "bearer", "-a", "t0k", server.url("/logout"), "X-Team:ops"])
        #expect(readOnly.status == 0, "\(readOnly.err)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        let result = run(["--session=\(path)", "-A", "bearer", "-a", "t0k", server.url("/logout"), "X-Team:ops", "X-Trace:1", "Content-Type:text/plain"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.isEmpty)
        let document = try #require(JSONHelpers.object(try String(contentsOfFile: path, encoding: .utf8)))
        #expect(document["auth"] as? [String: String] == ["raw_auth": "t0k", "type": "bearer"])
        #expect(document["headers"] as? [[String: String]] == [["name": "X-Team", "value": "ops"], ["name": "X-Trace", "value": "1"]])
        let cookies = try #require(document["cookies"] as? [[String: Any]])
        #expect(cookies.compactMap { $0["name"] as? String } == ["keep", "bare"])
        // A cookie without a domain, which HTTPie reads as unbound, is written back unbound.
        #expect(cookies.last?["domain"] as? String == "")
        #expect((document["__meta__"] as? [String: String]) == ["httpie": "3.2.2"])
        #expect(run(["--session=\(path)", server.url("/echo")]).status == 0)
        let request = try #require(server.requests.last)
        #expect(request.header("Authorization") == "Bearer t0k")
        #expect(request.header("Cookie") == "keep=1; bare=2")
        #expect(request.header("X-Trace") == "1")
    }

    /// HTTPie's older layout keeps cookies by name alone, and whoever reads it sends them to
    /// the session's host: a cookie another host set on a redirect stays out of it (it would
    /// have gone to this host on the next run), where 3.2's list keeps it with its domain.
    @Test(arguments: [(#"{"cookies": {"sid": {"value": "abc"}}}"#, false), (#"{"cookies": [{"name": "sid", "value": "abc", "domain": ""}]}"#, true)])
    func anotherHostsCookieStaysOutOfAnOlderHTTPieSession(text: String, kept: Bool) throws {
        let other = try TestServer()
        let path = config + "/httpie-hosts.json"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        server.route("/away") { _, _ in .response(status: 302, headers: [("Location", "http://localhost:\(other.port)/cookies/set?elsewhere=1")]) }
        let result = run(["--follow", "--session=\(path)", server.url("/away")])
        #expect(result.status == 0, "\(result.err)")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains("\"elsewhere\"") == kept, "\(written)")
        #expect(written.contains("\"sid\""))
        #expect(run(["--session=\(path)", server.url("/echo")]).status == 0)
        #expect(server.requests.last?.header("Cookie") == "sid=abc")
    }

    /// An HTTPie user's `--session=NAME` started an empty af session without a word, their
    /// HTTPie session of that name unused: the first run says where it is and how to read it.
    @Test func aNewNamedSessionPointsToHTTPiesOfThatName() throws {
        let httpie = try TemporaryDirectory.make(prefix: "af-httpie-config")
        let directory = "\(httpie)/sessions/127.0.0.1_\(server.port)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try #"{"__meta__": {"httpie": "3.2.2"}, "headers": [{"name": "X-Team", "value": "core"}]}"#.write(toFile: directory + "/work.json", atomically: false, encoding: .utf8)
        let environment = ["AF_CONFIG_DIR": config, "HTTPIE_CONFIG_DIR": httpie]
        let first = InProcessAF.run(["--session=work", server.url("/echo")], environment: environment)
        #expect(first.status == 0)
        #expect(first.err == "af: the session 'work' for 127.0.0.1 is new to af, which keeps its own; HTTPie's of that name is read with --session=\(directory)/work.json\n")
        #expect(server.requests.last?.header("X-Team") == nil)
        // Once af has its own, or for a name HTTPie has none of, nothing is said.
        #expect(InProcessAF.run(["--session=work", server.url("/echo")], environment: environment).err.isEmpty)
        #expect(InProcessAF.run(["--session=other", server.url("/echo")], environment: environment).err.isEmpty)
        #expect(InProcessAF.run(["--session=\(directory)/work.json", server.url("/echo")], environment: environment).err.isEmpty)
        #expect(server.requests.last?.header("X-Team") == "core")
    }

    @Test func httpieSessionsCarryBearerTokensAndRefuseOtherSchemes() throws {
        let path = config + "/httpie-bearer.json"
        try #"{"__meta__": {"httpie": "3.2.2"}, "auth": {"type": "bearer", "raw_auth": "t0k"}, "cookies": [], "headers": []}"#.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(run(["--session=\(path)", server.url("/echo")]).status == 0)
        #expect(server.requests.last?.header("Authorization") == "Bearer t0k")
        try #"{"__meta__": {"httpie": "3.2.2"}, "auth": {"type": "ntlm", "raw_auth": "a:b"}}"#.write(toFile: path, atomically: false, encoding: .utf8)
        let refused = run(["--session=\(path)", server.url("/echo")])
        #expect(refused.status == 64)
        #expect(refused.err == "af: error: the session file '\(path)' uses the auth type 'ntlm', which af does not speak (basic, digest, bearer); fix it or remove it (af never replaces it)\n")
    }
}

@Suite struct NetworkTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    @Test func explicitAndEnvironmentProxies() {
        let explicit = InProcessAF.run(["--proxy=http:\(server.baseURL)", "http://example.test/echo"])
        #expect(explicit.status == 0, "\(explicit.err)")
        #expect(server.requests.last?.target == "http://example.test/echo")
        #expect(server.requests.last?.header("Host") == "example.test")
        let environment = InProcessAF.run(["http://example.test/echo"], environment: ["http_proxy": server.baseURL])
        #expect(environment.status == 0)
        #expect(server.requests.last?.target == "http://example.test/echo")
        let all = InProcessAF.run(["--proxy=all:\(server.baseURL)", "http://other.test/echo"])
        #expect(all.status == 0)
        #expect(server.requests.last?.target == "http://other.test/echo")
        let bypass = InProcessAF.run(["--resolve=skip.test:\(server.port):127.0.0.1", "http://skip.test:\(server.port)/echo"],
                            environment: ["http_proxy": "http://127.0.0.1:9", "no_proxy": "skip.test"])
        #expect(bypass.status == 0, "\(bypass.err)")
        #expect(server.requests.last?.target == "/echo")
        // A name in Unicode in no_proxy matches the host in its ASCII form, which is what af
        // hands libcurl: it went to the proxy (here, to nothing listening on port 9).
        let unicode = InProcessAF.run(["--resolve=bücher.test:\(server.port):127.0.0.1", "http://bücher.test:\(server.port)/echo?u"],
                                      environment: ["http_proxy": "http://127.0.0.1:9", "no_proxy": "other.test, .Bücher.test"])
        #expect(unicode.status == 0, "\(unicode.err)")
        #expect(server.requests.last?.target == "/echo?u")
    }

    /// A proxy variable naming no proxy libcurl can use is refused before anything is sent,
    /// as --proxy with that value is, naming the variable (without its password): libcurl
    /// said it could not resolve the proxy host (':3128'), or that the proxy refused the
    /// connection (a scheme it does not speak).
    @Test func aProxyVariableNamingNoUsableProxyIsRefused() {
        let empty = InProcessAF.run(["http://example.test/echo"], environment: ["http_proxy": ":3128"])
        #expect(empty.status == 64)
        #expect(empty.err == "af: error: the proxy that http_proxy names, ':3128', cannot be used: no proxy host; correct http_proxy or unset it\n")
        let scheme = InProcessAF.run(["https://example.test/echo"], environment: ["HTTPS_PROXY": "ftp://user:secret@proxy.test:21"])
        #expect(scheme.status == 64)
        #expect(scheme.err == "af: error: the proxy that HTTPS_PROXY names, 'ftp://user:***@proxy.test:21', cannot be used: 'ftp' is no proxy scheme af can use: "
                + "http, https, socks4, socks4a, socks5 or socks5h; correct HTTPS_PROXY or unset it\n")
        let spaced = InProcessAF.run(["http://example.test/echo"], environment: ["http_proxy": "http://user:se cret@proxy.test:3128"])
        #expect(spaced.status == 64)
        #expect(spaced.err == "af: error: the proxy that http_proxy names, 'http://user:***@proxy.test:3128', cannot be used: "
                + "a URL holds no spaces or control characters; percent-encode them (a space is %20); correct http_proxy or unset it\n")
        // Not when an option names the proxy, nor when no_proxy may send the request around it.
        let named = InProcessAF.run(["--proxy=http:\(server.baseURL)", "http://example.test/echo"], environment: ["http_proxy": ":3128"])
        #expect(named.status == 0, "\(named.err)")
        let bypassed = InProcessAF.run([server.url("/echo")], environment: ["http_proxy": ":3128", "no_proxy": "127.0.0.1"])
        #expect(bypassed.status == 0, "\(bypassed.err)")
        #expect(server.requests.count == 2)
    }

    /// A proxy that will not open a tunnel (407, 403) is named with its answer, not called a
    /// reset connection, and the request is not sent again (it was retried as a reset).
    @Test func aProxyRefusingTheTunnelIsNamedWithItsAnswer() throws {
        let proxy = try TestServer()
        proxy.route("*") { request, _ in
            request.target.hasPrefix("forbidden.test")
                ? .response(status: 403, headers: [], body: Array("no\n".utf8))
                : .response(status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"p\"")], body: Array("who?\n".utf8))
        }
        let refused = InProcessAF.run(["--proxy=https:\(proxy.baseURL)", "--retry=2", "https://example.test/x"])
        #expect(refused.status == 1)
        #expect(refused.err == "af: error: the proxy 127.0.0.1:\(proxy.port) did not open a tunnel to example.test:443: it answered 407; give the proxy's credentials in its URL (--proxy=https:http://USER:PASSWORD@HOST:PORT), which af sends with Basic authentication (a proxy that asks for another scheme refuses them)\n")
        #expect(proxy.requests.map(\.method) == ["CONNECT"], "not retried")
        // Credentials it refused, from --proxy's URL or a variable's, are not asked for again.
        let withCredentials = "http://ada:wrong@127.0.0.1:\(proxy.port)"
        let refusedCredentials = "af: error: the proxy 127.0.0.1:\(proxy.port) did not open a tunnel to example.test:443: it answered 407; it refused the credentials in the proxy's URL, which af sends with Basic authentication (a proxy that asks for another scheme refuses them)\n"
        #expect(InProcessAF.run(["--proxy=https:\(withCredentials)", "https://example.test/x"]).err == refusedCredentials)
        #expect(InProcessAF.run(["https://example.test/x"], environment: ["https_proxy": withCredentials]).err
                == refusedCredentials.dropLast() + " (the proxy is set by https_proxy in the environment; unset it, or list the host in no_proxy, to connect directly)\n")
        // A plain http request gets the proxy's 407 as its answer; with --check-status the
        // error says the same.
        let plain = InProcessAF.run(["--check-status", "--proxy=http:\(proxy.baseURL)", "http://example.test/x"])
        #expect(plain.status == 4)
        #expect(plain.err == "af: error: server answered 407 Status; give the proxy's credentials in its URL (--proxy=http:http://USER:PASSWORD@HOST:PORT), which af sends with Basic authentication (a proxy that asks for another scheme refuses them)\n")
        let forbidden = InProcessAF.run(["--proxy=https:\(proxy.baseURL)", "https://forbidden.test/x"])
        #expect(forbidden.status == 1)
        #expect(forbidden.err == "af: error: the proxy 127.0.0.1:\(proxy.port) did not open a tunnel to forbidden.test:443: it answered 403; check --proxy and the proxy's rules\n")
    }

    /// A proxy that is down is named (without its credentials), not the host behind it: the
    /// message had blamed example.test for refusing the connection.
    @Test func aProxyThatIsDownIsNamed() throws {
        let port = try TestServer.closedPort()
        let result = InProcessAF.run(["--proxy=http:http://ada:secret@127.0.0.1:\(port)", "http://example.test/x"])
        #expect(result.status == 1)
        #expect(result.err == "af: error: cannot connect to the proxy http://127.0.0.1:\(port) for example.test:80: connection refused; is the proxy running?\n")
        let direct = InProcessAF.run(["http://127.0.0.1:\(port)/x"])
        #expect(direct.err == "af: error: connection refused by 127.0.0.1:\(port); is the server running?\n")
    }

    /// `-6` (or `-4`) with a host name that refused or could not be found says the other
    /// family's addresses were not tried: `localhost` is 127.0.0.1 here, and `-6` made a
    /// server that was running look down.
    @Test func anAddressFamilyOptionIsNamedWhenTheHostIsNotReached() throws {
        let port = try TestServer.closedPort()
        let refused = InProcessAF.run(["-6", "http://localhost:\(port)/x"])
        #expect(refused.status == 1)
        #expect(refused.err.hasPrefix("af: error: connection refused by localhost:\(port); is the server running? (with -6 af tried only the IPv6 addresses of localhost; try without -6)\n")
                || refused.err.hasPrefix("af: error: cannot resolve host 'localhost'; check the name and your network (with -6 af tried only the IPv6 addresses of localhost; try without -6)\n"),
                "\(refused.err)")
        // The host named is the one not reached: here a redirect's, which has only an IPv6 address.
        let redirected = InProcessAF.run(["-4", "-F", "--resolve=v6only.test:\(port):::1", server.url("/redirect-to?url=http://v6only.test:\(port)/x")])
        #expect(redirected.err == "af: error: cannot resolve host 'v6only.test'; check the name and your network (with -4 af tried only the IPv4 addresses of v6only.test; try without -4)\n")
        // An address is no host name: its family is what it is.
        #expect(InProcessAF.run(["-4", "http://127.0.0.1:\(port)/x"]).err == "af: error: connection refused by 127.0.0.1:\(port); is the server running?\n")
        #expect(InProcessAF.run(["http://localhost:\(port)/x"]).err == "af: error: connection refused by localhost:\(port); is the server running?\n")
    }

    /// A proxy no option named came from the environment, where a user may not know one is
    /// set (a shell profile, a CI runner): the error names the variable and the ways around it.
    @Test func aProxyFromTheEnvironmentNamesItsVariable() throws {
        let port = try TestServer.closedPort()
        let advice = "; unset it, or list the host in no_proxy, to connect directly)\n"
        let plain = InProcessAF.run(["http://example.test/x"], environment: ["http_proxy": "http://127.0.0.1:\(port)"])
        #expect(plain.status == 1)
        #expect(plain.err == "af: error: cannot connect to the proxy http://127.0.0.1:\(port) for example.test:80: connection refused; is the proxy running? "
                + "(the proxy is set by http_proxy in the environment" + advice)
        let secure = InProcessAF.run(["https://example.test/x"], environment: ["HTTPS_PROXY": "http://127.0.0.1:\(port)"])
        #expect(secure.err.hasSuffix("(the proxy is set by HTTPS_PROXY in the environment" + advice), "\(secure.err)")
        let any = InProcessAF.run(["http://example.test/x"], environment: ["all_proxy": "http://127.0.0.1:\(port)"])
        #expect(any.err.hasSuffix("(the proxy is set by all_proxy in the environment" + advice), "\(any.err)")
        // Named by --proxy, it needs no such word; a --proxy for another scheme did not name it.
        let named = InProcessAF.run(["--proxy=http:http://127.0.0.1:\(port)", "http://example.test/x"], environment: ["http_proxy": "http://127.0.0.1:\(port)"])
        #expect(named.err == "af: error: cannot connect to the proxy http://127.0.0.1:\(port) for example.test:80: connection refused; is the proxy running?\n")
        let other = InProcessAF.run(["--proxy=https:http://127.0.0.1:\(port)", "http://example.test/x"], environment: ["http_proxy": "http://127.0.0.1:\(port)"])
        #expect(other.err.hasSuffix("(the proxy is set by http_proxy in the environment" + advice), "\(other.err)")
        // A no_proxy list that leaves the host to the proxy: it was the server that was said
        // to refuse ("connection refused by example.test:80") whatever the list held.
        let listed = InProcessAF.run(["http://example.test/x"], environment: ["http_proxy": "http://127.0.0.1:\(port)", "no_proxy": "localhost,.internal"])
        #expect(listed.err == plain.err, "\(listed.err)")
        // An address range matches no host name: the proxy was refused.
        let range = InProcessAF.run(["http://example.test/x"], environment: ["http_proxy": "http://127.0.0.1:\(port)", "no_proxy": "10.0.0.0/8"])
        #expect(range.err == plain.err, "\(range.err)")
        // An address is compared as an address (libcurl 7.86 and later): a range holding it
        // sends the request around the proxy, and a name's ending does not ('.0.0.1' was
        // taken to hold 127.0.0.1, and the proxy's refusal was told as the server's).
        let readsRanges = ProxySettings.noProxyList("127.0.0.0/8", sendsAround: "127.0.0.1") == true
        let direct = InProcessAF.run(["http://127.0.0.1:\(port)/x"], environment: ["http_proxy": "http://127.0.0.1:\(port)", "no_proxy": "127.0.0.0/8"])
        if readsRanges {
            #expect(direct.err == "af: error: connection refused by 127.0.0.1:\(port); is the server running?\n", "\(direct.err)")
        }
        // A '*' beside other text is no wildcard: the way around the proxy is said.
        let star = InProcessAF.run(["http://example.test/x"], environment: ["http_proxy": "http://127.0.0.1:\(port)", "no_proxy": "localhost, *"])
        #expect(star.err.hasSuffix("(the proxy is set by http_proxy in the environment; unset it, or set no_proxy to '*' alone (a '*' with anything else beside it matches no host), to connect directly)\n"), "\(star.err)")
        let ending = InProcessAF.run(["http://127.0.0.1:\(port)/x"], environment: ["http_proxy": "http://127.0.0.1:\(port)", "no_proxy": ".0.0.1"])
        if readsRanges {
            #expect(ending.err.hasPrefix("af: error: cannot connect to the proxy http://127.0.0.1:\(port) for 127.0.0.1:\(port): connection refused; is the proxy running?"), "\(ending.err)")
        } else {
            // Older libcurl reads an address as a name: '.0.0.1' holds 127.0.0.1.
            #expect(ending.err == "af: error: connection refused by 127.0.0.1:\(port); is the server running?\n", "\(ending.err)")
        }
    }

    /// `no_proxy` read as libcurl reads it, or nil where af cannot tell.
    @Test(arguments: [
        (nil, "example.test", false), ("", "example.test", false), ("*", "example.test", true),
        ("localhost,.internal", "example.test", false), ("example.test", "example.test", true), ("EXAMPLE.test", "example.test", true),
        (".test", "example.test", true), ("test", "example.test", true), ("ample.test", "example.test", false),
        (" a , example.test ", "example.test", true), ("10.0.0.0/8,example.test", "example.test", true), ("10.0.0.0/8", "example.test", false),
        ("example.test:8080", "example.test", false), ("bücher.example", "xn--bcher-kva.example", true), ("127.0.0.1", "127.0.0.1", true),
        (" * ", "example.test", false), ("a,*", "example.test", false), ("a example.test", "example.test", true),
    ] as [(String?, String, Bool?)])
    func noProxyListsAreReadAsLibcurlReadsThem(list: String?, host: String, bypasses: Bool?) {
        #expect(ProxySettings.noProxyList(list, sendsAround: host) == bypasses)
    }

    /// -4 with an IPv6 address, or -6 with an IPv4 one, can only fail to connect, which read
    /// as a server that is down; it is a usage error, and nothing is sent.
    @Test func anAddressOfTheOtherFamilyIsAUsageError() {
        let v4 = InProcessAF.run(["-6", server.url("/get")])
        #expect(v4.status == 64)
        #expect(v4.err == "af: error: -6 (--ipv6) cannot reach the IPv4 address 127.0.0.1; drop -6\n")
        let v6 = InProcessAF.run(["-4", "http://[::1]:\(server.port)/get"])
        #expect(v6.status == 64)
        #expect(v6.err == "af: error: -4 (--ipv4) cannot reach the IPv6 address [::1]; drop -4\n")
        #expect(server.requests.isEmpty)
        #expect(InProcessAF.run(["-4", server.url("/get")]).status == 0)
        // Through a proxy (here from the environment) the proxy connects, not af.
        let proxied = InProcessAF.run(["-6", "http://127.0.0.1:1/x"], environment: ["http_proxy": "http://[::1]:1"])
        #expect(proxied.status != 64, "\(proxied.err)")
        #expect(!proxied.err.contains("cannot reach the IPv4 address"))
    }

    @Test func resolvePinsANameToAnAddress() {
        let result = InProcessAF.run(["--resolve=api.example.invalid:\(server.port):127.0.0.1", "http://api.example.invalid:\(server.port)/echo"])
        #expect(result.status == 0)
        #expect(server.requests.last?.header("Host") == "api.example.invalid:\(server.port)")
    }

    @Test func unixSocket() throws {
        let path = try TemporaryDirectory.make(prefix: "af-sock") + "/s"
        let local = try TestServer(unixSocketPath: path)
        let result = InProcessAF.run(["--unix-socket=\(path)", "http://localhost/echo"])
        #expect(result.status == 0, "\(result.err)")
        #expect(local.requests.last?.target == "/echo")
        let missing = InProcessAF.run(["--unix-socket=/nonexistent.sock", "http://localhost/echo"])
        #expect(missing.status == 1)
        #expect(missing.err.hasPrefix("af: error: cannot connect to unix socket '/nonexistent.sock'"))
        // A path that is no socket: connect(2) says "refused", which blamed a server.
        let file = try TemporaryDirectory.write("not a socket", named: "plain.txt", in: try TemporaryDirectory.make(prefix: "af-sock"))
        let plain = InProcessAF.run(["--unix-socket=\(file)", "http://localhost/echo"])
        #expect(plain.status == 1)
        #expect(plain.err == "af: error: cannot connect to unix socket '\(file)': it is not a socket\n")
        // A socket address holds 107 bytes of path: libcurl said "cannot resolve host 'localhost'".
        let long = "/tmp/" + String(repeating: "s", count: 103)
        let tooLong = InProcessAF.run(["--unix-socket=\(long)", "http://localhost/echo"])
        #expect(tooLong.status == 64)
        #expect(tooLong.err == "af: error: invalid value '\(long)' for --unix-socket: the path is 108 bytes long, and a socket address holds at most 107; "
                + "give a shorter path to the socket (a symbolic link to it works)\n")
    }

    @Test func httpVersions() {
        #expect(InProcessAF.run(["--http-version=1.0", server.url("/echo")]).status == 0)
        #expect(server.requests.last?.httpVersion == "HTTP/1.0")
        #expect(InProcessAF.run(["--http-version=1.1", server.url("/echo")]).status == 0)
        #expect(server.requests.last?.httpVersion == "HTTP/1.1")
    }

    @Test(.enabled(if: ExternalServer.available("nghttpd"), "nghttpd (Debian's nghttp2-server) is not installed; ./install.sh --dev installs it"))
    func cleartextHTTP2WithPriorKnowledge() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-h2c")
        try "plain h2\n".write(toFile: directory + "/x.txt", atomically: false, encoding: .utf8)
        let h2c = try ExternalServer(nghttpdServing: directory, key: nil, certificate: nil)
        let result = InProcessAF.run(["--http-version=2-prior-knowledge", "-m", "http://127.0.0.1:\(h2c.port)/x.txt"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("plain h2\n"))
        #expect(result.out.contains("200 OK  HTTP/2  127.0.0.1"))
        // A second request of the run (a retry here; a redirect hop the same) failed with
        // libcurl 7.88 reusing the connection: "Error in the HTTP2 framing layer", exit 1.
        let retried = InProcessAF.run(["--http-version=2-prior-knowledge", "--retry=1", "--retry-on=404", "--retry-delay=0", "-h", "http://127.0.0.1:\(h2c.port)/missing"])
        #expect(retried.status == 0, "\(retried.err)")
        #expect(retried.out.hasPrefix("HTTP/2 404 Not Found\n"))
        #expect(retried.err.hasPrefix("af: retrying in 0s (attempt 2 of 2): server answered 404 Not Found\n"))
    }

    /// HTTP/2 forced on a server that speaks only HTTP/1.1 (the test server closes on the
    /// preface) says what to try, beside the bare reset.
    @Test func priorKnowledgeToAnHTTP1ServerSaysWhatToTry() {
        let result = InProcessAF.run(["--http-version=2-prior-knowledge", server.url("/echo")])
        #expect(result.status == 1)
        #expect(result.err.hasSuffix("; the server may not speak HTTP/2 without TLS: try without --http-version=2-prior-knowledge\n"), "\(result.err)")
        #expect(!InProcessAF.run(["--http-version=2", "http://127.0.0.1:1/"]).err.contains("prior-knowledge"))
    }

    @Test func addressFamiliesAndInterfaces() {
        #expect(InProcessAF.run(["-4", "http://localhost:\(server.port)/echo"]).status == 0)
        let six = InProcessAF.run(["-6", "http://localhost:\(server.port)/echo"])
        #expect(six.status == 1, "the test server listens on IPv4 only")
        #expect(InProcessAF.run(["--interface=lo", server.url("/echo")]).status == 0)
        // A name that is no interface here, and an address that is not this machine's: the
        // line names the value and says what --interface takes; nothing reaches the server.
        let advice = "; --interface takes the name of one of this machine's network interfaces or one of its addresses ('ip -brief address' lists them)\n"
        let before = server.hits("/echo")
        let bad = InProcessAF.run(["--interface=nosuch0", server.url("/echo")])
        #expect(bad.status == 1)
        #expect(bad.err == "af: error: cannot send from 'nosuch0': Couldn't bind to 'nosuch0'" + advice, "\(bad.err)")
        let foreign = InProcessAF.run(["--interface=192.0.2.7", server.url("/echo")])
        #expect(foreign.status == 1)
        #expect(foreign.err.hasPrefix("af: error: cannot send from '192.0.2.7': "), "\(foreign.err)")
        #expect(foreign.err.hasSuffix(advice), "\(foreign.err)")
        #expect(server.hits("/echo") == before)
    }
}

@Suite struct ConfigTests {
    let server: TestServer
    let config: String

    init() throws {
        server = try TestServer()
        config = try TemporaryDirectory.make(prefix: "af-config")
    }

    private func write(_ text: String) throws {
        try text.write(toFile: config + "/config.json", atomically: false, encoding: .utf8)
    }

    @Test func defaultsApplyAndNoFormsUndoThem() throws {
        try write(#"{"default_options": ["--follow", "--check-status", "--print=h"]}"#)
        let environment = ["AF_CONFIG_DIR": config]
        let followed = InProcessAF.run([server.url("/redirect/1")], environment: environment)
        #expect(followed.status == 0)
        #expect(followed.out.hasPrefix("HTTP/1.1 200 OK\n"))
        let undone = InProcessAF.run(["--no-follow", server.url("/redirect/1")], environment: environment)
        #expect(undone.status == 3)
        let unchecked = InProcessAF.run(["--no-follow", "--no-check-status", server.url("/redirect/1")], environment: environment)
        #expect(unchecked.status == 0)
        #expect(unchecked.out.hasPrefix("HTTP/1.1 302 Found\n"))
    }

    /// `--no-NAME` for an option with a value puts it back to its default, as HTTPie's does:
    /// a proxy, a session or an output format from the config file, or a batch-wide option on
    /// one line.
    @Test func noFormsResetOptionsWithValues() throws {
        let sessions = try TemporaryDirectory.make(prefix: "af-sessions")
        try write(#"{"default_options": ["--proxy=all:http://127.0.0.1:1", "--session=\#(sessions)/s.json", "--print=h", "--format-options=json.indent:1"]}"#)
        let environment = ["AF_CONFIG_DIR": config]
        let proxied = InProcessAF.run([server.url("/get")], environment: environment)
        #expect(proxied.status == 1, "the config's proxy is used: \(proxied.err)")
        let count = server.requests.count
        let direct = InProcessAF.run(["--no-proxy", "--no-session", "--no-print", "--no-format-options", "--pretty=format", server.url("/json")], environment: environment)
        #expect(direct.status == 0, "\(direct.err)")
        #expect(server.requests.count == count + 1)
        #expect(direct.out.hasPrefix("{\n    \"name\": \"af\",\n"), "the body, as into any pipe, indented by the default four")
        #expect(!FileManager.default.fileExists(atPath: sessions + "/s.json"), "no session was written")
        #expect(InProcessAF.run(["--no-proxy=x", server.url("/get")], environment: environment).err == "af: error: option '--no-proxy' takes no value\n")
        #expect(InProcessAF.run(["--no-verify", server.url("/get")]).err.contains("--verify=no (or -k) skips certificate verification"))

        // A batch-wide --auth, taken off one line.
        let lines = config + "/lines.txt"
        try "\(server.url("/echo?n=1"))\n--no-auth \(server.url("/echo?n=2"))\n".write(toFile: lines, atomically: false, encoding: .utf8)
        let batch = InProcessAF.run(["batch", "-q", "--auth=ada:pw", lines], environment: ["AF_CONFIG_DIR": config + "/none"])
        #expect(batch.status == 0, "\(batch.err)")
        let echoed = server.requests.suffix(2).sorted { $0.target < $1.target }
        #expect(echoed.map { $0.header("Authorization") } == ["Basic YWRhOnB3", nil])
    }

    /// A byte order mark that an editor put at the start of af's own files is not part of
    /// them: a config file (it was "not valid JSON: unexpected byte 0xef") and a netrc (the
    /// mark made the first word something other than "machine").
    @Test func aByteOrderMarkIsTheEditorsNotTheFiles() throws {
        try write("\u{FEFF}" + #"{"default_options": ["--check-status"]}"#)
        let checked = InProcessAF.run([server.url("/status/404")], environment: ["AF_CONFIG_DIR": config])
        #expect(checked.status == 4, "\(checked.err)")
        let netrc = config + "/netrc-bom"
        try "\u{FEFF}machine 127.0.0.1 login ada password pw\n".write(toFile: netrc, atomically: false, encoding: .utf8)
        let result = InProcessAF.run([server.url("/echo")], environment: ["NETRC": netrc, "AF_CONFIG_DIR": config + "/none"])
        #expect(result.status == 0, "\(result.err)")
        #expect(server.requests.last?.header("Authorization") == "Basic YWRhOnB3")
    }

    @Test func xdgConfigHome() throws {
        let xdg = try TemporaryDirectory.make(prefix: "af-xdg")
        try FileManager.default.createDirectory(atPath: xdg + "/af", withIntermediateDirectories: true)
        try #"{"default_options": ["--check-status"]}"#.write(toFile: xdg + "/af/config.json", atomically: false, encoding: .utf8)
        let result = InProcessAF.run([server.url("/status/404")], environment: ["XDG_CONFIG_HOME": xdg], unsetting: ["AF_CONFIG_DIR"])
        #expect(result.status == 4, "\(result.err)")
        // A relative XDG_CONFIG_HOME is ignored, as the XDG specification says: the config
        // comes from HOME's .config instead.
        let home = try TemporaryDirectory.make(prefix: "af-home")
        try FileManager.default.createDirectory(atPath: home + "/.config/af", withIntermediateDirectories: true)
        try #"{"default_options": ["--check-status"]}"#.write(toFile: home + "/.config/af/config.json", atomically: false, encoding: .utf8)
        let relative = InProcessAF.run([server.url("/status/404")], environment: ["XDG_CONFIG_HOME": "relative/dir", "HOME": home], unsetting: ["AF_CONFIG_DIR"])
        #expect(relative.status == 4, "\(relative.err)")
    }

    /// HTTPie's config file, copied as it is: its `__meta__` key is HTTPie's own, and ignored.
    @Test func anHTTPieConfigFileWorksAsItIs() throws {
        try write(#"{"__meta__": {"about": "HTTPie configuration file", "help": "https://httpie.io/docs#config", "httpie": "3.2.4"}, "default_options": ["--check-status"]}"#)
        let result = InProcessAF.run([server.url("/status/404")], environment: ["AF_CONFIG_DIR": config])
        #expect(result.status == 4, "\(result.err)")
    }

    @Test(arguments: [
        (#"{"default_options": ["--retyr=2"]}"#, "unknown option '--retyr' in the config file '"),
        (#"{"default_options": "--follow"}"#, "\"default_options\" in '"),
        (#"{"defaults": []}"#, "has an unknown key \"defaults\""),
        ("{\"default_options\": [\"--follow\"", "is not valid JSON"),
        (#"{"default_options": ["http://x"]}"#, "may only hold options"),
    ])
    func malformedConfigNamesTheFile(text: String, message: String) throws {
        try write(text)
        let result = InProcessAF.run([server.url("/echo")], environment: ["AF_CONFIG_DIR": config])
        #expect(result.status == 64)
        #expect(result.err.contains(message), "\(result.err)")
        #expect(result.err.contains(config + "/config.json"))
        #expect(server.requests.isEmpty)
    }
}
