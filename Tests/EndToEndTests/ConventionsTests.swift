import AFTestSupport
import Foundation
import Testing

/// Issue 12: the conventions that need the real binary (a terminal, a working directory).
@Suite struct ConventionsTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-conventions")
    }

    /// Standard input that is a file the shell has read into (a `read` before af, a `while
    /// read` loop) is sent from where its reading stands, and af takes it as read, as curl's
    /// `-d @-` and HTTPie do. af opened the file anew by its /proc path, at its start: it
    /// sent lines the shell had already read, and left the loop to send them all again.
    @Test func standardInputIsReadFromWhereItsReadingStands() throws {
        let lines = try TemporaryDirectory.write("\(server.url("/get?n=1"))\n\(server.url("/get?n=2"))\n\(server.url("/get?n=3"))\n", named: "urls.txt", in: directory)
        let binary = AF.binary
        let loop = try AF.shell("while read url; do '\(binary)' \"$url\" > /dev/null || exit 1; done < '\(lines)'")
        #expect(loop.status == 0, "\(loop.errors)")
        // The first line's request took the rest as its body; the loop found nothing left.
        #expect(server.requests.map(\.target) == ["/get?n=1"])
        #expect(server.requests.first?.method == "POST")
        #expect(server.requests.first?.bodyText == "\(server.url("/get?n=2"))\n\(server.url("/get?n=3"))\n")
        // ... which is said, with the way out: the loop's other lines were lost in silence.
        let first = server.url("/get?n=1").utf8.count + 1
        let resolved = URL(fileURLWithPath: lines).resolvingSymlinksInPath().path
        #expect(loop.errors == "af: standard input is '\(resolved)', already read to byte \(first) (by a `while read` loop?): its other \(2 * first) bytes are sent as the body; -I (--ignore-stdin) leaves them unread\n")
        let ignoring = try AF.shell("while read url; do '\(binary)' -I \"$url\" > /dev/null || exit 1; done < '\(lines)'")
        #expect(ignoring.status == 0 && ignoring.errors.isEmpty, "\(ignoring.errors)")
        #expect(server.requests.suffix(3).map(\.target) == ["/get?n=1", "/get?n=2", "/get?n=3"])
        let item = try AF.shell("{ read first; '\(binary)' post '\(server.url("/post"))' rest=@- > /dev/null; } < '\(lines)'")
        #expect(item.status == 0 && item.errors.isEmpty, "\(item.errors)")
        #expect(server.requests.last?.bodyText == #"{"rest": "\#(server.url("/get?n=2"))\n\#(server.url("/get?n=3"))\n"}"#)
        let read = try AF.shell("{ cat > /dev/null; '\(binary)' put '\(server.url("/put"))' > /dev/null; } < '\(lines)'")
        #expect(read.status == 0, "\(read.errors)")
        #expect(server.requests.last?.method == "PUT")
        #expect(server.requests.last?.body.isEmpty == true, "nothing was left to send")
        // A file not read into is sent whole, as before.
        let whole = try AF.shell("'\(binary)' post '\(server.url("/post"))' < '\(lines)' > /dev/null")
        #expect(whole.status == 0 && whole.errors.isEmpty, "\(whole.errors)")
        #expect(server.requests.last?.body.count == 3 * server.url("/get?n=1").utf8.count + 3)
    }

    /// `-o /dev/stdout` (as scripts give it to curl) is standard output as it stands, as
    /// `-o -` is: with standard output on a regular file, af refused it as an existing file.
    @Test func dashOToDevStdoutOrStderrWritesToThatStream() throws {
        let output = directory + "/stdout.txt"
        let binary = AF.binary
        for name in ["/dev/stdout", "/dev/fd/1"] {
            let (status, errors) = try AF.shell("{ echo kept; '\(binary)' -o \(name) '\(server.url("/get"))'; } > '\(output)'")
            #expect(status == 0, "\(errors)")
            let text = try String(contentsOfFile: output, encoding: .utf8)
            #expect(text.hasPrefix("kept\n{\"method\": \"GET\", \"target\": \"/get\""), "\(name): \(text.prefix(80))")
        }
        // Standard error's names likewise: onto a log file, af refused it as existing (and
        // curl truncates the log, since it opens the name anew).
        let log = directory + "/stderr.txt"
        for name in ["/dev/stderr", "/dev/fd/2"] {
            let (status, errors) = try AF.shell("{ echo kept >&2; '\(binary)' -o \(name) '\(server.url("/get"))'; } 2> '\(log)'")
            #expect(status == 0, "\(errors)")
            let text = try String(contentsOfFile: log, encoding: .utf8)
            #expect(text.hasPrefix("kept\n{\"method\": \"GET\", \"target\": \"/get\""), "\(name): \(text.prefix(80))")
        }
        let batch = try TemporaryDirectory.write("\(server.url("/get")) -o /dev/stderr\n", named: "lines.txt", in: directory)
        let mixed = AF.run(["batch", batch])
        #expect(mixed.status == 64)
        #expect(mixed.err == "af: error: \(batch):1: -o /dev/stderr would mix the bodies of the lines in flight on standard error; give -o a file name\n")
    }

    /// `-o /dev/fd/3` with descriptor 3 opened by the shell (`3>FILE`, `3>>FILE`, `exec
    /// 3>log`) is that descriptor as it stands, as `/dev/stdout` is standard output: af
    /// refused a regular file there as existing, and with --overwrite tried to write
    /// '/dev/fd/3.part'. A descriptor af was not given, or one open only for reading, is
    /// refused before anything is sent.
    @Test func dashOToAnInheritedDescriptorWritesToIt() throws {
        let output = directory + "/fd3.txt"
        let binary = AF.binary
        for (name, redirect) in [("/dev/fd/3", "3>"), ("/proc/self/fd/3", "3>>")] {
            let (status, errors) = try AF.shell("echo kept > '\(output)'; '\(binary)' -o \(name) '\(server.url("/bytes/5"))' \(redirect) '\(output)'")
            #expect(status == 0, "\(errors)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == Data((redirect == "3>" ? [] : Array("kept\n".utf8)) + TestData.bytes(count: 5)), "\(name)")
        }
        let sent = server.requests.count
        let (closed, closedErrors) = try AF.shell("'\(binary)' -o /dev/fd/7 '\(server.url("/get"))'")
        #expect(closed == 9)
        #expect(closedErrors == "af: error: '/dev/fd/7' names descriptor 7, which af was not started with; open it for af in the shell (7>FILE) or give -o a file name\n")
        let (reading, readingErrors) = try AF.shell("'\(binary)' -o /dev/fd/3 '\(server.url("/get"))' 3< '\(output)'")
        #expect(reading == 9)
        #expect(readingErrors == "af: error: '/dev/fd/3' names descriptor 3, which is open only for reading; open it for writing (3>FILE) or give -o a file name\n")
        let (input, inputErrors) = try AF.shell("'\(binary)' -o /dev/fd/0 '\(server.url("/get"))' < '\(output)'")
        #expect(input == 9)
        #expect(inputErrors == "af: error: '/dev/fd/0' names descriptor 0, which is open only for reading; open it for writing (0>FILE) or give -o a file name\n")
        #expect(server.requests.count == sent, "nothing is sent")
    }

    /// A file's name after the URL looks like a host name (`data.json`); when the file is
    /// there, it is an item that forgot its `@`, not a URL typed after items.
    @Test func aFileNameAfterTheURLIsNotTakenForAURL() throws {
        _ = try TemporaryDirectory.write("{}", named: "data.json", in: directory)
        let result = AF.run(["--offline", "X-A:1", "data.json"], directory: directory)
        #expect(result.status == 64)
        #expect(result.err == "af: error: 'data.json' is not a request item: expected Name:Value, name==value, name=value, name:=json, name@file or @file\n")
        let missing = AF.run(["--offline", "X-A:1", "site.json"], directory: directory)
        #expect(missing.err == "af: error: the URL 'site.json' came after request items: af reads [METHOD] URL [REQUEST_ITEM ...] in that order, as in af site.json X-A:1\n")
    }

    @Test func downloadsFollowRedirectsAndKeepTheAskedName() throws {
        let downloads = try TemporaryDirectory.make(prefix: "af-dl")
        let result = AF.run(["-d", server.url("/redirect-to?url=/bytes/10")], directory: downloads)
        #expect(result.status == 0, "\(result.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads) == ["redirect-to"])
        let unfollowed = AF.run(["-d", "--no-follow", server.url("/redirect-to?url=/bytes/10")], directory: downloads)
        #expect(unfollowed.status == 3)
    }

    /// A host name in Unicode is sent in its ASCII form, as curl and HTTPie send it: left to
    /// libcurl, whose conversion depends on a locale af never sets, every such URL failed
    /// ("URL using bad/illegal format"). The printed head shows the name that was sent.
    @Test func unicodeHostNamesAreSentInTheirASCIIForm() {
        let result = AF.run(["-p", "H", "--resolve", "xn--bcher-kva.example:\(server.port):127.0.0.1", "http://Bücher.example:\(server.port)/get"])
        #expect(result.status == 0, "\(result.err)")
        #expect(server.requests(to: "/get").last?.header("Host") == "xn--bcher-kva.example:\(server.port)")
        #expect(result.out.contains("Host: xn--bcher-kva.example:\(server.port)\n"), "\(result.out)")
        // --resolve may name the host either way.
        let unicode = AF.run(["--resolve", "bücher.example:\(server.port):127.0.0.1", "http://xn--bcher-kva.example:\(server.port)/get"])
        #expect(unicode.status == 0, "\(unicode.err)")
    }

    /// A redirect whose `Location` has bytes that are not UTF-8 is followed to those bytes,
    /// percent-encoded, as curl follows it (they were U+FFFD, and the request went to
    /// `/caf%EF%BF%BD`); other such header values print as ISO-8859-1 (`café`).
    @Test func headerBytesThatAreNotUTF8AreFollowedAndShown() {
        server.route("/latin") { _, _ in
            .raw(Array("HTTP/1.1 302 Found\r\nLocation: /caf".utf8) + [0xE9] + Array(" x\r\nX-Latin: caf".utf8) + [0xE9]
                + Array("\r\nContent-Length: 0\r\n\r\n".utf8), close: true)
        }
        let result = AF.run(["-F", "-p", "h", "--all", server.url("/latin")])
        #expect(result.status == 0, "\(result.err)")
        #expect(server.requests.last?.rawHead.hasPrefix("GET /caf%E9%20x HTTP/1.1") == true, "\(server.requests.last?.rawHead ?? "")")
        #expect(result.out.contains("X-Latin: caf\u{E9}\n"), "\(result.out)")
        #expect(result.out.contains("Location: /caf%E9 x\n"), "\(result.out)")
    }

    /// An IPv6 address comes from the URL parser with its brackets; the printed Host header
    /// once added a second pair (`[[::1]]:8282`).
    @Test func anIPv6HostIsBracketedOnceInThePrintedHead() {
        let result = AF.run(["--offline", "--pretty=none", "http://[::1]:8282/x"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("\nHost: [::1]:8282\n"), "\(result.out)")
    }

    /// `@-` on a terminal would wait for typing; af never waits on a terminal in a script.
    @Test func atDashOnATerminalIsRefused() {
        let (output, status) = PTYRunner.run(["post", server.url("/echo"), "@-"])
        #expect(status == 64)
        #expect(output.contains("'@-' reads the body from standard input, which is a terminal here"), "\(output)")
    }

    @Test func outputFileOnATerminalPrintsNothing() throws {
        let file = directory + "/out.bin"
        let (output, status) = PTYRunner.run(["-o", file, server.url("/bytes/100")])
        #expect(status == 0)
        #expect(!output.contains("HTTP/1.1"))
        #expect(FileManager.default.contents(atPath: file) == Data(TestData.bytes(count: 100)))
    }

    @Test func unicodeEscapesAreDecodedOnATerminalOnly() {
        server.route("/escapes") { _, _ in .json(#"{"s": "caf\u00e9 \ud83d\ude00 \u0022 \u005c \u001b \u202e \ud800"}"#) }
        let (output, status) = PTYRunner.run(["--pretty=format", server.url("/escapes")])
        #expect(status == 0)
        #expect(output.contains(#""café 😀 \u0022 \u005c \u001b \u202e \ud800""#), "\(output)")
        let piped = AF.run(["--pretty=format", server.url("/escapes")])
        #expect(piped.out.contains(#"caf\u00e9 \ud83d\ude00"#))
    }

    /// A body that does not end its last line ends it on a terminal, as text does: JSON
    /// that is not JSON (its last bytes were not shown at all) and HTML coloured as it came
    /// (the prompt followed it on its line). Formatted XML ends its own.
    @Test(arguments: [
        ("application/json", "nul", "nul\r\n"),
        ("text/html", "<b>x</b>", "\u{1B}[34m<b>\u{1B}[0mx\u{1B}[34m</b>\u{1B}[0m\r\n"),
        ("text/html", "<b>x</b>\n", "\u{1B}[34m<b>\u{1B}[0mx\u{1B}[34m</b>\u{1B}[0m\r\n"),
        ("application/xml", "<a><b/></a>", "\u{1B}[34m<a>\u{1B}[0m\r\n  \u{1B}[34m<b/>\u{1B}[0m\r\n\u{1B}[34m</a>\u{1B}[0m\r\n"),
    ])
    func aBodyEndsItsLastLineOnATerminal(type: String, body: String, shown: String) {
        server.route("/unended") { _, _ in .response(status: 200, headers: [("Content-Type", type)], body: Array(body.utf8)) }
        let (output, status) = PTYRunner.run(["-b", server.url("/unended")])
        #expect(status == 0)
        #expect(output == shown, "\(output.debugDescription)")
    }

    /// DEL and C1 controls are valid unescaped in a JSON string; a terminal would obey them
    /// (U+009B is a control sequence introducer), so a terminal sees them escaped. U+00A0,
    /// whose UTF-8 starts like a C1 control's, stays; a pipe gets the exact bytes.
    @Test func rawControlCharactersInJSONStringsAreEscapedOnATerminal() {
        let document = "{\"s\u{9B}k\": \"a\u{9B}31mb\u{7F}c\u{85}d\u{A0}é\"}"
        server.route("/raw-controls") { _, _ in .json(document) }
        let (output, status) = PTYRunner.run(["--pretty=format", server.url("/raw-controls")])
        #expect(status == 0)
        #expect(output.contains(#""s\u009bk": "a\u009b31mb\u007fc\u0085d"# + "\u{A0}é\""), "\(output)")
        #expect(!output.contains("\u{9B}") && !output.contains("\u{7F}") && !output.contains("\u{85}"))
        let piped = AF.run(["--pretty=none", server.url("/raw-controls")])
        #expect(piped.out == document)
    }
}
