@testable import AFCommandLine
import AFEngine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// Issue 17: inputs from hostile users and servers end with a clear error and the right exit
/// code; these run in-process (so under the sanitizers). The cases that need a process
/// (hang guards, working directories, signals, FIFOs) are in EndToEndTests.
@Suite struct HardeningTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-hardening")
    }

    private func write(_ name: String, _ contents: String) throws -> String {
        try TemporaryDirectory.write(contents, named: name, in: directory)
    }

    /// A `Content-Encoding` naming no compression libcurl decodes (servers send `utf-8` or
    /// `binary`) lost the body: libcurl failed at its first byte, "Unrecognized content
    /// encoding type" (exit 1). Where libcurl lets af switch decoding off (7.x), the body now
    /// comes as it was sent, as HTTPie and browsers show it; `x-gzip` is gzip.
    @Test func bodiesLabelledWithCodingsAfCannotDecodeComeAsSent() throws {
        for coding in ["utf-8", "binary", "gzip, utf-8"] {
            let url = server.url("/hostile/not-an-encoding?coding=\(coding.replacingOccurrences(of: " ", with: "%20"))")
            let result = InProcessAF.run([url])
            guard AFEngine.CurlRuntime.decodingSwitchIsLive else {
                expectOneError(result, status: 1, containing: "Unrecognized content encoding")
                continue
            }
            #expect(result.status == 0, "\(coding): \(result.err)")
            #expect(result.out == "{\"a\":1}", "\(coding)")
            #expect(result.err.isEmpty, "\(coding)")
            #expect(InProcessAF.run(["--pretty=format", url]).out == "{\n    \"a\": 1\n}\n", "\(coding)")
        }
        let labelled = InProcessAF.run([server.url("/gzip?as=x-gzip")])
        #expect(labelled.status == 0, "\(labelled.err)")
        #expect(labelled.out == BuiltinRoutes.sampleJSON)
    }

    /// Two `Content-Encoding: gzip` headers are two layers, as libcurl stacks them: af took
    /// the first header alone for the whole coding, decoded one layer and printed gzip bytes.
    /// Seconds and factors are decimal: `0x10` was read as hexadecimal (a 16 s delay), where
    /// every other number af takes is refused so.
    @Test(arguments: [("--retry-delay=0x10", "expected a number of seconds from 0 to 2000000"),
                      ("--timeout=0x1p3", "expected a number of seconds from 0 to 2000000"),
                      ("--retry-backoff=0x2", "expected a factor from 1 to 100")])
    func secondsAndFactorsAreDecimal(option: String, expected: String) {
        let value = String(option.split(separator: "=")[1])
        let name = String(option.split(separator: "=")[0])
        let result = InProcessAF.run(["--offline", option, server.url("/get")])
        #expect(result.status == 64)
        #expect(result.err == "af: error: invalid value '\(value)' for \(name): \(expected)\n")
        // Spaces around a number are taken, as for counts.
        #expect(InProcessAF.run(["--offline", "--retry-delay= 1.5 ", "--retry=2", server.url("/get")]).status == 0)
    }

    @Test func twoEncodingHeadersAreTwoLayers() {
        let result = InProcessAF.run([server.url("/hostile/gzip-twice")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == BuiltinRoutes.sampleJSON)
    }

    /// af decodes deflate itself (to see a stream cut short), in both forms libcurl takes:
    /// zlib-wrapped as the standard says, and raw as some servers send it.
    @Test func deflateBodiesDecodeInBothForms() {
        for path in ["/deflate", "/hostile/raw-deflate"] {
            let result = InProcessAF.run([server.url(path)])
            #expect(result.status == 0, "\(path): \(result.err)")
            #expect(result.out == BuiltinRoutes.sampleJSON, "\(path)")
        }
    }

    /// A batch line that is not UTF-8 is refused naming FILE:LINE, with its bytes shown,
    /// before anything is sent: it was sent with U+FFFD in place of the byte.
    @Test func aBatchLineThatIsNotUTF8IsRefused() throws {
        let path = directory + "/latin1.txt"
        let bytes = Array("\(server.url("/get"))\n\(server.url("/caf"))".utf8) + [0xE9, 0x0A]
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let result = InProcessAF.run(["batch", path])
        expectOneError(result, status: 64, containing: "\(path):2: the line '\(server.url("/caf"))\\xE9' is not UTF-8 text; af reads its lines as UTF-8")
        #expect(server.requests.isEmpty)
    }

    /// Such a line is not quoted when it holds a credential (a password's Latin-1 letter is
    /// the commonest such byte): the message, which a CI job keeps in its log, printed the
    /// `-a` password or the header's token. The column of the byte says where it is.
    @Test func aBatchLineThatIsNotUTF8WithACredentialIsNotQuoted() throws {
        // What comes before the byte, the byte, and what follows it.
        let cases: [(String, UInt8, String)] = [
            ("\(server.url("/get")) -a bob:p", 0xE4, "ss"),
            ("\(server.url("/get")) --auth=bob:p", 0xE4, ""),
            ("\(server.url("/get")) -vab:p", 0xE4, ""),
            ("\(server.url("/get")) 'Authorization:Bearer t", 0xF6, "ken'"),
            ("\(server.url("/get")) Cookie:sid=", 0xFF, ""),
        ]
        for (before, byte, after) in cases {
            let path = directory + "/secret.txt"
            #expect(FileManager.default.createFile(atPath: path, contents: Data(Array(before.utf8) + [byte] + Array(after.utf8) + [0x0A])))
            let result = InProcessAF.run(["batch", path])
            let column = before.unicodeScalars.count + 1
            expectOneError(result, status: 64, containing: "\(path):1: the line (not shown: it holds a credential) has a byte that is not UTF-8 at column \(column); af reads its lines as UTF-8")
        }
        #expect(server.requests.isEmpty)
    }

    /// A value item's file is its text (SPEC §2), so a file that is not UTF-8 is refused
    /// naming the file, the item and the first byte: each such byte was sent as U+FFFD
    /// (`caf\u{FFFD}` for Latin-1 `caf\xE9`), and a UTF-16 file's text was lost. A
    /// multipart part carries the bytes as they are.
    @Test func valueItemsFromFilesThatAreNotUTF8AreRefusedNotMangled() throws {
        let latin1 = directory + "/latin1.txt"
        #expect(FileManager.default.createFile(atPath: latin1, contents: Data([0x63, 0x61, 0x66, 0xE9])))
        let advice = "send a file of other bytes as the body (@FILE) or as a file part (name@FILE), which carry any bytes"
        for item in ["name=@" + latin1, "name:=@" + latin1, "q==@" + latin1, "X-A:@" + latin1] {
            for form in [[], ["--form"]] where !(item.hasPrefix("X-A") && !form.isEmpty) {
                let result = InProcessAF.run(form + ["post", server.url("/post"), item])
                #expect(result.status == 66, "\(item)")
                #expect(result.err == "af: error: cannot read '\(latin1)' (from '\(item)') as text: it is not UTF-8 (byte 0xE9 at offset 3); \(advice)\n")
            }
        }
        let piped = InProcessAF.run(["post", server.url("/post"), "name=@-"], stdin: .bytes([0x63, 0x61, 0x66, 0xE9]))
        #expect(piped.err == "af: error: cannot read standard input (from 'name=@-') as text: it is not UTF-8 (byte 0xE9 at offset 3); \(advice)\n")
        #expect(server.requests.isEmpty)
        let utf16 = directory + "/utf16.json"
        #expect(FileManager.default.createFile(atPath: utf16, contents: "{\"a\": 1}".data(using: .utf16)))
        let wide = InProcessAF.run(["post", server.url("/post"), "n:=@" + utf16])
        #expect(wide.status == 66)
        #expect(wide.err == "af: error: cannot read '\(utf16)' (from 'n:=@\(utf16)') as text: it is UTF-16 text (it starts with UTF-16's byte order mark); "
                + "save it as UTF-8, for example with iconv -f UTF-16 -t UTF-8\n")
        #expect(server.requests.isEmpty)
        let part = InProcessAF.run(["--multipart", "post", server.url("/post"), "name=@" + latin1])
        #expect(part.status == 0, "\(part.err)")
        let body = try #require(server.requests(to: "/post").first?.body)
        #expect(body.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A, 0x63, 0x61, 0x66, 0xE9, 0x0D, 0x0A]) != nil)
    }

    /// af's own files saved as UTF-16 (Windows editors, PowerShell's `>`) are named as such:
    /// a config said "unexpected byte 0xff", a netrc was passed over without a word (its
    /// credentials never sent), a batch file was quoted back as a wall of escapes.
    @Test func afsOwnFilesSavedAsUTF16AreNamedAsThat() throws {
        let config = try TemporaryDirectory.make(prefix: "af-config")
        #expect(FileManager.default.createFile(atPath: config + "/config.json", contents: "{\"default_options\": []}".data(using: .utf16)))
        let conversion = "save it as UTF-8, for example with iconv -f UTF-16 -t UTF-8"
        let configured = InProcessAF.run([server.url("/get")], environment: ["AF_CONFIG_DIR": config])
        #expect(configured.status == 66)
        #expect(configured.err == "af: error: cannot read '\(config)/config.json' (from 'the config file') as text: it is UTF-16 text (it starts with UTF-16's byte order mark); \(conversion)\n")
        let netrc = directory + "/netrc"
        #expect(FileManager.default.createFile(atPath: netrc, contents: "machine 127.0.0.1 login u password p\n".data(using: .utf16)))
        let credentials = InProcessAF.run([server.url("/get")], environment: ["NETRC": netrc])
        #expect(credentials.status == 66)
        #expect(credentials.err == "af: error: cannot read '\(netrc)' (from 'NETRC') as text: it is UTF-16 text (it starts with UTF-16's byte order mark); \(conversion); --ignore-netrc runs without it\n")
        // af reads ~/.netrc unasked: the error names it so, and the way past it.
        let home = try TemporaryDirectory.make(prefix: "af-home")
        try FileManager.default.createDirectory(atPath: home + "/.netrc", withIntermediateDirectories: false)
        let folder = InProcessAF.run([server.url("/get")], environment: ["HOME": home], unsetting: ["NETRC"])
        #expect(folder.status == 66)
        #expect(folder.err == "af: error: cannot read '\(home)/.netrc' (from '~/.netrc'): it is not a regular file; name a file; --ignore-netrc runs without it\n")
        let batch = directory + "/lines.txt"
        #expect(FileManager.default.createFile(atPath: batch, contents: (server.url("/get") + "\n").data(using: .utf16)))
        let lines = InProcessAF.run(["batch", batch])
        #expect(lines.status == 64)
        #expect(lines.err == "af: error: \(batch):1: the file is UTF-16 text (it starts with UTF-16's byte order mark); \(conversion)\n")
        let bare = directory + "/lines-le.txt"
        #expect(FileManager.default.createFile(atPath: bare, contents: (server.url("/get") + "\n").data(using: .utf16LittleEndian)))
        #expect(InProcessAF.run(["batch", bare]).err == "af: error: \(bare):1: the line has NUL bytes, so this is no UTF-8 text file of command lines "
                + "(UTF-16 text, a program, an archive?); af batch reads one af command line per line of UTF-8 text\n")
        #expect(server.requests.isEmpty)
        #expect(InProcessAF.run(["--ignore-netrc", server.url("/get")], environment: ["HOME": home], unsetting: ["NETRC"]).status == 0)
    }

    /// A program given as the batch file by mistake is named as that, not quoted as a line:
    /// its first line was a wall of escapes.
    @Test func aBinaryFileGivenAsTheBatchIsNamedAsNoTextFile() throws {
        let path = directory + "/program"
        let bytes: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0, 0, 0] + Array(repeating: 0xD0, count: 300) + [0x0A]
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let result = InProcessAF.run(["batch", path])
        #expect(result.status == 64)
        #expect(result.err == "af: error: \(path):1: the line has NUL bytes, so this is no UTF-8 text file of command lines (UTF-16 text, a program, an archive?); af batch reads one af command line per line of UTF-8 text\n")
        #expect(server.requests.isEmpty)
    }

    /// Bytes that are not UTF-8 are shown one by one; valid text (ASCII, two to four bytes) is
    /// not reported. Overlong forms, surrogates and cut sequences are not UTF-8.
    @Test(arguments: [
        ([0x61, 0x62], nil), ([0x63, 0x61, 0x66, 0xC3, 0xA9], nil), ([0xF0, 0x9F, 0x98, 0x80], nil),
        ([0x63, 0xE9], "c\\xE9"), ([0xC0, 0x80], "\\xC0\\x80"), ([0xED, 0xA0, 0x80], "\\xED\\xA0\\x80"),
        ([0x61, 0xE2, 0x82], "a\\xE2\\x82"), ([0xFF, 0xC3, 0xA9], "\\xFFé"),
    ] as [([UInt8], String?)])
    func bytesThatAreNotUTF8AreShown(bytes: [UInt8], shown: String?) {
        #expect(Quote.invalidUTF8(bytes) == shown)
    }

    @Test func hugeNumbersInTheConfigFileNameTheFile() throws {
        let config = try TemporaryDirectory.make(prefix: "af-config")
        try #"{"default_options": ["--timeout=1e30"]}"#.write(toFile: config + "/config.json", atomically: false, encoding: .utf8)
        let result = InProcessAF.run([server.url("/get")], environment: ["AF_CONFIG_DIR": config])
        expectOneError(result, status: 64, containing: "in the config file '\(config)/config.json'")
        #expect(result.err.contains("--timeout"))
    }

    /// A NUL ends a C string: `-o "out\u0000.json"` in the config file wrote to 'out', and the
    /// error named a file that was not there; a header value read from a file or a session
    /// with one was said to hold a line break.
    @Test func aNULInAConfigOptionOrAHeaderValueIsNamed() throws {
        let config = try TemporaryDirectory.make(prefix: "af-config")
        try #"{"default_options": ["-o", "\#(directory)/out\u0000.json"]}"#.write(toFile: config + "/config.json", atomically: false, encoding: .utf8)
        let configured = InProcessAF.run([server.url("/get")], environment: ["AF_CONFIG_DIR": config])
        #expect(configured.status == 64)
        #expect(configured.err == "af: error: \"default_options\" in '\(config)/config.json' has '\(directory)/out\\x00.json', with a NUL character (\\u0000), which no command line can hold\n")
        #expect(!FileManager.default.fileExists(atPath: directory + "/out"))
        let value = try write("value", "a\u{0}b")
        let header = InProcessAF.run([server.url("/get"), "X-A:@\(value)"])
        #expect(header.status == 64)
        #expect(header.err == "af: error: header 'X-A' in 'X-A:@\(value)' contains a NUL character, which no header value can hold\n")
        let session = try write("session.json", #"{"af_session": 1, "host": "127.0.0.1:\#(server.port)", "headers": [["X-A", "a\u0000b"]]}"#)
        let stored = InProcessAF.run(["--session-read-only=\(session)", server.url("/get")])
        #expect(stored.status == 64)
        #expect(stored.err == "af: error: the session file '\(session)' has a header 'X-A' whose value contains a NUL character, which no header value can hold; fix it or remove it (af never replaces it)\n")
        #expect(server.requests.isEmpty)
    }

    @Test func largestDurationsStillWork() {
        let result = InProcessAF.run(["--timeout=2000000", "--connect-timeout=2000000", "--retry=1", "--retry-delay=2000000",
                             "--retry-max-delay=2000000", "--retry-max-time=1", server.url("/status/503")])
        #expect(result.status == 0, "\(result.err)")
    }

    @Test func deepJSONItemIsRefused() throws {
        let deep = try write("deep.json", String(repeating: "[", count: 1_000_000))
        let result = InProcessAF.run(["--offline", "--pretty=format", server.url("/post"), "a:=@\(deep)"])
        expectOneError(result, status: 64, containing: "nested more than 512 levels deep")
    }

    @Test func deepDocumentsOfAfsOwnAreErrors() throws {
        let deep = String(repeating: "{\"a\":", count: 60_000) + "1" + String(repeating: "}", count: 60_000)
        let config = try TemporaryDirectory.make(prefix: "af-config")
        try deep.write(toFile: config + "/config.json", atomically: false, encoding: .utf8)
        expectOneError(InProcessAF.run(["--offline", server.url("/get")], environment: ["AF_CONFIG_DIR": config]), status: 64, containing: "nested more than 512")
        let session = try write("session.json", deep)
        expectOneError(InProcessAF.run(["--offline", "--session=\(session)", server.url("/get")]), status: 64, containing: "nested more than 512")
        let policy = try write("policy.json", deep)
        expectOneError(InProcessAF.run(["--trust-policy=\(policy)", "https://127.0.0.1:9/"]), status: 64, containing: "nested more than 512")
    }

    @Test func nestingUpToTheLimitWorks() {
        let key = "a" + String(repeating: "[b]", count: 500)
        let result = InProcessAF.run(["--offline", "-p", "B", server.url("/post"), key + "=1"])
        #expect(result.status == 0, "\(result.err)")
    }

    @Test func lineBreaksInPartTypesAndBoundariesAreRefused() throws {
        let file = try write("a.txt", "text")
        expectOneError(InProcessAF.run([server.url("/post"), "f@\(file);type=text/plain\r\nInjected: 1"]), status: 64, containing: "line break")
        expectOneError(InProcessAF.run(["--multipart", "--boundary=a\r\nInjected: 1", server.url("/post"), "a=b"]), status: 64, containing: "--boundary")
        expectOneError(InProcessAF.run(["--multipart", "--boundary=" + String(repeating: "b", count: 71), server.url("/post")]), status: 64, containing: "1 to 70")
        #expect(server.hits("/post") == 0)
    }

    @Test func colouredOutputEscapesServerControlCharactersEvenInAPipe() {
        let result = InProcessAF.run(["--pretty=all", "-p", "hb", server.url("/escape")])
        #expect(result.status == 0)
        #expect(!result.stdout.contains(0x07))
        #expect(!result.out.contains("\u{1b}]0;"))
        #expect(!result.out.contains("\u{1b}[2J"))
        let binary = InProcessAF.run(["--pretty=all", server.url("/binary")])
        let note = String(decoding: FuzzTargets.withoutColours(binary.stdout), as: UTF8.self)
        #expect(note == "[binary data not shown in coloured output: 16 B of application/octet-stream; use --pretty=format or -o FILE]\n", "\(note)")
        #expect(binary.status == 0)
        let plain = InProcessAF.run([server.url("/escape")])
        #expect(plain.out.contains("\u{1b}]0;pwned"), "piped output without colours stays exact")
        // A JSON string's C1 control (U+009B is CSI) and DEL, which JSON allows unescaped.
        let c1 = Array(#"{"a": "x"#.utf8) + [0xC2, 0x9B] + Array("2J\u{7F}\"}".utf8)
        server.route("/c1-json") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json")], body: c1) }
        let json = InProcessAF.run(["--pretty=all", "-b", server.url("/c1-json")])
        #expect(String(decoding: FuzzTargets.withoutColours(json.stdout), as: UTF8.self) == "{\n    \"a\": \"x\\u009b2J\\u007f\"\n}\n")
        #expect(InProcessAF.run(["-b", server.url("/c1-json")]).stdout == c1, "without colours, exact")
    }

    /// Markup is read by its bytes, as its delimiters are ASCII: a quote followed by a
    /// combining mark still opens an attribute value (read as characters, the two were one
    /// and the value was painted as the tag), as the tokenizer always read it.
    @Test func aQuoteBeforeACombiningMarkOpensAnAttributeValue() throws {
        let colors = MarkupFormatter.Colors(Theme.auto)
        let shown = try #require(MarkupFormatter.colour("<a title=\"\u{301}x\" id='b'>é</a>", colors: colors))
        #expect(shown == Theme.paint("<a title=", colors.tag) + Theme.paint("\"\u{301}x\"", colors.value) + Theme.paint(" id=", colors.tag)
            + Theme.paint("'b'", colors.value) + Theme.paint(">", colors.tag) + "é" + Theme.paint("</a>", colors.tag))
    }

    /// A NUL in any chunk makes a text body binary, as curl and HTTPie check: a first chunk of
    /// text (a few bytes read with the head) let 100 KB of binary through, escaped, as
    /// 340 KB of output. What was shown stays, and the note follows on a line of its own.
    @Test func aNULAfterTheFirstChunkKeepsTheRestOfTheBodyOff() {
        let binary = [UInt8]((0...255).map { UInt8($0) }) + [UInt8](repeating: 0, count: 744)
        server.route("/late-binary") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(5 + binary.count)\r\n\r\nhello")
                Thread.sleep(forTimeInterval: 0.2)
                connection.write(binary)
                connection.close()
            }
        }
        let result = InProcessAF.run(["--pretty=all", server.url("/late-binary")])
        #expect(result.status == 0)
        let shown = String(decoding: FuzzTargets.withoutColours(result.stdout), as: UTF8.self)
        #expect(shown == "hello\n[binary data not shown in coloured output: 1005 B of text/plain; use --pretty=format or -o FILE]\n", "\(shown.debugDescription)")
        // Text for more than the first kilobyte, then a NUL, in one piece: binary too.
        server.route("/text-then-nul") { _, _ in .response(status: 200, headers: [("Content-Type", "text/plain")], body: [UInt8](repeating: 0x61, count: 2000) + [0]) }
        let late = InProcessAF.run(["--pretty=all", server.url("/text-then-nul")])
        #expect(String(decoding: FuzzTargets.withoutColours(late.stdout), as: UTF8.self).hasPrefix("[binary data not shown in coloured output: 2.0 KiB of text/plain"))
        #expect(InProcessAF.run([server.url("/late-binary")]).stdout == Array("hello".utf8) + binary, "piped output stays exact")
        // UTF-16 writes NULs: text, though its byte order mark was cut by the first chunk.
        server.route("/late-utf16") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\n")
                connection.write([0xFF])
                Thread.sleep(forTimeInterval: 0.2)
                connection.write([0xFE, 0x68, 0x00, 0xE9, 0x00])
                connection.close()
            }
        }
        #expect(InProcessAF.run(["--pretty=all", server.url("/late-utf16")]).out == "h\u{E9}")
    }

    /// HTML held for colouring that outgrows what is held falls back to text with the same
    /// check: a NUL in the held part makes it binary (it was shown, 8 MiB of it escaped).
    @Test func markupThatOutgrowsItsBufferIsCheckedForNULs() {
        let body = Array("<html><p>".utf8) + [0] + [UInt8](repeating: 0x61, count: 9 << 20)
        server.route("/big-binary-html") { _, _ in .response(status: 200, headers: [("Content-Type", "text/html")], body: body) }
        let result = InProcessAF.run(["--pretty=all", server.url("/big-binary-html")])
        #expect(result.status == 0)
        let shown = String(decoding: FuzzTargets.withoutColours(result.stdout), as: UTF8.self)
        #expect(shown == "[binary data not shown in coloured output: 9.0 MiB of text/html; use --pretty=format or -o FILE]\n", "\(shown.prefix(200).debugDescription)")
    }

    /// Markup past what is held for colouring is shown as text a block at a time: a character
    /// cut by a block's end and a control character are shown as they would be whole (the
    /// held 8 MiB were decoded and escaped in one piece, three copies of them at once).
    @Test func markupThatOutgrowsItsBufferIsShownAsTextWhole() {
        let head = "<p>" + String(repeating: "a", count: (64 << 10) - 4)
        let body = Array((head + "é\u{1B}[2J<b>").utf8) + [UInt8](repeating: 0x62, count: 9 << 20)
        server.route("/big-html") { _, _ in .response(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: body) }
        let result = InProcessAF.run(["--pretty=all", server.url("/big-html")])
        #expect(result.status == 0)
        let shown = FuzzTargets.withoutColours(result.stdout)
        let expected = Array((head + "é\\x1B[2J<b>").utf8) + [UInt8](repeating: 0x62, count: 9 << 20)
        #expect(shown.count == expected.count)
        #expect(shown == expected)
    }

    /// Markup held for colouring is checked as it comes too: a small HTML or XML body with a
    /// NUL was shown whole, escaped, however binary. UTF-16 markup, whose NULs are its
    /// charset's, is text.
    @Test(arguments: ["text/html", "application/xml"])
    func heldMarkupWithANULIsBinary(type: String) {
        let body = Array("<r>".utf8) + [0, 1, 0x1B] + Array("<a/></r>".utf8)
        server.route("/binary-markup") { _, _ in .response(status: 200, headers: [("Content-Type", type)], body: body) }
        let result = InProcessAF.run(["--pretty=all", server.url("/binary-markup")])
        #expect(result.status == 0)
        let shown = String(decoding: FuzzTargets.withoutColours(result.stdout), as: UTF8.self)
        #expect(shown == "[binary data not shown in coloured output: 14 B of \(type); use --pretty=format or -o FILE]\n", "\(shown.debugDescription)")
        let wide = Array("\u{FEFF}<r>é</r>".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        server.route("/utf16-markup") { _, _ in .response(status: 200, headers: [("Content-Type", type)], body: wide) }
        let text = InProcessAF.run(["--pretty=all", server.url("/utf16-markup")])
        #expect(String(decoding: FuzzTargets.withoutColours(text.stdout), as: UTF8.self).contains("<r>é</r>"), "\(text.out.debugDescription)")
    }

    /// Text before JSON that is taken for an anti-XSSI prefix is server text like any other:
    /// its escape sequences reached the terminal raw (`ESC ]0;…BEL` set the window title).
    /// Into a pipe without colours it stays exact.
    @Test func aPrefixBeforeJSONIsEscapedForReading() {
        let body = Array("\u{1B}]0;pwned\u{07}{\"a\": 1}".utf8)
        server.route("/escaping-prefix") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json")], body: body) }
        let coloured = InProcessAF.run(["--pretty=all", server.url("/escaping-prefix")])
        let shown = String(decoding: FuzzTargets.withoutColours(coloured.stdout), as: UTF8.self)
        #expect(shown == "\\x1B]0;pwned\\x07{\n    \"a\": 1\n}\n", "\(shown.debugDescription)")
        #expect(!coloured.stdout.contains(0x07))
        #expect(InProcessAF.run(["--pretty=format", server.url("/escaping-prefix")]).stdout == Array("\u{1B}]0;pwned\u{07}{\n    \"a\": 1\n}\n".utf8))
    }

    /// `-m` prints each attempt's reason phrase: a server's escape sequence in it reached the
    /// terminal as sent (it set the window title); it is escaped like a head's text.
    @Test func metadataEscapesTheReasonPhrase() {
        server.route("/reason") { _, _ in
            .raw(Array("HTTP/1.1 200 O\u{1B}]0;t\u{07}K\r\nContent-Length: 2\r\n\r\nok".utf8), close: true)
        }
        let result = InProcessAF.run(["-m", server.url("/reason")])
        #expect(result.status == 0)
        #expect(result.out.contains("Attempt 1: 200 O\\x1B]0;t\\x07K  HTTP/1.1"), "\(result.out)")
        #expect(!result.stdout.contains(0x1B) && !result.stdout.contains(0x07))
    }

    @Test func procFilesThatSayTheyAreEmptyAreSentWhole() throws {
        let expected = try String(contentsOfFile: "/proc/version", encoding: .utf8)
        #expect(!expected.isEmpty)
        let result = InProcessAF.run(["put", server.url("/put"), "@/proc/version"])
        #expect(result.status == 0, "\(result.err)")
        let request = try #require(server.requests(to: "/put").last)
        #expect(request.bodyText == expected)
        #expect(request.chunked)
    }

    /// sysfs says each of its files is a page long (4096 bytes) whatever it holds: sent with
    /// that length, `/sys/devices/system/cpu/online` ("0-1\n") failed as a file that "shrank
    /// while it was being sent". As a body, a form part and a JSON field's value, it is sent
    /// whole, as it reads.
    @Test(.enabled(if: FileManager.default.isReadableFile(atPath: "/sys/devices/system/cpu/online")))
    func sysFilesThatSayTheyAreAPageLongAreSentAsTheyRead() throws {
        let path = "/sys/devices/system/cpu/online"
        let expected = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!expected.isEmpty && expected.utf8.count < 4096)
        let body = InProcessAF.run(["put", server.url("/put"), "@\(path)"])
        #expect(body.status == 0, "\(body.err)")
        let sent = try #require(server.requests(to: "/put").last)
        #expect(sent.bodyText == expected)
        #expect(sent.chunked)
        let part = InProcessAF.run(["--form", "post", server.url("/form"), "cpus@\(path)"])
        #expect(part.status == 0, "\(part.err)")
        let form = try #require(server.requests(to: "/form").last)
        #expect(form.bodyText.contains("filename=\"online\"\r\nContent-Type: application/octet-stream\r\n\r\n\(expected)\r\n--"), "\(form.bodyText)")
        let field = InProcessAF.run(["post", server.url("/field"), "cpus=@\(path)"])
        #expect(field.status == 0, "\(field.err)")
        #expect(server.requests(to: "/field").last?.bodyText == "{\"cpus\": \(JSONText.string(expected))}")
    }

    @Test func errorLinesQuoteAtMostAShortPrefix() {
        // One argument may hold at most 128 KiB on Linux; that is long enough to show the cap.
        let long = String(repeating: "x", count: 120_000)
        for arguments in [[server.url("/get"), long], ["--\(long)", server.url("/get")], ["--timeout=\(long)", server.url("/get")]] {
            let result = InProcessAF.run(arguments)
            #expect(result.status == 64)
            #expect(result.err.utf8.count < 500, "\(result.err.prefix(300))")
            #expect(result.err.contains("… (120000 bytes)"), "\(result.err.prefix(300))")
        }
    }

    /// What a server sends is capped in an error line as arguments are: a 90 KB reason
    /// phrase or `Location` made an error line of 90 and 180 KB.
    @Test func errorLinesQuoteAtMostAShortPrefixOfWhatTheServerSent() {
        let reason = String(repeating: "R", count: 90_000)
        server.route("/long-reason") { _, _ in .raw(Array("HTTP/1.1 404 \(reason)\r\nContent-Length: 0\r\n\r\n".utf8), close: true) }
        let refused = InProcessAF.run(["--check-status", server.url("/long-reason")])
        #expect(refused.status == 4)
        #expect(refused.err == "af: error: server answered 404 \(String(repeating: "R", count: 120))… (90000 bytes)\n")
        for location in ["ftp://" + String(repeating: "a", count: 90_000), "http://[" + String(repeating: "a", count: 90_000)] {
            server.route("/long-location") { _, _ in .response(status: 302, headers: [("Location", location)]) }
            let result = InProcessAF.run(["-F", server.url("/long-location")])
            #expect(result.status == 1)
            #expect(result.err.utf8.count < 600, "\(result.err.prefix(300))")
            #expect(result.err.hasPrefix("af: error: cannot follow redirect from \(server.url("/long-location")) to '\(location.prefix(120))… (\(location.utf8.count) bytes)'"))
        }
    }

    /// URL and headers past libcurl's 1 MiB request head are a usage error naming the
    /// biggest part, and nothing is sent (libcurl failed them as out of memory, which af
    /// blamed on a response header line).
    @Test func aRequestHeadOverLibcurlsLimitIsRefused() throws {
        let directory = try TemporaryDirectory.make()
        let value = try TemporaryDirectory.write(String(repeating: "a", count: 1_100_000), named: "value.txt", in: directory)
        let header = InProcessAF.run([server.url("/get"), "X-Big:@\(value)", "X-Small:1"])
        #expect(header.status == 64)
        #expect(header.err.hasPrefix("af: error: the request's URL and headers come to "))
        #expect(header.err.hasSuffix(" bytes, more than libcurl puts in a request head (1 MiB), 1100000 of them the header 'X-Big' from 'X-Big:@\(value)'; send large values in the body\n"))
        let query = InProcessAF.run([server.url("/get"), "q==@\(value)"])
        #expect(query.status == 64)
        #expect(query.err.hasSuffix(" of them the URL; send large values in the body\n"))
        // Many small headers: no one part is to blame.
        let many = InProcessAF.run([server.url("/get")] + (0..<40_000).map { "h\($0):" + String(repeating: "v", count: 20) })
        #expect(many.status == 64)
        #expect(many.err.hasSuffix(" more than libcurl puts in a request head (1 MiB), in 40003 headers; send fewer headers, or their values in the body\n"), "\(many.err)")
        #expect(server.requests.isEmpty)
    }

    /// Every temporary file af cannot make is named the same way, its directory quoted, with
    /// what to do: standard input kept for a retry said "in /x:" where a batch said "in '/x'".
    @Test func aTemporaryDirectoryThatIsNotThereIsQuoted() {
        let missing = "/nonexistent-af-tmp"
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) + 1)
        let result = InProcessAF.run(["--retry=1", "put", server.url("/put")], stdin: .bytes(body), environment: ["TMPDIR": missing])
        #expect(result.status == 9)
        #expect(result.err == "af: error: cannot create a temporary file in '\(missing)': no such file or directory; set TMPDIR to a writable directory\n")
        #expect(server.requests.isEmpty)
    }

    /// A response held for a retry (or for --report=json) stays in memory while it is small:
    /// every `--retry` GET needed a temporary file, so a TMPDIR that is not there failed them
    /// all. A body past a megabyte still needs one, and says so.
    @Test func aSmallResponseHeldForARetryNeedsNoTemporaryFile() {
        let missing = "/nonexistent-af-tmp"
        let small = InProcessAF.run(["--retry=1", server.url("/get")], environment: ["TMPDIR": missing])
        #expect(small.status == 0, "\(small.err)")
        #expect(small.out.hasPrefix(#"{"method": "GET", "target": "/get""#), "\(small.out.prefix(100))")
        let report = InProcessAF.run(["--report=json", server.url("/bytes/1000")], environment: ["TMPDIR": missing])
        #expect(report.status == 0, "\(report.err)")
        let large = InProcessAF.run(["--retry=1", server.url("/bytes/2000000")], environment: ["TMPDIR": missing])
        #expect(large.status == 9)
        #expect(large.err == "af: error: cannot create a temporary file in '\(missing)': no such file or directory; set TMPDIR to a writable directory\n")
        // What arrived before the failure is shown, as an attempt that fails mid-body shows it.
        #expect(large.stdout.count <= 1 << 20)
    }

    /// A piped body is held to be sent (for its length, and for a retry, a redirect or an
    /// authentication round trip that sends it again) in memory while it is small: it was
    /// always copied to a temporary file, so `echo '{}' | af post URL` failed (exit 9) where
    /// TMPDIR was not there or the file system was read-only, as in many containers. Past a
    /// megabyte it still goes to a file, whole.
    @Test func aSmallPipedBodyNeedsNoTemporaryFile() throws {
        let missing = "/nonexistent-af-tmp"
        let plain = InProcessAF.run(["post", server.url("/post")], stdin: .bytes(Array(#"{"a": 1}"#.utf8)), environment: ["TMPDIR": missing])
        #expect(plain.status == 0, "\(plain.err)")
        #expect(plain.err == "")
        let limit = 1 << 20
        let body = (0..<limit).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        // Sent twice: to the redirect, then to where it leads.
        let resent = InProcessAF.run(["-F", "--retry=1", "-q", "post", server.url("/redirect-to?url=/echo&status=307")],
                                     stdin: .bytes(body), environment: ["TMPDIR": missing])
        #expect(resent.status == 0, "\(resent.err)")
        // Compared whole, not element by element: a failure's diff of a megabyte takes hours.
        let sent = server.requests.map(\.body)
        #expect(sent.count == 3 && sent[1] == body && sent[2] == body, "\(sent.map(\.count))")
        // A file item that reads a pipe (standard input here, `<(…)` in a shell) is held the same way.
        let part = InProcessAF.run(["--retry=1", "-q", "post", server.url("/post"), "f@-"], stdin: .bytes(Array("part\n".utf8)), environment: ["TMPDIR": missing])
        #expect(part.status == 0, "\(part.err)")
        let form = server.requests.last?.bodyText ?? ""
        #expect(form.contains("Content-Disposition: form-data; name=\"f\"; filename=\"-\"\r\nContent-Type: application/octet-stream\r\n\r\npart\n\r\n"), "\(form)")
        let directory = try TemporaryDirectory.make(prefix: "af-piped-body")
        let larger = body + [1, 2, 3]
        let spooled = InProcessAF.run(["-F", "-q", "post", server.url("/redirect-to?url=/echo&status=307")],
                                      stdin: .bytes(larger), environment: ["TMPDIR": directory])
        #expect(spooled.status == 0, "\(spooled.err)")
        let sentLarger = server.requests.suffix(2).map(\.body)
        #expect(sentLarger.count == 2 && sentLarger.allSatisfy { $0 == larger }, "\(sentLarger.map(\.count))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty, "the spooled copy is removed")
    }

    /// A server that sends only an interim head (a 101 switch nobody asked for, a 100
    /// Continue) and closes did answer: the error says what came instead of "without
    /// answering", as libcurl's "Empty reply from server" made it.
    @Test func anInterimHeadAloneIsNamed() {
        server.route("/switch") { _, _ in .raw(Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8), close: true) }
        server.route("/continue") { _, _ in .raw(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), close: true) }
        for (path, head) in [("/switch", "101 Switching Protocols"), ("/continue", "100 Continue")] {
            let result = InProcessAF.run([server.url(path)])
            #expect(result.status == 1)
            #expect(result.err == "af: error: 127.0.0.1:\(server.port) answered only \(head) and closed the connection without a final response\n")
        }
    }

    /// An error that quotes a URL does not repeat the password in it: standard error goes
    /// into CI logs, and the message is about the rest of the URL (curl quotes no URL here).
    @Test func errorLinesLeaveOutAURLsPassword() {
        let cases: [(String, String)] = [
            ("http://bob:s3cret@127.0.0.1:99999/", "af: error: invalid URL 'http://bob:***@127.0.0.1:99999/': port number was not a decimal number between 0 and 65535; check the URL\n"),
            ("http://bob:s3cret@[::1", "af: error: invalid URL 'http://bob:***@[::1': bad IPv6 address; check the URL\n"),
            ("htps://bob:s3cret@127.0.0.1:9/x", "af: error: invalid URL 'htps://bob:***@127.0.0.1:9/x': unsupported URL scheme; did you mean 'https://bob:***@127.0.0.1:9/x'?\n"),
            ("http://bob:s3cret@ex ample.com/", "af: error: invalid URL 'http://bob:***@ex ample.com/': the host 'ex ample.com' has a space in it; a host name has none\n"),
        ]
        for (url, message) in cases {
            let result = InProcessAF.run(["--offline", url])
            #expect(result.status == 64)
            #expect(result.err == message)
        }
        // A redirect from a URL with credentials to one that cannot be followed.
        server.route("/to-ftp") { _, _ in .response(status: 302, headers: [("Location", "ftp://carol:hunter2@example.com/")]) }
        let redirect = InProcessAF.run(["-F", server.url("/to-ftp").replacingOccurrences(of: "http://", with: "http://bob:s3cret@")])
        #expect(redirect.status == 1)
        #expect(!redirect.err.contains("s3cret") && !redirect.err.contains("hunter2"), "\(redirect.err)")
        #expect(redirect.err.contains("'ftp://carol:***@example.com/'"), "\(redirect.err)")
    }

    @Test func hostsThatDecodeToControlCharactersAreRefused() {
        // Found by the url fuzz target: libcurl decodes a percent-encoded host.
        let result = InProcessAF.run(["--offline", "a%7Fb.example"])
        expectOneError(result, status: 64, containing: "the host has characters no host name has")
        server.route("/to-bad-host") { _, _ in .response(status: 302, headers: [("Location", "http://x%00y/")]) }
        let redirect = InProcessAF.run(["-F", server.url("/to-bad-host")])
        expectOneError(redirect, status: 1, containing: "cannot follow redirect")
    }

    @Test func acceptEncodingWithAnEmptyCodingIsSentAsGiven() {
        // An Accept-Encoding piece of only ';' used to trap while af checked whether libcurl
        // could decode every coding named.
        let result = InProcessAF.run([server.url("/get"), "Accept-Encoding:gzip,;"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("gzip,;"), "\(result.out)")
    }

    @Test func offlineReportIsRefused() {
        expectOneError(InProcessAF.run(["--offline", "--report=json", server.url("/get")]), status: 64, containing: "--offline")
    }

    @Test func gzipOfSeveralMembersIsOneBody() {
        let result = InProcessAF.run([server.url("/hostile/two-members")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "{\"part\": 1}")
    }

    @Test func tooLargeHeadIsALimitNotAReset() {
        let result = InProcessAF.run(["--max-headers=0", server.url("/hostile/huge-head")])
        expectOneError(result, status: 1, containing: "too large")
        #expect(!result.err.contains("reset"))
    }

    @Test func aLyingContentLengthReservesLittleForSortedKeys() {
        // --sort-keys once reserved for the announced size; a huge announcement must neither
        // trap nor reserve it, and the short body is the usual truncation error.
        server.route("/liar") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4611686018427387904\r\n\r\n{\"b\": 1, \"a\": 2}")
                connection.close()
            }
        }
        let result = InProcessAF.run(["--pretty=format", "--sort-keys", server.url("/liar")])
        expectOneError(result, status: 1, containing: "before the body was complete")
    }

    /// A body cut short is counted in the error: "1 of the 5 bytes it announced came", not
    /// libcurl's "transfer closed with 4 bytes remaining to read" (which also says "1 bytes").
    @Test func aBodyCutShortSaysHowMuchCame() {
        server.route("/short") { _, _ in .cut(Array("x".utf8), announcing: 5) }
        let result = InProcessAF.run([server.url("/short")])
        #expect(result.status == 1)
        #expect(result.err == "af: error: 127.0.0.1:\(server.port) closed the connection before the body was complete (1 of the 5 bytes it announced came)\n")
    }

    @Test func maxHeadersZeroMeansNoLimit() {
        let result = InProcessAF.run(["--max-headers=0", server.url("/headers?count=500")])
        #expect(result.status == 0, "\(result.err)")
    }
}
