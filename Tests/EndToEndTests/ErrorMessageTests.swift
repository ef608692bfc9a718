import AFTestSupport
import Foundation
import Testing

/// Every `af: error:` line names what failed and says what to do: one line, the exit
/// status of SPEC §5, the failing thing named, and a fix.
@Suite struct ErrorMessageTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var arguments: @Sendable (TestServer, String) throws -> [String]
        var status: Int32
        /// Text naming what failed.
        var what: String
        /// Text saying what to do.
        var fix: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unknown option", arguments: { s, _ in ["--retyr=3", s.url("/")] }, status: 64, what: "'--retyr'", fix: "did you mean '--retry'?"),
        Case(name: "bad value", arguments: { s, _ in ["--timeout=soon", s.url("/")] }, status: 64, what: "'soon' for --timeout", fix: "expected a number of seconds"),
        Case(name: "missing value", arguments: { _, _ in ["--timeout"] }, status: 64, what: "'--timeout' needs a value", fix: "--timeout=SECONDS"),
        Case(name: "bad choice", arguments: { s, _ in ["--pretty=loud", s.url("/")] }, status: 64, what: "'loud' for --pretty", fix: "choose all, colors, format, none"),
        Case(name: "no URL", arguments: { _, _ in ["-v"] }, status: 64, what: "no URL given", fix: "usage: af [OPTIONS]"),
        Case(name: "empty URL", arguments: { _, _ in ["get", "", "a==1"] }, status: 64, what: "the URL argument is empty", fix: "give the URL to request"),
        Case(name: "method with a hyphen", arguments: { s, _ in ["M-SEARCH", s.url("/")] }, status: 64, what: "is a URL after the URL 'M-SEARCH'",
             fix: "a METHOD is letters only, so 'M-SEARCH' was read as the URL (af cannot send that method)"),
        Case(name: "method with a hyphen, URL without a scheme", arguments: { _, _ in ["M-SEARCH", "example.org/x", "a==1"] }, status: 64, what: "'example.org/x' is not a request item",
             fix: "a METHOD is letters only, so 'M-SEARCH' was read as the URL (af cannot send that method)"),
        Case(name: "not an item", arguments: { s, _ in [s.url("/"), "oops"] }, status: 64, what: "'oops' is not a request item", fix: "expected Name:Value"),
        Case(name: "two items joined by a no-break space", arguments: { s, _ in [s.url("/"), "name=Ada\u{A0}age:=36"] }, status: 64,
             what: "'name=…' has a no-break space (U+00A0) before 'age:=…'", fix: "type a plain space between words"),
        Case(name: "bad JSON", arguments: { s, _ in [s.url("/"), "n:=[1,"] }, status: 64, what: "invalid JSON in 'n:=[1,'", fix: "at line 1, column 4"),
        Case(name: "conflicting items", arguments: { s, _ in [s.url("/"), "a=1", "a[b]=2"] }, status: 64, what: "'a=1' and 'a[b]=2'", fix: "keep one, or give them different names"),
        Case(name: "unreadable file", arguments: { s, _ in [s.url("/"), "a=@/no/such/file"] }, status: 66, what: "'/no/such/file' (from 'a=@/no/such/file')", fix: "check the path"),
        Case(name: "header injection", arguments: { s, d in
            try "x\r\nEvil: 1".write(toFile: d + "/h", atomically: false, encoding: .utf8)
            return [s.url("/"), "X-A:@\(d)/h"]
        }, status: 64, what: "header 'X-A'", fix: "header values must be one line"),
        Case(name: "two bodies", arguments: { s, _ in [s.url("/"), "--raw=x", "a=1"] }, status: 64, what: "both items 'a=1' and --raw", fix: "give only one"),
        Case(name: "no password", arguments: { s, _ in ["-a", "ada", s.url("/")] }, status: 64, what: "-a gives a user without a password", fix: "give -a USER:PASSWORD (USER: for an empty password, or -A bearer -a TOKEN for a token)"),
        Case(name: "refused", arguments: { _, _ in ["http://127.0.0.1:9/"] }, status: 1, what: "connection refused by 127.0.0.1:9", fix: "is the server running?"),
        Case(name: "timeout", arguments: { s, _ in ["--timeout=0.2", s.url("/delay/2")] }, status: 2, what: "no complete response from 127.0.0.1", fix: "raise --timeout"),
        Case(name: "redirect not followed", arguments: { s, _ in ["--check-status", s.url("/redirect/1")] }, status: 3, what: "server answered 302 Found", fix: "add --follow"),
        Case(name: "no redirect allowed", arguments: { s, _ in ["-F", "--max-redirects=0", s.url("/redirect/1")] }, status: 6,
             what: "the server redirected, and --max-redirects=0 follows none", fix: "leave out --follow to get the redirect itself"),
        Case(name: "too many redirects", arguments: { s, _ in ["-F", "--max-redirects=1", s.url("/redirect/3")] }, status: 6, what: "more than 1 redirect;", fix: "raise --max-redirects"),
        Case(name: "too many headers", arguments: { s, _ in [s.url("/headers?count=120")] }, status: 1, what: "more than 100 header lines", fix: "raise --max-headers"),
        Case(name: "too large", arguments: { s, _ in ["--max-filesize=10", s.url("/bytes/100")] }, status: 1, what: "exceeds --max-filesize", fix: "raise it"),
        Case(name: "output exists", arguments: { s, d in
            try "x".write(toFile: d + "/exists", atomically: false, encoding: .utf8)
            return ["-o", d + "/exists", s.url("/bytes/10")]
        }, status: 9, what: "'\u{0}exists' exists", fix: "use --overwrite"),
        Case(name: "no output directory", arguments: { s, d in ["-d", "--output-dir", d + "/missing", s.url("/bytes/10")] }, status: 9, what: "directory '\u{0}missing' does not exist", fix: "add --create-dirs"),
        Case(name: "checksum mismatch", arguments: { s, d in ["-d", "--output-dir", d, "--checksum=md5:" + String(repeating: "0", count: 32), s.url("/bytes/10")] }, status: 9, what: "md5 of the download is", fix: "check the checksum"),
        Case(name: "checksum syntax", arguments: { s, _ in ["-d", "--checksum=sha256", s.url("/bytes/10")] }, status: 64, what: "invalid value 'sha256' for --checksum", fix: "expected ALGO:HEX"),
        Case(name: "broken download", arguments: { s, d in ["-o", d + "/cut.bin", s.url("/drop")] }, status: 1, what: "closed the connection before the body was complete", fix: "run the same command with -c to resume"),
        Case(name: "bad pin", arguments: { s, _ in ["--pin=sha1//abc", s.url("/")] }, status: 64, what: "invalid pin 'sha1//abc'", fix: "see 'af pin HOST'"),
        Case(name: "session corrupt", arguments: { s, d in
            try "[".write(toFile: d + "/s.json", atomically: false, encoding: .utf8)
            return ["--session=\(d)/s.json", s.url("/")]
        }, status: 64, what: "the session file '\u{0}s.json'", fix: "fix it or remove it"),
        Case(name: "auth command", arguments: { s, _ in ["--auth-cmd=exit 5", s.url("/")] }, status: 1, what: "--auth-cmd 'exit 5' exited with status 5", fix: "run it yourself"),
        // A lone word is the URL (SPEC §1): `af get` asks for the host "get", which does not
        // resolve (a single label, in no hosts file).
        Case(name: "method without URL", arguments: { _, _ in ["get", "--timeout=20"] }, status: 1, what: "cannot resolve host 'get'", fix: "give the URL after the method (af get URL)"),
        // libcurl's "Could not resolve proxy: NAME" was shown after af's own words for it.
        Case(name: "scheme as the method", arguments: { _, _ in ["https", "example.org/x", "a==1"] }, status: 64,
             what: "'https example.org/x' reads as the method HTTPS and the URL 'example.org/x'", fix: "did you mean 'https://example.org/x'?"),
        // A command's name where the method goes: af typed twice, or curl's habit.
        Case(name: "af twice", arguments: { s, _ in ["af", "get", s.url("/get")] }, status: 64,
             what: "'af' reads as the method AF, and af is a command, not a method", fix: "did you mean 'af get http://127.0.0.1:"),
        Case(name: "curl as the method", arguments: { _, _ in ["curl", "example.org/x"] }, status: 64,
             what: "'curl' reads as the method CURL", fix: "did you mean 'af example.org/x'? (a method CURL is sent when written in capitals: af CURL URL)"),
        Case(name: "http before a method", arguments: { _, _ in ["http", "GET", "example.org/x"] }, status: 64,
             what: "'http GET' reads as the method HTTP and the URL 'GET'", fix: "did you mean 'af GET http://example.org/x'?"),
        Case(name: "--resolve for another port", arguments: { s, _ in ["--resolve=example.test:80:127.0.0.1", "--timeout=20", "http://example.test:\(s.port)/get"] }, status: 1,
             what: "cannot resolve host 'example.test'; the address given for it is for port 80, and this request is for port ", fix: ":ADDRESS gives one for this port too"),
        Case(name: "unresolvable proxy", arguments: { s, _ in ["--proxy=http:http://nosuchproxy:3128", "--timeout=20", s.url("/")] }, status: 1,
             what: "cannot resolve the proxy host 'nosuchproxy'", fix: "check the proxy's name and your network"),
        // A password that begins with digits and holds a '#' (written as it is) ends the URL's
        // host part there: the URL parses, with the user for the host and the digits for a
        // port. The failure names that, without the password.
        Case(name: "password cut short", arguments: { s, _ in ["http://bob:12#zz9@127.0.0.1:\(s.port)/", "--timeout=20"] }, status: 1,
             what: "cannot resolve host 'bob'; check the name and your network; if the URL is 'http://bob:***@127.0.0.1:",
             fix: "/' with a password that holds a '#', that '#' ended its host part and 'bob' was taken for the host: write it %23 (or give the credentials with -a USER:PASSWORD)"),
        Case(name: "help as a word", arguments: { _, _ in ["help", "--timeout=20"] }, status: 1, what: "cannot resolve host 'help'", fix: "af --help shows how to use af"),
        // The scheme's colon left out: curl and HTTPie read "http" as the host and look it up;
        // af refuses it before anything is sent (a search domain could make it a real host).
        Case(name: "scheme without its colon", arguments: { s, _ in ["get", "http//127.0.0.1:\(s.port)/get", "--timeout=20"] }, status: 64,
             what: "invalid URL 'http//127.0.0.1:", fix: "it names the host 'http'; did you mean 'http://127.0.0.1:"),
        Case(name: "scheme with two colons", arguments: { _, _ in ["https:://127.0.0.1:9/x"] }, status: 64, what: "invalid URL", fix: "did you mean 'https://127.0.0.1:9/x'?"),
        // The slashes left out: the host "http" with the port "127.0.0.1:9", which is no port.
        Case(name: "scheme without slashes", arguments: { _, _ in ["http:127.0.0.1:9/x"] }, status: 64, what: "invalid URL", fix: "did you mean 'http://127.0.0.1:9/x'?"),
        Case(name: "scheme with backslashes", arguments: { _, _ in [#"http:\\127.0.0.1:9/x"#] }, status: 64, what: "invalid URL", fix: "did you mean 'http://127.0.0.1:9/x'?"),
        Case(name: "interface", arguments: { s, _ in ["--interface=nosuch0", s.url("/")] }, status: 1,
             what: "cannot send from 'nosuch0'", fix: "--interface takes the name of one of this machine's network interfaces"),
        // The parser saw the percent-encoded host and quoted that URL before the typed one.
        Case(name: "host with a space", arguments: { _, _ in ["http://a b.example:8080/x"] }, status: 64,
             what: "invalid URL 'http://a b.example:8080/x': the host 'a b.example' has a space in it", fix: "a host name has none"),
        Case(name: "scheme misspelt", arguments: { _, _ in ["htps://127.0.0.1:9/x"] }, status: 64, what: "invalid URL 'htps://127.0.0.1:9/x'", fix: "did you mean 'https://127.0.0.1:9/x'?"),
    ]

    /// A URL the parser refuses is quoted once; the typed argument is named again only when
    /// a shorthand made the URL read differ from it.
    @Test func aRefusedURLIsQuotedOnce() {
        let typed = AF.run(["http://127.0.0.1:99999/x"])
        #expect(typed.status == 64)
        #expect(typed.err == "af: error: invalid URL 'http://127.0.0.1:99999/x': port number was not a decimal number between 0 and 65535; check the URL\n")
        let shorthand = AF.run([":99999/x"])
        #expect(shorthand.status == 64)
        #expect(shorthand.err == "af: error: invalid URL 'http://localhost:99999/x': port number was not a decimal number between 0 and 65535; check the URL ':99999/x'\n")
    }

    /// `http:///get` names the host `get` (libcurl and WHATWG both pass over a third slash),
    /// but no lone word was read as the URL: the advice for `af get` alone is not given.
    @Test func aMethodNamedHostInATypedURLGetsNoLoneWordAdvice() {
        let typed = AF.run(["get", "http:///get", "--timeout=20"])
        #expect(typed.status == 1)
        #expect(typed.err == "af: error: cannot resolve host 'get'; check the name and your network\n")
        let bare = AF.run(["http:///get", "--timeout=20"])
        #expect(bare.err == "af: error: cannot resolve host 'get'; check the name and your network\n")
    }

    /// An IPv6 link-local address means something only on one interface, which the URL
    /// names as its zone. The kernel refuses one without a zone, or with one that is no
    /// interface here, as an invalid argument, which af passed on as all it said.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/net/if_inet6")))
    func aLinkLocalAddressWithoutItsInterfaceIsExplained() {
        let bare = AF.run(["--connect-timeout=5", "http://[fe80::1]:9/x"])
        #expect(bare.status == 1)
        #expect(bare.err == "af: error: cannot connect to [fe80::1]:9: a link-local address needs the interface it is on, as its zone: http://[fe80::1%25eth0]/ (see 'ip -6 address')\n")
        let unknown = AF.run(["--connect-timeout=5", "http://[fe80::1%25nosuch0]:9/x"])
        #expect(unknown.status == 1)
        #expect(unknown.err == "af: error: cannot connect to [fe80::1]:9: there is no network interface 'nosuch0' for the zone of the link-local address (see 'ip -6 address')\n")
    }

    /// What an error line quotes — a server's reason phrase, an argument — may hold control
    /// characters: they are written out, so an escape sequence from a server cannot recolour
    /// or clear the user's terminal, and a line break cannot split the one line.
    @Test func controlCharactersInAnErrorLineAreShownNotObeyed() throws {
        let server = try TestServer()
        server.route("/evil") { _, _ in .response(status: 500, reason: "Oops\u{1B}[2J\u{7}\u{9B}31m", body: Array("x".utf8)) }
        let evil = AF.run(["--check-status", "-q", server.url("/evil")])
        #expect(evil.status == 5)
        #expect(evil.err == "af: error: server answered 500 Oops\\x1B[2J\\x07\\x9B31m\n")
        let item = AF.run([server.url("/"), "oops\r\nEvil"])
        #expect(item.status == 64)
        #expect(item.err.hasPrefix("af: error: 'oops\\r\\nEvil' is not a request item"), "\(item.err)")
        #expect(item.err.split(separator: "\n").count == 1)
    }

    /// http:// to a port that speaks TLS (or only HTTP/2) gets bytes that are no HTTP/1
    /// response; the error says which two mistakes those usually are.
    @Test func aPortThatDoesNotSpeakHTTP1IsExplained() throws {
        // What a cleartext HTTP/2-only server (a gRPC server, nghttpd --no-tls) sends back to
        // an HTTP/1.1 request: its SETTINGS frame, then GOAWAY.
        let server = try TestServer()
        let settings: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 0, 0]
        let goaway: [UInt8] = [0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        server.route("/h2only") { _, _ in .raw(settings + goaway, close: true) }
        let result = AF.run([server.url("/h2only")])
        #expect(result.status == 1)
        #expect(result.err.hasPrefix("af: error: malformed response from 127.0.0.1:\(server.port): it did not answer in HTTP"), "\(result.err)")
        #expect(result.err.hasSuffix("; if that port serves HTTPS, use https://; a server that speaks only HTTP/2 needs --http-version=2-prior-knowledge\n"), "\(result.err)")
    }

    /// A status line with a code HTTP has no room for is an HTTP answer all the same: the
    /// error says what is wrong with it, not that the port may speak TLS or HTTP/2.
    @Test func aStatusCodeOutOfRangeIsNamed() throws {
        let server = try TestServer()
        for (index, status) in ["000 Zero", "1000 Big", "099 Low"].enumerated() {
            server.route("/status-\(index)") { _, _ in .raw(Array("HTTP/1.1 \(status)\r\nContent-Length: 2\r\n\r\nok".utf8), close: true) }
            let result = AF.run([server.url("/status-\(index)")])
            #expect(result.status == 1, "\(status)")
            #expect(result.err == "af: error: malformed response from 127.0.0.1:\(server.port): its status line has no valid status code (three digits, 100 to 999)\n", "\(status)")
        }
    }

    /// Through a proxy, a broken or missing answer is the proxy's: the error names it with
    /// the host it was asked for, and gives no advice about the host's port (af named the
    /// host as the peer that closed the connection or sent bytes that were no HTTP).
    @Test func aProxyThatAnswersBadlyIsNamed() throws {
        let garbage = try GreetingPort(greeting: Array("\u{16}\u{3}\u{1}nonsense\r\n\r\n".utf8))
        let silent = try GreetingPort(greeting: [])
        let huge = try GreetingPort(greeting: Array("HTTP/1.1 200 Connection established\r\nX-Pad: \(String(repeating: "a", count: 400_000))\r\n\r\n".utf8))
        let cases: [(GreetingPort, String, String)] = [
            (garbage, "http://example.test/x",
             "af: error: malformed response from the proxy http://127.0.0.1:\(garbage.port) for example.test:80: it did not answer in HTTP (Received HTTP/0.9 when not allowed)\n"),
            (silent, "http://example.test/x",
             "af: error: the proxy http://127.0.0.1:\(silent.port) for example.test:80 closed the connection without answering\n"),
            (silent, "https://example.test/x",
             "af: error: the proxy 127.0.0.1:\(silent.port) closed the connection before opening a tunnel to example.test:443\n"),
            // A CONNECT answer past libcurl's limit read as the host's connection reset.
            (huge, "https://example.test/x",
             "af: error: the proxy 127.0.0.1:\(huge.port) answered the CONNECT for example.test:443 with a head too large for libcurl (its limit for a CONNECT response)\n"),
        ]
        for (proxy, url, message) in cases {
            let result = AF.run(["--proxy=all:http://127.0.0.1:\(proxy.port)", url], timeout: 20)
            #expect(result.status == 1, "\(url): \(result.err)")
            #expect(result.err == message)
        }
    }

    /// A tunnel the proxy opened whose host never answers the TLS handshake: the handshake
    /// timed out, not the connection to the proxy (which answered the CONNECT at once).
    @Test func aHandshakeThatStallsThroughATunnelIsNamed() throws {
        let tunnel = try GreetingPort(greeting: Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8), readsRequest: false, holding: 4)
        let result = AF.run(["--proxy=https:http://127.0.0.1:\(tunnel.port)", "--connect-timeout=1", "https://example.test/"], timeout: 20)
        #expect(result.status == 2, "\(result.err)")
        #expect(result.err == "af: error: the TLS handshake with example.test:443 through the proxy http://127.0.0.1:\(tunnel.port) did not finish within 1s; "
            + "the server took the connection but did not answer in TLS: if that port serves plain HTTP, use http://; otherwise raise --connect-timeout\n")
    }

    /// A server that closes or resets the connection in the middle of the TLS handshake, with
    /// no alert (one restarting does): nothing was sent, so it is a reset, exit 1, retried
    /// by --retry, not a TLS refusal that is never retried (exit 7). Closed after reading
    /// the hello (the end of the stream) and closed with it unread (a reset).
    @Test func aConnectionClosedUnderTheHandshakeIsAResetToRetry() throws {
        for port in [try GreetingPort(greeting: []), try GreetingPort(greeting: [], readsRequest: false, holding: 0)] {
            let result = AF.run(["--retry=1", "--retry-delay=0", "https://127.0.0.1:\(port.port)/"], timeout: 20)
            #expect(result.status == 1, "\(result.err)")
            let lines = result.err.split(separator: "\n").map(String.init)
            #expect(lines.count == 2, "\(result.err)")
            #expect(lines.first?.hasPrefix("af: retrying in 0s (attempt 2 of 2): the connection to 127.0.0.1:\(port.port) closed during the TLS handshake (") == true, "\(result.err)")
            #expect(lines.last?.hasPrefix("af: error: the connection to 127.0.0.1:\(port.port) closed during the TLS handshake (") == true, "\(result.err)")
            #expect(lines.last?.hasSuffix("); if it does so every time, the server may refuse what af offers: check --ssl, --ciphers, --cert and the server's TLS setup (after 2 attempts)") == true, "\(result.err)")
        }
    }

    /// https:// to a port that speaks plain HTTP: the handshake's reply is no TLS record, and
    /// the error says so rather than pointing at --ssl and --ciphers.
    @Test func aPlainPortAskedForTLSIsExplained() throws {
        let plain = try GreetingPort(greeting: Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        let result = AF.run(["https://127.0.0.1:\(plain.port)/"], timeout: 20)
        #expect(result.status == 7, "\(result.err)")
        #expect(result.err.hasPrefix("af: error: TLS with 127.0.0.1:\(plain.port) failed: "), "\(result.err)")
        #expect(result.err.hasSuffix("; the server did not answer in TLS: if that port serves plain HTTP, use http://\n"), "\(result.err)")
        let pin = AF.run(["pin", "127.0.0.1:\(plain.port)"], timeout: 20)
        #expect(pin.status == 7, "\(pin.err)")
        #expect(pin.err.hasSuffix("; the server did not answer in TLS: if that port serves plain HTTP, it has no certificate to pin\n"), "\(pin.err)")
    }

    /// A server that answers an upload before reading it, as if it would keep the connection,
    /// then closes on the unread bytes: the answer is shown, and the error says what happened
    /// ("broke during the response body" sent the user looking at a body that was whole).
    @Test func anUploadAnsweredEarlyThenCutOffIsNamedAsSuch() throws {
        let early = try GreetingPort(greeting: Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), readsRequest: false)
        let body = try TemporaryDirectory.write(String(repeating: "x", count: 20_000_000), named: "big.txt", in: try TemporaryDirectory.make(prefix: "af-early"))
        let result = AF.run(["put", "http://127.0.0.1:\(early.port)/", "@\(body)"], timeout: 20)
        #expect(result.status == 1)
        #expect(result.out == "ok")
        #expect(result.err.hasPrefix("af: error: 127.0.0.1:\(early.port) answered 200 before taking the whole request body, then closed the connection ("), "\(result.err)")
        #expect(result.err.contains(" bytes of it sent): "), "\(result.err)")
    }

    /// af's other lines on standard error (a saved file, a warning) quote file names too, so
    /// they show control characters the same way and each stays one line.
    @Test func controlCharactersInANoticeAreShownNotObeyed() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-notice")
        let name = "a\u{1B}[2J\nb.bin"
        let saved = AF.run(["-d", "-o", directory + "/" + name, server.url("/bytes/10")])
        #expect(saved.status == 0, "\(saved.err)")
        let savedLines = saved.err.split(separator: "\n").filter { $0.hasPrefix("af: ") }
        #expect(savedLines.count == 1, "\(saved.err)")
        #expect(savedLines.first?.hasPrefix("af: saved '\(directory)/a\\x1B[2J\\nb.bin' (10 B) in ") == true, "\(saved.err)")
        #expect(!saved.err.contains("\u{1B}"), "\(saved.err)")
        #expect(FileManager.default.fileExists(atPath: directory + "/" + name))
        let again = AF.run(["-d", "-c", "-o", directory + "/" + name, server.url("/bytes/10")])
        #expect(again.err.split(separator: "\n").filter { $0.hasPrefix("af: ") }.count == 1, "\(again.err)")
        #expect(!again.err.contains("\u{1B}"), "\(again.err)")
    }

    /// An `--auth-cmd` that cannot be started says why (it said only "cannot run"): here
    /// the system refuses af another process (`ulimit -u`). Nothing is sent.
    @Test(.enabled(if: AF.canRunLimited, "needs root, to run af as nobody under a limit of its own"))
    func anAuthCommandThatCannotStartSaysWhy() throws {
        let server = try TestServer()
        let result = AF.runLimited(["--auth-cmd=echo token", "-A", "bearer", server.url("/bearer")], processes: 1)
        #expect(result.status == 1)
        #expect(result.out.isEmpty)
        #expect(result.err == "af: error: cannot run --auth-cmd 'echo token' with /bin/sh: resource temporarily unavailable\n")
        #expect(server.requests.isEmpty)
    }

    @Test(arguments: cases)
    func errorLineNamesWhatFailedAndTheFix(_ testCase: Case) throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-err")
        let result = AF.run(try testCase.arguments(server, directory))
        #expect(result.status == testCase.status, "\(result.err)")
        let lines = result.err.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.hasPrefix("af: error: ") }
        #expect(lines.count == 1, "\(result.err)")
        let line = String(lines.first ?? "")
        #expect(line.contains(testCase.what.replacingOccurrences(of: "\u{0}", with: directory + "/")), "\(line)")
        #expect(line.contains(testCase.fix), "\(line)")
    }
}
