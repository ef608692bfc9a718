import AFInProcess
import AFTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 17: inputs from hostile users and servers end with a clear error and the right exit
/// code, in bounded time and memory; nothing crashes, hangs or loses data silently.
@Suite struct HardeningTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-hardening")
    }


    @Test(arguments: ["n=10000", "n=30000", "n=1000000&balanced=no", "n=100000&kind=object"])
    func deeplyNestedResponsesAreShownInBoundedTime(query: String) {
        let started = Date()
        let result = AF.run(["--pretty=format", server.url("/hostile/deep-json?\(query)")], timeout: 20)
        #expect(!result.timedOut)
        #expect(result.status == 0, "\(result.err)")
        #expect(Date().timeIntervalSince(started) < 10)
        // The first 512 levels are indented; the rest is shown as it came.
        #expect(result.stdout.count < 4_000_000)
    }

    /// Runs side by side saving one session take turns (a lock on its directory) and apply
    /// their own changes to the file as it is then: 12 runs each setting a cookie keep all 12
    /// (each wrote back what it had read plus its own cookie: of 24, 2 were left).
    @Test func runsSideBySideSavingOneSessionKeepEachOthersCookies() throws {
        let session = directory + "/side-by-side/session.json"
        let runs = (1...12).map { AF.start(["--session=\(session)", server.url("/cookies/set?p\($0)=v")]) }
        for run in runs {
            let result = run.wait(timeout: 120)
            #expect(result.status == 0, "\(result.err)")
        }
        let text = try String(contentsOfFile: session, encoding: .utf8)
        let cookies = JSONHelpers.object(text)?["cookies"] as? [[String: Any]] ?? []
        #expect(Set(cookies.compactMap { $0["name"] as? String }) == Set((1...12).map { "p\($0)" }))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/side-by-side") == ["session.json"], "no temporary file is left")
    }

    /// `--sort-keys` holding an object past 4 MiB asks for room up to its limit at once; where
    /// the kernel refuses that much address space (a strict overcommit, here `ulimit -v`),
    /// the buffer grows as it goes instead of af dying with "out of memory".
    @Test func aLargeHeldObjectIsSortedWhereAddressSpaceIsShort() throws {
        let count = 400_000
        let members = (0..<count).reversed().map { "\"k\(String(format: "%07d", $0))\":\($0)" }
        let body = Array(("{" + members.joined(separator: ",") + "}").utf8)
        server.route("/one-large-object") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json")], body: body) }
        let output = directory + "/sorted.json"
        let (status, errors) = try AF.shell("ulimit -v 1000000; exec '\(AF.binary)' --pretty=format --sort-keys '\(server.url("/one-large-object"))' > '\(output)'")
        #expect(status == 0, "\(errors)")
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(text.hasPrefix("{\n    \"k0000000\": 0,\n    \"k0000001\": 1,"))
        #expect(text.hasSuffix("\"k0399999\": 399999\n}\n"))
    }

    /// A body that is one endless number (a 40 MB one here took about a minute; the time grew
    /// with the square of its length) is shown as it came, every byte, at network speed.
    @Test func aHugeNumberIsShownAsItCameInBoundedTime() {
        for options in [["--pretty=format"], ["--pretty=all"], ["--pretty=format", "--sort-keys"], ["--pretty=format", "--stream"]] {
            let result = AF.run(options + [server.url("/hostile/long-number?mb=40")], timeout: 20)
            #expect(!result.timedOut, "\(options)")
            #expect(result.status == 0, "\(result.err)")
            let shown = options.contains("--pretty=all") ? result.stdout.filter { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "1") } : result.stdout
            #expect(shown.count == 40 << 20, "\(options): \(shown.count) bytes")
        }
    }

    /// Larger than the validation window, so formatted as it streams: when it turns out
    /// invalid (after a comma, 1.2 MB in; or 0.5 MB in, inside the first megabyte, which is
    /// formatted a slice at a time, with 0.8 MB after it), what was formatted stays and the
    /// rest follows exactly as it came.
    @Test(arguments: [(600_000, 0), (250_000, 400_000)])
    func aLargeBodyThatTurnsInvalidKeepsTheFormattedPartAndTheRestAsItCame(before: Int, after: Int) {
        let path = "/late-error-\(before)"
        let rest = "}" + String(repeating: "1,", count: after)
        server.route(path) { _, _ in
            .response(status: 200, headers: [("Content-Type", "application/json")], body: Array(("[" + String(repeating: "1,", count: before) + rest).utf8))
        }
        let expected = Array(("[\n    " + Array(repeating: "1", count: before).joined(separator: ",\n    ") + ",\n    " + rest).utf8)
        // With --sort-keys too, which once showed only the rest.
        for options in [["--pretty=format"], ["--pretty=format", "--sort-keys"]] {
            let result = AF.run(options + [server.url(path)], timeout: 20)
            #expect(result.status == 0, "\(result.err)")
            // Compared first: a failed comparison of two megabyte arrays inside #expect takes minutes to describe.
            let same = result.stdout == expected
            #expect(same, "\(options): \(result.stdout.count) bytes shown, \(expected.count) expected; first difference at \(result.stdout.indices.first { $0 >= expected.count || result.stdout[$0] != expected[$0] } ?? result.stdout.count)")
        }
    }

    /// A large document cut short (a server that stops early): what arrived is shown
    /// formatted, with --sort-keys too (which once showed nothing at all).
    @Test func aLargeBodyCutShortIsShownFormattedWithSortKeysToo() {
        // 1.4 MB: past the first megabyte, which is validated whole rather than streamed.
        let count = 80_000
        server.route("/cut-short") { _, _ in
            .response(status: 200, headers: [("Content-Type", "application/json")], body: Array(("[" + String(repeating: #"{"b": 1, "a": 2}, "#, count: count) + #"{"b": 1"#).utf8))
        }
        func expected(_ element: String) -> [UInt8] {
            Array(("[\n" + Array(repeating: element, count: count).joined(separator: ",\n") + ",\n    {\n        \"b\": 1").utf8)
        }
        let unsorted = AF.run(["--pretty=format", server.url("/cut-short")], timeout: 20)
        #expect(unsorted.status == 0, "\(unsorted.err)")
        let inOwnOrder = unsorted.stdout == expected("    {\n        \"b\": 1,\n        \"a\": 2\n    }")
        #expect(inOwnOrder, "\(unsorted.stdout.count) bytes shown")
        // Sorted, every record that arrived whole is sorted; the last, unfinished, is as it came.
        let sorted = AF.run(["--pretty=format", "--sort-keys", server.url("/cut-short")], timeout: 20)
        #expect(sorted.status == 0, "\(sorted.err)")
        let recordsSorted = sorted.stdout == expected("    {\n        \"a\": 2,\n        \"b\": 1\n    }")
        #expect(recordsSorted, "\(sorted.stdout.count) bytes shown")
    }

    @Test func deeplyNestedSortKeysAndStreamAreBounded() {
        let sorted = AF.run(["--pretty=format", "--sort-keys", server.url("/hostile/deep-json?n=100000&kind=object")], timeout: 20)
        #expect(sorted.status == 0)
        let stream = AF.run(["--pretty=format", "--stream", server.url("/hostile/deep-json?n=100000")], timeout: 20)
        #expect(stream.status == 0)
    }

    @Test(arguments: ["a" + String(repeating: "[0]", count: 20_000), "a" + String(repeating: "[]", count: 20_000),
                      "a" + String(repeating: "[k]", count: 30_000), String(repeating: "[]", count: 30_000)])
    func deepNestedItemsAreRefusedQuickly(key: String) {
        let started = Date()
        let result = AF.run(["--offline", server.url("/post"), key + "=1"])
        expectOneError(result, status: 64, containing: "nests more than 512 levels deep")
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(result.err.utf8.count < 400)
    }

    @Test func devicesAndFIFOsAreNotReadAsAfsOwnFiles() throws {
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in ["/dev/zero", fifo] {
            let session = AF.run(["--offline", "--session=\(path)", server.url("/get")], timeout: 10)
            expectOneError(session, status: 66, containing: "(from '--session'): it is not a regular file")
            let readOnly = AF.run(["--offline", "--session-read-only=\(path)", server.url("/get")], timeout: 10)
            expectOneError(readOnly, status: 66, containing: "(from '--session-read-only'): it is not a regular file")
            let netrc = AF.run(["--offline", server.url("/get")], environment: ["NETRC": path], timeout: 10)
            expectOneError(netrc, status: 66, containing: "it is not a regular file")
            let policy = AF.run(["--trust-policy=\(path)", "https://127.0.0.1:9/"], timeout: 10)
            expectOneError(policy, status: 66, containing: "it is not a regular file")
        }
        let config = try TemporaryDirectory.make(prefix: "af-config")
        #expect(symlink("/dev/zero", config + "/config.json") == 0)
        expectOneError(AF.run(["--offline", server.url("/get")], environment: ["AF_CONFIG_DIR": config], timeout: 10), status: 66, containing: "not a regular file")
    }

    @Test(arguments: ["a=@/dev/zero", "X:@/dev/zero", "a:=@/dev/zero", "q==@/dev/zero"])
    func valuesHeldInMemoryAreCapped(item: String) {
        let result = AF.run(["--offline", server.url("/post"), item], timeout: 20)
        expectOneError(result, status: 66, containing: "a value is held in memory")
    }

    @Test func anEndlessBodyIsShownOfflineWithoutReadingIt() {
        let result = AF.run(["--offline", server.url("/put"), "@/dev/zero"], timeout: 10)
        #expect(result.status == 0)
        #expect(result.out.contains("Transfer-Encoding: chunked"))
        #expect(result.out.contains("[contents of '/dev/zero', streamed as it is read]"))
    }

    @Test func resumeNeverWritesThroughAPlantedSymlink() throws {
        let outside = directory + "/outside.txt"
        try "precious".write(toFile: outside, atomically: false, encoding: .utf8)
        let downloads = try TemporaryDirectory.make(prefix: "af-dl")
        #expect(symlink(outside, downloads + "/big.bin.part") == 0)
        let result = AF.run(["-d", "-c", "-o", "big.bin", server.url("/bytes/100")], directory: downloads)
        expectOneError(result, status: 9, containing: "symbolic link")
        #expect(try String(contentsOfFile: outside, encoding: .utf8) == "precious")
    }

    /// HTTP/1.0 has no chunked encoding: a body read once (a FIFO) went out as a stream,
    /// and libcurl failed once connected ("Chunky upload is not supported by HTTP 1.0").
    /// It is held to learn its length; --chunked with HTTP/1.0 is a usage error.
    @Test func aBodyReadOnceIsSentWithItsLengthOverHTTP10() throws {
        let fifo = directory + "/body.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        Thread.detachNewThread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data("from a fifo".utf8))
            try? handle?.close()
        }
        let result = AF.run(["--http-version=1.0", "post", server.url("/post"), "@" + fifo])
        #expect(result.status == 0, "\(result.err)")
        let received = try #require(server.requests(to: "/post").last)
        #expect(received.httpVersion == "HTTP/1.0")
        #expect(received.bodyText == "from a fifo")
        #expect(received.header("Content-Length") == "11")
        let chunked = AF.run(["--http-version=1.0", "--chunked", "post", server.url("/post"), "a=1"])
        #expect(chunked.status == 64)
        #expect(chunked.err == "af: error: --chunked needs HTTP/1.1: HTTP/1.0 has no chunked encoding; drop --chunked or --http-version=1.0\n")
        #expect(server.requests(to: "/post").count == 1)
    }

    @Test func devicesAndFIFOsAreWrittenInPlaceNeverReplaced() throws {
        let fifo = directory + "/out.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let received = LockedBytes()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let handle = FileHandle(forReadingAtPath: fifo)
            received.set([UInt8](handle?.readDataToEndOfFile() ?? Data()))
            done.signal()
        }
        let result = AF.run(["-o", fifo, "--overwrite", server.url("/bytes/1000")])
        #expect(result.status == 0, "\(result.err)")
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(received.get() == TestData.bytes(count: 1000))
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "the FIFO is still a FIFO")
        // /dev/null without --overwrite: the FIFO above proves --overwrite never replaces a
        // device, and a regression here must not replace the machine's /dev/null.
        let null = AF.run(["-o", "/dev/null", server.url("/bytes/1000")])
        #expect(null.status == 0, "\(null.err)")
        #expect(lstat("/dev/null", &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR)
    }

    @Test func dashMeansStandardOutput() throws {
        let downloads = try TemporaryDirectory.make(prefix: "af-dl")
        let result = AF.run(["-o", "-", server.url("/bytes/300")], directory: downloads)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.stdout == TestData.bytes(count: 300))
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads).isEmpty)
    }

    @Test func aRangeRefusalWithALongerResourceIsNotCompletion() throws {
        let downloads = try TemporaryDirectory.make(prefix: "af-dl")
        let part = downloads + "/file.bin.part"
        _ = FileManager.default.createFile(atPath: part, contents: Data(TestData.bytes(count: 1000)))
        let result = AF.run(["-d", "-c", "-o", "file.bin", server.url("/hostile/short-416?size=16384")], directory: downloads)
        expectOneError(result, status: 9, containing: "the resource has 16384 bytes")
        #expect(!FileManager.default.fileExists(atPath: downloads + "/file.bin"))
        #expect(FileManager.default.fileExists(atPath: part))
    }

    @Test func aMatchingRangeRefusalIsCompletion() throws {
        let downloads = try TemporaryDirectory.make(prefix: "af-dl")
        _ = FileManager.default.createFile(atPath: downloads + "/file.bin.part", contents: Data(TestData.bytes(count: 1000)))
        let result = AF.run(["-d", "-c", "-o", "file.bin", server.url("/hostile/short-416?size=1000")], directory: downloads)
        #expect(result.status == 0, "\(result.err)")
        #expect(FileManager.default.fileExists(atPath: downloads + "/file.bin"))
    }

    /// A FIFO in the scratch directory that a writer thread fills with `text`, then closes.
    private func fifo(_ name: String, feeding text: String) -> String {
        let path = directory + "/" + name
        #expect(mkfifo(path, 0o600) == 0)
        Thread.detachNewThread {
            let handle = FileHandle(forWritingAtPath: path)
            handle?.write(Data(text.utf8))
            try? handle?.close()
        }
        return path
    }

    /// A FIFO is read whole before the request and sent with its length (what a redirect
    /// that keeps the body sends again); `--chunked` streams it as it comes.
    @Test func aFIFOBodyIsSentWholeNotEmpty() throws {
        for (follow, chunked) in [(false, false), (true, false), (false, true)] {
            let fifo = fifo("body-\(follow)-\(chunked).fifo", feeding: "streamed data\n")
            let target = follow ? "/redirect-to?status=307&url=/put" : "/put"
            let result = AF.run((follow ? ["-F"] : []) + (chunked ? ["--chunked"] : []) + ["put", server.url(target), "@\(fifo)"])
            #expect(result.status == 0, "\(result.err)")
            let request = try #require(server.requests(to: "/put").last)
            #expect(request.bodyText == "streamed data\n")
            #expect(request.chunked == chunked)
            #expect(request.header("Content-Length") == (chunked ? nil : "14"))
        }
    }

    @Test func aFIFOFilePartIsSent() throws {
        let fifo = fifo("part.fifo", feeding: "part data")
        let result = AF.run([server.url("/post"), "f@\(fifo)"])
        #expect(result.status == 0, "\(result.err)")
        #expect(try #require(server.requests(to: "/post").last).bodyText.contains("\r\n\r\npart data\r\n--"))
    }

    /// A new FIFO in the test's directory.
    private func makeFIFO(_ name: String) -> String {
        let fifo = directory + "/" + name
        #expect(mkfifo(fifo, 0o600) == 0)
        return fifo
    }

    /// Starts af, sends it `signal` once it has had `delay` seconds to reach its wait, and
    /// waits (ten seconds at most) for it to end.
    private func runSignalled(_ arguments: [String], stdin: StandardInput = .null, signal: Int32, after delay: Double = 1.0) -> AFResult {
        let running = AF.start(arguments, stdin: stdin)
        Thread.sleep(forTimeInterval: delay)
        running.signal(signal)
        let result = running.wait(timeout: 10)
        #expect(!result.timedOut, "\(arguments)")
        return result
    }

    @Test func interruptWhileReadingStandardInputExits130() throws {
        let result = runSignalled(["post", server.url("/post")], stdin: .openPipe, signal: SIGINT)
        #expect(result.status == 130, "\(result.err)")
        #expect(result.err == "af: error: interrupted while reading standard input\n")
        #expect(server.hits("/post") == 0)
        // A value item's: it was "while reading '/proc/self/fd/0'".
        let value = runSignalled(["post", server.url("/post"), "a=@-"], stdin: .openPipe, signal: SIGINT)
        #expect(value.status == 130, "\(value.err)")
        #expect(value.err == "af: error: interrupted while reading standard input\n")
        #expect(server.hits("/post") == 0)
    }

    @Test func interruptWhileReadingAValueFromAPipeExits130() throws {
        let fifo = makeFIFO("value.fifo")
        // A writer that opens the FIFO and never writes or closes: the read blocks.
        let writer = open(fifo, O_RDWR)
        defer { close(writer) }
        let result = runSignalled(["--offline", server.url("/post"), "a=@\(fifo)"], signal: SIGINT)
        #expect(result.status == 130, "\(result.err)")
        #expect(result.err == "af: error: interrupted while reading '\(fifo)'\n")
    }

    /// `af batch FIFO` waits for the FIFO's writer, as any reader of one does: opened without
    /// waiting, it read as an empty batch ("no requests to send", exit 0) before the writer
    /// came. SIGTERM ends the wait.
    @Test func aBatchFileThatIsAFIFOWaitsForItsWriter() throws {
        let fifo = makeFIFO("lines.fifo")
        let running = AF.start(["batch", fifo])
        Thread.sleep(forTimeInterval: 0.5)
        // Without waiting: with no reader left, the open fails (ENXIO) instead of blocking.
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        #expect(writer >= 0, "af batch is not reading the FIFO")
        let lines = Array("\(server.url("/get?fifo=1"))\n".utf8)
        if writer >= 0 {
            #expect(lines.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == lines.count)
            close(writer)
        }
        let result = running.wait(timeout: 10)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("\"target\": \"/get?fifo=1\""), "\(result.out)")
        #expect(result.err == "")

        let unwritten = makeFIFO("unwritten-lines.fifo")
        let ended = runSignalled(["batch", unwritten], signal: SIGTERM, after: 0.5)
        #expect(ended.status == 143)
        #expect(ended.err == "af: error: terminated while reading the batch file '\(unwritten)'\n")
    }

    /// `-o FIFO` opens the FIFO once the response comes, which waits for a reader: SIGINT ends
    /// that wait as any other (it was "cannot write 'FIFO': interrupted system call", exit 9).
    @Test func anOutputFIFOWithoutAReaderEndsOnASignal() throws {
        let fifo = makeFIFO("out.fifo")
        let result = runSignalled(["-o", fifo, server.url("/get")], signal: SIGINT)
        #expect(result.status == 130, "\(result.err)")
        #expect(result.err == "af: error: interrupted\n")
    }

    /// The files the TLS library opens for every connection, given as a FIFO (as a shell's
    /// `--verify=<(…)` is a pipe): read once, so that a redirect's second connection trusts
    /// the same certificates (it found the pipe empty, "error setting certificate file",
    /// exit 7; a named FIFO whose writer had gone waited for ever), and a wait for the FIFO's
    /// writer ends on SIGTERM (OpenSSL opened it again after the signal: af never ended).
    @Test func tlsFilesFromAPipeServeEveryConnection() throws {
        let pki = TestPKI.shared
        let tls = try TestServer(tls: try pki.issue(name: "read-once").identity)
        let ca = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.caCertificatePath)))
        // A second connection: to localhost, after 127.0.0.1.
        let start = tls.url("/redirect-to?url=https://localhost:\(tls.port)/get")
        for (index, option) in ["--verify", "--pin-cert", "SSL_CERT_FILE"].enumerated() {
            let fifo = makeFIFO("trust-\(index).fifo")
            // One writer, as `<(cat ca.pem)` has: it writes the file once and goes.
            let written = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let fd = open(fifo, O_WRONLY)
                if fd >= 0 {
                    _ = ca.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    close(fd)
                }
                written.signal()
            }
            let trust = switch option {
            case "--verify": ["--verify=\(fifo)"]
            case "--pin-cert": ["--verify=\(pki.caCertificatePath)", "--pin-cert=\(fifo)"]
            default: [String]()
            }
            let variables = option == "SSL_CERT_FILE" ? ["SSL_CERT_FILE": fifo] : [:]
            let result = AF.run(trust + ["--follow", "-b", start], environment: variables, timeout: 15)
            #expect(!result.timedOut, "\(option)")
            #expect(result.status == 0, "\(option): \(result.err)")
            #expect(result.out.contains("\"target\": \"/get\""), "\(option): \(result.out)")
            #expect(written.wait(timeout: .now() + 5) == .success)
        }
        for option in ["--verify", "--crl", "--cert"] {
            let fifo = makeFIFO("unwritten\(option).fifo")
            let extra = option == "--verify" ? [] : ["--verify=\(pki.caCertificatePath)"]
            let result = runSignalled(extra + ["\(option)=\(fifo)", tls.url("/get")], signal: SIGTERM)
            #expect(result.status == 143, "\(option): \(result.err)")
            #expect(result.err == "af: error: terminated while reading '\(fifo)'\n")
        }
        let pinFile = makeFIFO("pin-file.fifo")
        let pinned = runSignalled(["pin", "--file", pinFile], signal: SIGTERM)
        #expect(pinned.status == 143)
        #expect(pinned.err == "af: error: terminated while reading '\(pinFile)'\n")
        #expect(tls.requests(to: "/get").count == 3)
    }

    /// Standard input that is a socket (Node.js gives its child processes one end of a socket
    /// pair): Linux does not open a socket again through `/proc/self/fd/0`, so every item and
    /// option that reads standard input by name failed with "cannot read '/proc/self/fd/0' …
    /// no such device or address" (exit 66), while a body `@-` read it.
    @Test func standardInputThatIsASocketIsReadByName() throws {
        let text = Array("sockval\n".utf8)
        for (arguments, check) in [
            (["post", server.url("/post"), "a=@-"], { (request: ServerRequest) in request.bodyText == "{\"a\": \"sockval\\n\"}" }),
            (["post", server.url("/post"), "X-A:@-"], { $0.header("X-A") == "sockval" }),
            (["post", server.url("/post"), "f@-"], { $0.bodyText.contains("filename=\"-\"") && $0.bodyText.contains("\r\n\r\nsockval\n\r\n--") }),
            (["--chunked", "post", server.url("/post"), "f@-"], { $0.chunked && $0.bodyText.contains("\r\n\r\nsockval\n\r\n--") }),
        ] as [([String], (ServerRequest) -> Bool)] {
            let result = AF.run(arguments, stdin: .socket(text))
            #expect(result.status == 0, "\(arguments): \(result.err)")
            let request = try #require(server.requests(to: "/post").last)
            #expect(check(request), "\(arguments): \(request.bodyText)")
        }
        let pki = TestPKI.shared
        let tls = try TestServer(tls: try pki.issue(name: "socket-stdin").identity)
        let ca = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.caCertificatePath)))
        let verified = AF.run(["--verify=/dev/stdin", tls.url("/get")], stdin: .socket(ca))
        #expect(verified.status == 0, "\(verified.err)")
        #expect(tls.hits("/get") == 1)
    }

    /// A file option that names standard input (`--cert-key=/dev/stdin < key.pem`, a secret
    /// kept off the disk) takes it: standard input was the body as well, so the private key
    /// went to the server as a POST's body (from a redirected file), or a pipe's bytes went to
    /// the body and the TLS library found the file empty. A second reader is refused, and so
    /// is such an option on `af batch -`, whose lines are standard input.
    @Test func aFileOptionNamingStandardInputTakesIt() throws {
        let pki = TestPKI.shared
        var identity = try pki.issue(name: "stdin-option").identity
        identity.clientCAPath = pki.caCertificatePath
        let tls = try TestServer(tls: identity)
        let client = try pki.issue(name: "stdin-client", hosts: ["client"], client: true)
        let key = try [UInt8](Data(contentsOf: URL(fileURLWithPath: client.keyPath)))
        let ca = "--verify=\(pki.caCertificatePath)"
        for stdin in [StandardInput.file(client.keyPath), .bytes(key)] {
            let result = AF.run([ca, "--cert=\(client.certificatePath)", "--cert-key=/dev/stdin", "-b", tls.url("/get")], stdin: stdin)
            #expect(result.status == 0, "\(result.err)")
            #expect(result.out.contains("\"method\": \"GET\""), "\(result.out)")
            #expect(!result.out.contains("PRIVATE KEY"), "\(result.out)")
        }
        #expect(tls.requests.map(\.method) == ["GET", "GET"])
        #expect(tls.requests.allSatisfy { $0.body.isEmpty })
        let refusals: [([String], String)] = [
            (["--cert-key=/dev/stdin", "post", tls.url("/post"), "@-"],
             "standard input can be read once, by one item or option; --cert-key=/dev/stdin and '@-' both read it; save one of them to a file"),
            (["--cert-key=/dev/stdin", "post", tls.url("/post"), "a=@/dev/fd/0"],
             "standard input can be read once, by one item or option; --cert-key=/dev/stdin and 'a=@/dev/fd/0' both read it; save one of them to a file"),
            (["--verify=/dev/stdin", "--cert-key=/proc/self/fd/0", tls.url("/get")],
             "standard input can be read once, by one item or option; --verify=/dev/stdin and --cert-key=/proc/self/fd/0 both read it; save one of them to a file"),
            (["batch", "--verify=/dev/stdin", "-"],
             "--verify=/dev/stdin reads standard input, which af batch - reads its lines from; name a file"),
        ]
        for (arguments, message) in refusals {
            let result = AF.run([ca, "--cert=\(client.certificatePath)"] + arguments, stdin: .file(client.keyPath))
            #expect(result.status == 64, "\(arguments)")
            #expect(result.err == "af: error: \(message)\n", "\(arguments)")
        }
        #expect(tls.requests.count == 2)
        // A session given as standard input: its cookies sent, the file itself (cookies and
        // credentials) no longer POSTed as the body.
        let session = try TemporaryDirectory.make(prefix: "af-stdin-session") + "/s.json"
        #expect(AF.run(["--session=\(session)", server.url("/cookies/set?k=v")]).status == 0)
        let read = AF.run(["--session-read-only=/dev/stdin", server.url("/get")], stdin: .file(session))
        #expect(read.status == 0, "\(read.err)")
        let sent = try #require(server.requests(to: "/get").last)
        #expect(sent.method == "GET" && sent.body.isEmpty)
        #expect(sent.header("Cookie") == "k=v")
    }

    /// A FIFO nobody opens for writing blocks the open itself, and a pipe nobody writes to
    /// blocks the reads of it (a body's, a part's, a value's, all read before the request):
    /// Ctrl-C or SIGTERM ends either at once (the open's EINTR was taken for an unreadable
    /// file, exit 66; the body's read was tried again until the writer gave up).
    @Test(arguments: [
        ("a=@", false, SIGINT, Int32(130), "interrupted while reading '%@'"),
        ("X-A:@", false, SIGTERM, 143, "terminated while reading '%@'"),
        ("@", false, SIGINT, 130, "interrupted while reading '%@'"),
        ("@", true, SIGTERM, 143, "terminated while reading '%@'"),
        ("f@", true, SIGINT, 130, "interrupted while reading '%@'"),
    ])
    func aSignalEndsAWaitForAPipe(prefix: String, writerOpen: Bool, signal: Int32, status: Int32, message: String) throws {
        let fifo = makeFIFO("wait-\(signal)-\(writerOpen)-\(prefix.count).fifo")
        let writer = writerOpen ? open(fifo, O_RDWR) : -1
        defer { if writer >= 0 { close(writer) } }
        let result = runSignalled(["post", server.url("/post"), prefix + fifo], signal: signal)
        #expect(result.status == status, "\(result.err)")
        #expect(result.err == "af: error: \(message.replacingOccurrences(of: "%@", with: fifo))\n")
    }

    /// `--chunked` streams a pipe's body as the transfer reads it: a signal ends that wait too.
    @Test func aSignalEndsAStreamedPipeBody() throws {
        let fifo = makeFIFO("streamed-wait.fifo")
        let writer = open(fifo, O_RDWR)
        defer { close(writer) }
        let result = runSignalled(["--chunked", "post", server.url("/post"), "@" + fifo], signal: SIGTERM)
        #expect(result.status == 143, "\(result.err)")
        #expect(result.err == "af: error: terminated\n")
    }

    /// A streamed pipe body that gives nothing: the read waited inside libcurl's read
    /// callback, on the thread every transfer runs on, so `--timeout` fired only when the
    /// pipe gave bytes again (never, here) and a batch's other lines stood still.
    @Test func aStreamedPipeBodyThatGivesNothingKeepsTimeoutsAndOtherTransfers() throws {
        let fifo = makeFIFO("silent.fifo")
        let writer = open(fifo, O_RDWR)
        defer { close(writer) }
        let single = AF.run(["--chunked", "--timeout=1", "post", server.url("/post"), "@" + fifo], timeout: 10)
        #expect(!single.timedOut)
        #expect(single.status == 2, "\(single.err)")
        #expect(single.err == "af: error: no complete response from 127.0.0.1:\(server.port) within 1s; raise --timeout if it needs longer\n")
        let lines = directory + "/pipe-lines.txt"
        try "post \(server.url("/post")) @\(fifo)\n\(server.url("/get"))\n".write(toFile: lines, atomically: true, encoding: .utf8)
        let batch = AF.run(["batch", "--timeout=1", "--parallel=2", "--report=json", lines], timeout: 10)
        #expect(!batch.timedOut)
        #expect(batch.status == 2, "\(batch.err)")
        // The GET finished first (reports come in completion order), while the pipe gave nothing.
        let reported = batch.out.split(separator: "\n").map { $0.prefix(12) }
        #expect(reported == ["{\"line\": 2, ", "{\"line\": 1, "], "\(batch.out)")
        #expect(batch.err.hasPrefix("af: line 1: error: no complete response from 127.0.0.1:\(server.port) within 1s"), "\(batch.err)")
        #expect(server.hits("/get") == 1)
    }

    /// The pipe gives the body in two pieces with a pause between, then goes: each piece is
    /// sent as it comes, and the writer's going ends the body.
    @Test func aStreamedPipeBodyComesInPieces() throws {
        let fifo = makeFIFO("pieces.fifo")
        Thread.detachNewThread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data("first ".utf8))
            Thread.sleep(forTimeInterval: 0.5)
            handle?.write(Data("second".utf8))
            try? handle?.close()
        }
        let result = AF.run(["--chunked", "--timeout=5", "post", server.url("/post"), "@" + fifo], timeout: 10)
        #expect(result.status == 0, "\(result.err)")
        let request = try #require(server.requests(to: "/post").last)
        #expect(request.bodyText == "first second" && request.chunked)
    }

    @Test(arguments: [
        ("/hostile/gzip-garbage", "after the end of the gzip data"),
        ("/hostile/long-header", "too long"),
        ("/hostile/two-lengths", "two different Content-Length"),
        ("/hostile/two-lengths", "malformed response from 127.0.0.1:"),
        ("/hostile/huge-length", "the Content-Length '99999999999999999999999' is larger than any body can be"),
        ("/hostile/hex-length", "the Content-Length '0x2' is not a number of bytes"),
        // Was libcurl's "Invalid Content-Length: value".
        ("/hostile/negative-length", "malformed response from 127.0.0.1:"),
        ("/hostile/negative-length", "its Content-Length is not a number of bytes"),
        ("/hostile/short-gzip-length", "before the body was complete"),
        ("/hostile/bad-status", "malformed response"),
        ("/hostile/ftp-redirect", "unsupported URL scheme 'ftp'"),
        ("/hostile/file-redirect", "unsupported URL scheme 'file'"),
        ("/wrong-length", "before the body was complete"),
        ("/hostile/bad-gzip", "malformed response"),
        ("/hostile/bad-br", "malformed response"),
        ("/hostile/bad-zstd", "malformed response"),
        ("/drop", "before the body was complete"),
        ("/bad-chunk", "malformed response"),
        ("/bomb?mb=64", "decompression"),
        ("/hostile/short-gzip", "the gzip body"),
        ("/hostile/short-deflate", "the deflate body from 127.0.0.1:"),
        ("/hostile/short-raw-deflate", "ends before the deflate data does"),
        ("/hostile/deflate-garbage", "after the end of the deflate data"),
        ("/hostile/header-flood", "header lines"),
        ("/hostile/trailer-flood", "more than 100 trailer lines"),
        // Was "malformed response from 127.0.0.1:PORT: Out of memory in chunked-encoding".
        ("/hostile/long-trailer", "a trailer field after the body from 127.0.0.1:"),
        // Was "request to 127.0.0.1:PORT failed: … (libcurl error 43)".
        ("/hostile/status-in-trailers", "malformed response from 127.0.0.1:"),
    ])
    func brokenResponsesExitOneInEveryMode(path: String, message: String) throws {
        for mode in [[], ["--pretty=all"], ["-d"], ["--stream"], ["--report=json"]] {
            // A download saves the bytes as sent (it asks for identity and decodes nothing),
            // so garbage after a gzip stream is the server's file, not a broken response.
            let encoded = ["/hostile/gzip-garbage", "/hostile/bad-gzip", "/hostile/bad-br", "/hostile/bad-zstd", "/bomb?mb=64", "/hostile/short-gzip",
                           "/hostile/short-deflate", "/hostile/short-raw-deflate", "/hostile/deflate-garbage"]
            if encoded.contains(path), mode == ["-d"] { continue }
            let downloads = try TemporaryDirectory.make(prefix: "af-dl")
            // A hang guard, not a time limit: with --pretty=all the 64 MB bomb prints the 8 MiB
            // inflated before the ratio check as escaped NULs (~150 MB, 10–13 s for a debug
            // build alone), which under a loaded parallel run passed 20 s twice.
            let result = AF.run(mode + ["-F", server.url(path)], directory: downloads, timeout: 60)
            expectOneError(result, status: 1, containing: message)
            let names = try FileManager.default.contentsOfDirectory(atPath: downloads)
            #expect(names.allSatisfy { $0.hasSuffix(".part") }, "no partial file presented as complete: \(names)")
        }
    }

    /// An HTTP/2 server that follows a HEADERS frame with CONTINUATION frames without end:
    /// nghttp2 stops it, and af names the server and the broken framing (libcurl calls it a
    /// receive error, which af had shown as a reset connection, and retried).
    @Test func anHTTP2ContinuationFloodIsAMalformedResponse() throws {
        let flood = try hostileHTTP2Server("h2-continuation-flood")
        let result = AF.run(["--http-version=2-prior-knowledge", "--retry=2", flood.url("/")], timeout: 20)
        expectOneError(result, status: 1, containing: "malformed response from 127.0.0.1:\(flood.port): broken HTTP/2 framing (")
        #expect(!result.err.contains("nghttp2_session_mem_recv"), "\(result.err)")
        #expect(flood.connections == 1, "a malformed response is not retried")
    }

    /// Over HTTP/2 a stream that ends properly can still carry gzip data cut short (a
    /// compressing proxy that failed): af decoded only HTTP/1 bodies itself, and printed half
    /// the body with exit 0.
    @Test func cutGzipDataOverHTTP2IsATruncatedBody() throws {
        let h2 = try hostileHTTP2Server("h2-short-gzip")
        let result = AF.run(["--http-version=2-prior-knowledge", h2.url("/")], timeout: 20)
        expectOneError(result, status: 1, containing: "the gzip body from 127.0.0.1:\(h2.port) ends before the gzip data does")
    }

    /// A server that resets its HTTP/2 stream after the head (RST_STREAM) has cut the body
    /// short, as a connection that breaks does: af called it a malformed response, which is
    /// never retried and names nothing wrong with what came.
    @Test func aStreamResetDuringTheBodyIsATruncatedBody() throws {
        let h2 = try hostileHTTP2Server("h2-reset-mid-body")
        let result = AF.run(["--http-version=2-prior-knowledge", h2.url("/")], timeout: 20)
        #expect(result.out == "partial body\n")
        expectOneError(result, status: 1, containing: "127.0.0.1:\(h2.port) reset the HTTP/2 stream during the response body (INTERNAL_ERROR): the body is incomplete")
        let retried = AF.run(["--http-version=2-prior-knowledge", "--retry=1", "--retry-delay=0", h2.url("/")], timeout: 20)
        #expect(retried.status == 1)
        #expect(retried.err.hasPrefix("af: retrying in 0s (attempt 2 of 2): "), "\(retried.err)")
    }

    /// A server that refuses every HTTP/2 stream (REFUSED_STREAM) is named as one that takes no
    /// requests: af called the connection reset and said the server might not speak HTTP/2
    /// without TLS, which it does. The failure is worth a retry, as the advice says.
    @Test func aServerThatRefusesEveryStreamTakesNoRequests() throws {
        let h2 = try hostileHTTP2Server("h2-refuse-stream")
        let result = AF.run(["--http-version=2-prior-knowledge", h2.url("/")], timeout: 30)
        #expect(result.err == "af: error: 127.0.0.1:\(h2.port) did not take the request: 5 times in a row it closed the connection or refused the HTTP/2 stream before answering; it takes no new requests for now: try again later (--retry=N --retry-delay=SECONDS waits and tries again)\n")
        #expect(result.status == 1)
        let retried = AF.run(["--http-version=2-prior-knowledge", "--retry=1", "--retry-delay=0", h2.url("/")], timeout: 30)
        #expect(retried.status == 1)
        #expect(retried.err.hasPrefix("af: retrying in 0s (attempt 2 of 2): 127.0.0.1:\(h2.port) did not take the request"), "\(retried.err)")
    }

    /// Over HTTP/2 an informational response has no reason phrase; af names 103 as on
    /// HTTP/1.1 (it printed `HTTP/2 103` bare).
    @Test func earlyHintsOverHTTP2AreShown() throws {
        let h2 = try hostileHTTP2Server("h2-early-hints")
        let result = AF.run(["-h", "--http-version=2-prior-knowledge", h2.url("/")], timeout: 20)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "HTTP/2 103 Early Hints\nlink: </style.css>; rel=preload\n\nHTTP/2 200 OK\n")
    }

    /// Trailer fields after a body were dropped (curl -i shows them): now printed after the
    /// body where the response head is, and listed in --report=json; over HTTP/2 too.
    @Test func trailersAreShownAfterTheBody() throws {
        let result = AF.run(["-p", "hb", server.url("/hostile/trailers")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "HTTP/1.1 200 OK\nContent-Type: application/json\nTransfer-Encoding: chunked\nTrailer: X-Checksum, Server-Timing\n\n{\"a\": 1}\nX-Checksum: abc\nServer-Timing: db;dur=53\n")
        #expect(AF.run(["-b", server.url("/hostile/trailers")]).out == "{\"a\": 1}")
        let report = AF.run(["--report=json", server.url("/hostile/trailers")])
        #expect(report.out.contains(#""trailers": [["X-Checksum", "abc"], ["Server-Timing", "db;dur=53"]], "body": {"a":1}"#), "\(report.out)")
        // Too many trailer lines fail the response; none of them is shown.
        let flood = AF.run(["-p", "hb", server.url("/hostile/trailer-flood")])
        #expect(flood.status == 1)
        #expect(!flood.out.contains("X-"))
        let h2 = try hostileHTTP2Server("h2-trailers")
        let over2 = AF.run(["-p", "hb", "--http-version=2-prior-knowledge", h2.url("/")], timeout: 20)
        #expect(over2.status == 0, "\(over2.err)")
        #expect(over2.out == "HTTP/2 200 OK\n\nok\n\nx-checksum: abc\n")
    }

    @Test func aTrickleMeetsTheTimeout() throws {
        for mode in [[], ["-d"], ["--stream"], ["--report=json"]] {
            let downloads = try TemporaryDirectory.make(prefix: "af-dl")
            let started = Date()
            let result = AF.run(mode + ["--timeout=1", server.url("/hostile/trickle")], directory: downloads, timeout: 20)
            expectOneError(result, status: 2, containing: "within 1s")
            #expect(Date().timeIntervalSince(started) < 8)
        }
    }

    @Test func interimStormsAndLyingCharsetsAreSurvived() {
        let storm = AF.run([server.url("/hostile/continue-storm?n=2000")], timeout: 20)
        #expect(storm.status == 0, "\(storm.err)")
        #expect(storm.out == "ok\n")
        let charset = AF.run(["--pretty=all", server.url("/hostile/lying-charset")])
        #expect(charset.status == 0, "\(charset.err)")
        let invalid = AF.run(["--pretty=all", server.url("/hostile/invalid-utf8-json")])
        #expect(invalid.status == 0, "\(invalid.err)")
        #expect(invalid.out.contains("\"a\""))
    }

    @Test func redirectLoopsStopInEveryMode() throws {
        for mode in [[], ["--pretty=all"], ["-d"], ["--stream"], ["--report=json"]] {
            let downloads = try TemporaryDirectory.make(prefix: "af-dl")
            let result = AF.run(mode + ["-F", "--max-redirects=5", server.url("/hostile/loop")], directory: downloads)
            expectOneError(result, status: 6, containing: "more than 5 redirects")
            #expect(try FileManager.default.contentsOfDirectory(atPath: downloads).isEmpty)
        }
    }

    @Test func downloadsOfOddStatusesAreProtocolFailures() throws {
        for status in ["101", "999"] {
            let downloads = try TemporaryDirectory.make(prefix: "af-dl")
            let result = AF.run(["-d", server.url("/hostile/status-\(status)")], directory: downloads)
            #expect(result.status == 1, "\(status): \(result.err)")
        }
    }

    /// Started with standard input closed, af does not take its own signal pipe (the first
    /// descriptor it opened, number 0) for a body: the POST went out after ten seconds of
    /// waiting on that pipe and failed. Now nothing is read, as from /dev/null.
    @Test func aClosedStandardInputIsNoBody() throws {
        let output = directory + "/closed-stdin.json"
        let started = Date()
        let (status, errors) = try AF.shell("exec timeout 20 '\(AF.binary)' post '\(server.url("/post"))' <&- > '\(output)'")
        #expect(status == 0, "\(errors)")
        #expect(errors.isEmpty)
        #expect(Date().timeIntervalSince(started) < 5)
        let body = try String(contentsOfFile: output, encoding: .utf8)
        #expect(body.contains("\"body_length\": 0"), "\(body)")
        #expect(server.requests.count == 1)
    }

    /// Asked for by name (`@-`, `name=@-`), a closed standard input is an error before
    /// anything is sent: it read as empty, and the POST went out with an empty body (or an
    /// empty field) as if that had been asked for.
    @Test(arguments: [("@-", "the body from standard input"), ("note=@-", "standard input"), ("file@-", "standard input")])
    func aClosedStandardInputAskedForByNameIsAnError(item: String, what: String) throws {
        let (status, errors) = try AF.shell("exec timeout 20 '\(AF.binary)' post '\(server.url("/post"))' '\(item)' <&-")
        #expect(status == 66)
        #expect(errors == "af: error: cannot read \(what) for '\(item)': it was closed (or open only for writing) when af started, as <&- does; pipe or redirect it (< FILE)\n")
        #expect(server.requests.isEmpty)
    }

    /// Closed standard output and error, held on /dev/null so that no descriptor af opens
    /// takes their numbers, still refuse what af writes there: exit 9 for the output, as
    /// for any write that fails, and the exit status of the exchange when only error
    /// messages were lost. Held open for writing, they would swallow the output silently.
    @Test func closedStandardOutputAndErrorAreNeverReused() throws {
        var (status, errors) = try AF.shell("exec '\(AF.binary)' '\(server.url("/bytes/5"))' >&-")
        #expect(status == 9)
        #expect(errors == "af: error: cannot write the output: its descriptor was closed when af started (as >&- does); send it to /dev/null instead, or give -q to print nothing\n")
        // As it says: with -q nothing is written there.
        (status, errors) = try AF.shell("exec '\(AF.binary)' -q '\(server.url("/bytes/5"))' >&-")
        #expect(status == 0, "\(errors)")
        #expect(errors.isEmpty)
        (status, errors) = try AF.shell("'\(AF.binary)' --check-status '\(server.url("/status/500"))' 2>&- >/dev/null; echo \"exit $?\" >&2")
        #expect(status == 0)
        #expect(errors == "exit 5\n")
        #expect(server.requests.count == 3)
    }

    /// A server of its own that answers every connection with the hand-framed HTTP/2 of one
    /// hostile route (a client's `PRI *` preface reaches it through the catch-all route).
    private func hostileHTTP2Server(_ route: String) throws -> TestServer {
        let h2 = try TestServer()
        h2.route("*") { request, _ in HostileRoutes.reply(route, request) }
        return h2
    }

    /// Standard output and input that another holder of the pipe made non-blocking (a
    /// Node.js parent, some CI runners: `O_NONBLOCK` is on the open file they share with af).
    /// A write the pipe could not take at once failed with EAGAIN: af stopped after 64 KiB
    /// with exit 9 ("resource temporarily unavailable"), `af batch` too (or, copying a held
    /// output out, spun at full CPU), and a body read from such a standard input failed with
    /// exit 66. Now af waits as a blocking
    /// descriptor would, and every byte arrives.
    @Test func nonBlockingStandardOutputAndInputLoseNothing() throws {
        func nonBlocking(_ fd: Int32) { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        /// Runs af with `arguments`, its standard output a non-blocking pipe read only after
        /// half a second (the pipe fills), its standard input `input` (non-blocking too) fed
        /// in pieces; what it wrote, and its exit status and errors.
        func run(_ arguments: [String], input: [UInt8]? = nil) throws -> (out: [UInt8], status: Int32, err: String) {
            let output = Pipe(), errors = Pipe(), standardInput = Pipe()
            nonBlocking(output.fileHandleForWriting.fileDescriptor)
            nonBlocking(standardInput.fileHandleForReading.fileDescriptor)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: AF.binary)
            process.arguments = arguments
            process.environment = AF.environment()
            process.standardOutput = output
            process.standardError = errors
            process.standardInput = input == nil ? FileHandle.nullDevice : standardInput
            try process.run()
            try output.fileHandleForWriting.close()
            try errors.fileHandleForWriting.close()
            try standardInput.fileHandleForReading.close()
            let feeder = Thread {
                let writer = standardInput.fileHandleForWriting
                var rest = input?[...] ?? []
                while !rest.isEmpty {
                    guard (try? writer.write(contentsOf: Data(rest.prefix(50_000)))) != nil else { break }
                    rest = rest.dropFirst(50_000)
                    Thread.sleep(forTimeInterval: 0.05)
                }
                try? writer.close()
            }
            feeder.start()
            Thread.sleep(forTimeInterval: 0.5)
            let out = [UInt8](output.fileHandleForReading.readDataToEndOfFile())
            let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (out, process.terminationStatus, err)
        }
        let whole = try run([server.url("/bytes/3000000")])
        #expect(whole.status == 0, "\(whole.err)")
        #expect(whole.out.count == 3_000_000)
        let same = whole.out == TestData.bytes(count: 3_000_000)
        #expect(same)

        // af batch: later lines' outputs are held and copied out in line order (sendfile).
        let lines = (1...12).map { server.url("/bytes/200000?i=\($0)") }.joined(separator: "\n") + "\n"
        let batch = try run(["batch", "--parallel=4", "-"], input: Array(lines.utf8))
        #expect(batch.status == 0, "\(batch.err)")
        let all = batch.out == Array((1...12).map { _ in TestData.bytes(count: 200_000) }.joined())
        #expect(all, "\(batch.out.count) bytes")

        let body = TestData.bytes(count: 400_000)
        let upload = try run(["-q", "post", server.url("/post")], input: body)
        #expect(upload.status == 0, "\(upload.err)")
        #expect(server.requests(to: "/post").last?.body == body)
    }

    /// A limit on open files (`ulimit -n 8`) below what a request holds: af died of SIGILL
    /// (libdispatch traps when it cannot make its event descriptor), having sent the request.
    /// A limit on address space too small for its threads' stacks (`ulimit -v 40000`) held
    /// it for ever (libdispatch waits for a thread it cannot start), deaf to SIGTERM. Now each
    /// is named before sending (exit 1); a soft limit below the floor is raised to the hard
    /// one first, and a limit a plain request fits works as before.
    @Test func tooFewResourcesAreNamedNotCrashedOn() throws {
        let url = server.url("/get")
        let lines = try TemporaryDirectory.write(url + "\n" + url + "\n", named: "lines.txt", in: directory)
        for command in ["'\(url)'", "batch '\(lines)'"] {
            let (status, errors) = try AF.shell("ulimit -n 8 && exec '\(AF.binary)' \(command)")
            #expect(status == 1, "\(command)")
            #expect(errors == "af: error: af may have at most 8 files open here (ulimit -n), and a request needs 12: raise the limit (ulimit -n 1024)\n", "\(command)")
        }
        #expect(server.requests.isEmpty)
        #expect(try AF.shell("ulimit -n 12 && exec '\(AF.binary)' '\(url)'") == (0, ""))
        #expect(try AF.shell("ulimit -S -n 8 && ulimit -H -n 64 && exec '\(AF.binary)' '\(url)'") == (0, ""))
        #expect(server.requests.count == 2)
        let (status, errors) = try AF.shell("ulimit -v 50000 && exec timeout -k 1 20 '\(AF.binary)' '\(url)'")
        #expect(status == 1)
        #expect(errors == "af: error: af may use at most 48.8 MiB of memory here (ulimit -v), and needs 64.0 MiB: raise the limit (ulimit -v unlimited)\n")
        #expect(try AF.shell("ulimit -S -v 50000 && exec timeout -k 1 20 '\(AF.binary)' '\(url)'") == (0, ""))
        #expect(server.requests.count == 3)
    }

    /// A working directory removed while the shell was in it: a download into it (`-d`, or
    /// `-o NAME`) was fetched, then failed to make its file ("no such file or directory"),
    /// the response lost. Now it is refused before anything is sent.
    @Test func aDownloadIntoARemovedWorkingDirectoryIsRefusedBeforeSending() throws {
        let gone = try TemporaryDirectory.make(prefix: "af-gone")
        for arguments in ["-d", "-o out.bin"] {
            let (status, errors) = try AF.shell("cd '\(gone)' && rmdir '\(gone)' && exec '\(AF.binary)' \(arguments) '\(server.url("/bytes/10"))'")
            #expect(status == 9)
            #expect(errors == "af: error: cannot write files in '.' (the working directory): it was removed; cd to a directory that exists, or save to a path in one\n")
            try FileManager.default.createDirectory(atPath: gone, withIntermediateDirectories: false)
        }
        #expect(server.requests.isEmpty)
    }
}

/// Bytes handed from a reader thread to the test.
final class LockedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    func set(_ value: [UInt8]) { lock.withLock { bytes = value } }
    func get() -> [UInt8] { lock.withLock { bytes } }
}

/// Failures of af's own machinery map to the table's codes: a temporary file or zlib is a
/// write failure (9), not the network (1); libcurl refusing an option is not a usage error.
@Suite struct LocalFailureExitTests {
    /// A batch file of `count` GETs of `url`, each with a query of its own.
    static func batchFile(of count: Int, _ url: String, in directory: String) throws -> String {
        let lines = (0..<count).map { "\(url)?n=\($0)" }.joined(separator: "\n") + "\n"
        return try TemporaryDirectory.write(lines, named: "lines.txt", in: directory)
    }

    @Test func aTemporaryFileThatCannotBeMadeIsAWriteFailure() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-deflate")
        let body = directory + "/body.txt"
        try String(repeating: "compressible ", count: 4096).write(toFile: body, atomically: false, encoding: .utf8)
        let result = AF.run(["-xx", "post", server.url("/post"), "@\(body)"], environment: ["TMPDIR": "/nonexistent-af-tmp"])
        #expect(result.status == 9, "\(result.err)")
        #expect(result.err.hasPrefix("af: error: cannot create a temporary file in '/nonexistent-af-tmp' to compress the body: "), "\(result.err)")
        #expect(server.requests.isEmpty)
    }

    /// Standard output on a full disk is exit 9 whatever af writes there: the report and
    /// metadata, written after the exchange, failed quietly with exit 0.
    @Test(arguments: [["--report=json"], ["-p", "m"], [], ["-v"]])
    func aFullDiskOnStandardOutputIsAWriteFailure(options: [String]) throws {
        let server = try TestServer()
        let arguments = (options + [server.url("/json")]).map { "'\($0)'" }.joined(separator: " ")
        let (status, errors) = try AF.shell("exec '\(AF.binary)' \(arguments) > /dev/full")
        #expect(status == 9, "\(options): \(errors)")
        #expect(errors == "af: error: cannot write the output: no space left on device\n", "\(options)")
    }

    /// What prints no exchange fails the same way: help, a curl command line, pins.
    @Test(arguments: [["--help"], ["--version"], ["--curl", "example.org"], ["pin", "--file", "/etc/ssl/certs/ca-certificates.crt"]])
    func aFullDiskFailsPrintedResultsToo(arguments: [String]) throws {
        let (status, errors) = try AF.shell("exec '\(AF.binary)' " + arguments.map { "'\($0)'" }.joined(separator: " ") + " > /dev/full")
        #expect(status == 9, "\(arguments): \(errors)")
        #expect(errors == "af: error: cannot write the output: no space left on device\n", "\(arguments)")
    }

    /// A batch whose later outputs could not be written (they wait, then are copied out)
    /// ended with exit 0 once the first line's output was out: a file size limit lets the
    /// first line through and no other.
    @Test func aBatchWhoseOutputsCannotBeWrittenFails() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-full")
        let file = try Self.batchFile(of: 20, server.url("/bytes/1024"), in: directory)
        let (status, errors) = try AF.shell("ulimit -f 3; exec '\(AF.binary)' batch --parallel=20 '\(file)' > '\(directory)/out'")
        #expect(status == 9, "\(errors)")
        // How many requests had finished when it stopped depends on timing.
        let last = try #require(errors.split(separator: "\n").last.map(String.init))
        #expect(last.wholeMatch(of: /af: error: cannot write the output: file too large; \d+ of 20 requests had finished( \(\d+ failed\))?, \d+ cancelled/) != nil, "\(errors)")
    }

    /// A batch's full disk is the run's one error line, whichever line met it: a line that
    /// wrote straight to standard output (the next to print) added a line of its own
    /// ("af: line 1: error: cannot write the output …") above the batch's.
    @Test(arguments: [[String](), ["--report=json"], ["--offline"]])
    func aBatchsFullDiskIsOneErrorLine(options: [String]) throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-full-one")
        let file = try Self.batchFile(of: 3, server.url("/bytes/1024"), in: directory)
        let arguments = (["batch"] + options + [file]).map { "'\($0)'" }.joined(separator: " ")
        let (status, errors) = try AF.shell("exec '\(AF.binary)' \(arguments) > /dev/full")
        #expect(status == 9, "\(options): \(errors)")
        #expect(errors == "af: error: cannot write the output: no space left on device; 1 of 1 requests had finished (1 failed), 0 cancelled\n", "\(options)")
    }

    /// A destination af may not write to fails before the request is sent: it failed after
    /// the exchange, so a POST was processed and its response lost (`-o`, `-d`), or the
    /// session's new cookies were (`--session`). Root writes anywhere, so af runs as `nobody`
    /// here, where the suite runs as root with `runuser` (as in CI), from a copy any user
    /// may run.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")))
    func anUnwritableDestinationFailsBeforeSending() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-nobody")
        chmod(directory, 0o755)
        let locked = directory + "/locked"
        mkdir(locked, 0o755)
        let binary = directory + "/af"
        try FileManager.default.copyItem(atPath: AF.binary, toPath: binary)
        let cases: [([String], String)] = [
            (["-o", locked + "/out.json", "post", server.url("/post"), "a=1"], "af: error: cannot write files in '\(locked)': permission denied\n"),
            (["-d", "--output-dir=" + locked, server.url("/bytes/10")], "af: error: cannot write files in '\(locked)': permission denied\n"),
            (["--session=" + locked + "/s.json", server.url("/cookies/set?a=1")],
             "af: error: cannot write the session in '\(locked)': permission denied; use --session-read-only to use it without saving it\n"),
            // Directories af would make for the session, in one it may not write to.
            (["--session=" + locked + "/new/deeper/s.json", server.url("/cookies/set?a=1")],
             "af: error: cannot write the session in '\(locked)': permission denied; use --session-read-only to use it without saving it\n"),
        ]
        for (arguments, message) in cases {
            let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
            let (status, errors) = try AF.shell("HOME='\(directory)' exec /usr/sbin/runuser -u nobody -- '\(binary)' \(quoted)")
            #expect(status == 9, "\(arguments): \(errors)")
            #expect(errors == message)
        }
        #expect(server.requests.isEmpty, "nothing was sent")
        // Where it can write, the same runs work.
        let (status, errors) = try AF.shell("HOME='\(directory)' exec /usr/sbin/runuser -u nobody -- '\(binary)' -o /dev/null '\(server.url("/get"))'")
        #expect(status == 0, "\(errors)")
    }

    /// A session whose directory cannot be made, because a file stands where a directory of
    /// its path would be, fails before the request is sent: it failed after the exchange,
    /// losing the session's new cookies.
    @Test func aSessionBeneathAFileFailsBeforeSending() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-session-file")
        let file = try TemporaryDirectory.write("not a directory", named: "file", in: directory)
        for (path, parent) in [(file + "/s.json", file), (file + "/new/s.json", file + "/new")] {
            let result = AF.run(["--session=" + path, server.url("/cookies/set?a=1")])
            #expect(result.status == 9, "\(path): \(result.err)")
            #expect(result.err == "af: error: cannot write the session in '\(parent)': '\(file)' is not a directory; use --session-read-only to use it without saving it\n")
        }
        #expect(server.requests.isEmpty, "nothing was sent")
        // Missing directories are made when the session is saved, as before.
        let fresh = AF.run(["--session=" + directory + "/new/deeper/s.json", server.url("/cookies/set?a=1")])
        #expect(fresh.status == 0, "\(fresh.err)")
        #expect(FileManager.default.fileExists(atPath: directory + "/new/deeper/s.json"))
    }

    /// A body from a FIFO is the printed command's to read: `--curl -x` read it whole to see
    /// whether deflating would pay, and with no writer it waited for one for ever.
    /// (Here, not with the other --curl tests: it runs af as a process, for the hang guard,
    /// and in the unit tests' LeakSanitizer run Foundation's reading of that process's output
    /// (`FileManager.contents`) was reported as a leak.)
    @Test func aFIFOBodyIsNotReadForTheCompressionWarning() throws {
        let server = try TestServer()
        let fifo = try TemporaryDirectory.make(prefix: "af-curl-fifo") + "/body"
        #expect(mkfifo(fifo, 0o600) == 0)
        let printed = AF.run(["--curl", "-x", "post", server.url("/echo"), "@\(fifo)"], timeout: 10)
        #expect(!printed.timedOut)
        #expect(printed.status == 0)
        #expect(printed.err == "af: warning: curl has no option to compress a request body: the command sends it uncompressed, without Content-Encoding: deflate\n")
        #expect(printed.out.contains("--data-binary @\(fifo)"), "\(printed.out)")
        // --offline neither: it read the FIFO, or /dev/zero without end, to deflate it.
        for body in [fifo, "/dev/zero"] {
            let offline = AF.run(["--offline", "-x", "post", server.url("/echo"), "@\(body)"], timeout: 10)
            #expect(!offline.timedOut)
            #expect(offline.status == 0)
            #expect(offline.out.contains("\nContent-Encoding: deflate\n"), "\(offline.out)")
            #expect(offline.out.contains("[contents of '\(body)', streamed as it is read]"), "\(offline.out)")
        }
    }

    /// A process that may not open a socket: libcurl keeps no errno when it cannot open
    /// one, and af said "connection refused by HOST; is the server running?" about a server
    /// that was running. Which descriptor runs out (its socket, or a file it holds output in)
    /// depends on what it opened before, so every limit from 4 to 16 is tried, and with the
    /// limit at 12 and 13, every number of descriptors from 0 to 7 left open by the shell
    /// (which af inherits): each run succeeds, or names the shortage and the limit (never a refused
    /// connection, nor TMPDIR; below 12, before anything, `tooFewResourcesAreNamedNotCrashedOn`),
    /// and at least one is the socket's.
    @Test func runningOutOfDescriptorsIsNotARefusedConnection() throws {
        let server = try TestServer()
        var sockets = 0
        let runs = (4...16).map { (limit: $0, held: 0) } + [12, 13].flatMap { limit in (0...7).map { (limit: limit, held: $0) } }
        for (limit, held) in runs {
            let opened = (0..<held).map { "exec \($0 + 3)</dev/null; " }.joined()
            let (status, errors) = try AF.shell("ulimit -n \(limit); \(opened)exec '\(AF.binary)' -q '\(server.url("/bytes/16"))'")
            if status == 0 { continue }
            if limit < 12 {
                #expect(status == 1)
                #expect(errors == "af: error: af may have at most \(limit) files open here (ulimit -n), and a request needs 12: raise the limit (ulimit -n 1024)\n")
                continue
            }
            #expect(errors.hasPrefix("af: error: ") && errors.contains(": too many open files; af ") && errors.contains(" (ulimit -n)"), "\(limit): \(errors)")
            #expect(!errors.contains("refused") && !errors.contains("TMPDIR"), "\(limit): \(errors)")
            if errors == "af: error: cannot open a socket to connect to 127.0.0.1:\(server.port): too many open files; af may have at most \(limit) files open here: "
                + "raise the limit (ulimit -n), or in af batch lower --parallel\n" {
                #expect(status == 1)
                sockets += 1
            }
        }
        #expect(sockets > 0)
    }

    /// A file af reads (here the session) that cannot be opened for want of descriptors was
    /// told "check the path and its permissions", though neither was wrong. Which number of
    /// descriptors the shell leaves open makes the session's the open that fails depends on
    /// what af opened before, so 0 to 7 are tried; at least one reaches it.
    @Test func aFileThatCannotBeOpenedForWantOfDescriptorsSaysSo() throws {
        let server = try TestServer()
        let session = try TemporaryDirectory.write(#"{"af_session": 1, "host": "127.0.0.1:\#(server.port)", "headers": []}"#, named: "s.json", in: try TemporaryDirectory.make(prefix: "af-fds"))
        var reached = 0
        for held in 0...7 {
            let opened = (0..<held).map { "exec \($0 + 3)</dev/null; " }.joined()
            let (status, errors) = try AF.shell("ulimit -n 12; \(opened)exec '\(AF.binary)' -q --session-read-only='\(session)' '\(server.url("/get"))'")
            #expect(!errors.contains("check the path and its permissions"), "\(held): \(errors)")
            if errors == "af: error: cannot read '\(session)' (from '--session-read-only'): too many open files; af has as many files open as it may: "
                + "raise the limit (ulimit -n), or in af batch lower --parallel\n" {
                #expect(status == 66)
                reached += 1
            }
        }
        #expect(reached > 0)
    }

    /// A batch that would hold more descriptors than the process may (a hard limit it cannot
    /// raise) runs fewer requests at once, saying so once: each line past the limit failed
    /// at once with "too many open files", 881 error lines for `--parallel=1000` under
    /// `ulimit -n 128`. Outputs over the memory a waiting line may hold need a file each.
    @Test(arguments: [16, 100_000])
    func aBatchFitsItsParallelToTheDescriptorLimit(size: Int) throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-nofile")
        let file = try Self.batchFile(of: 60, server.url("/bytes/\(size)"), in: directory)
        let (status, errors) = try AF.shell("ulimit -n 24; exec '\(AF.binary)' batch --parallel=60 '\(file)' > '\(directory)/out'")
        #expect(status == 0, "\(errors)")
        // Lowered to 2, or further when the test runner left descriptors open to af (a
        // descriptor another test opened while this one started af).
        #expect(errors.hasPrefix("af: warning: --parallel=60 lowered to ") && errors.contains(": af may have at most 24 files open here (ulimit -n)"), "\(errors)")
        #expect(errors.split(separator: "\n").count == 1, "\(errors)")
        let written = try FileManager.default.attributesOfItem(atPath: directory + "/out")[.size] as? Int
        #expect(written == 60 * size)
        #expect(server.hits("/bytes/\(size)") == 60)
    }

    /// Descriptors af is started with count against the limit as its own do: 20 a parent
    /// left open under `ulimit -n 48` failed lines ("cannot create a temporary file … too many
    /// open files", exit 9) with --parallel lowered to 10 as if they were not there.
    @Test func inheritedDescriptorsCountAgainstABatchsLimit() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-inherited")
        let file = try Self.batchFile(of: 60, server.url("/bytes/100000"), in: directory)
        let held = (3..<23).map { "\($0)</dev/null" }.joined(separator: " ")
        let (status, errors) = try AF.shell("exec /bin/bash -c \"ulimit -n 48; exec \(held); exec '\(AF.binary)' batch --parallel=60 '\(file)' > '\(directory)/out'\"")
        #expect(status == 0, "\(errors)")
        // The 20 and any the test runner left open to the shell (Foundation's Process leaves
        // one here): 4 in flight for 20, (48 - 16 - held) / 3 for more.
        let words = errors.split(separator: " ")
        let lowered = words.firstIndex(of: "to").flatMap { Int(words[$0 + 1].dropLast()) }
        let inherited = words.firstIndex(of: "held").flatMap { Int(words[$0 - 3]) }
        #expect(inherited.map { $0 >= 20 } == true, "\(errors)")
        #expect(lowered != nil && lowered == inherited.map { max(1, (48 - 16 - $0) / 3) }, "\(errors)")
        #expect(errors.hasPrefix("af: warning: --parallel=60 lowered to ") && errors.hasSuffix(
            ": af may have at most 48 files open here (ulimit -n), \(inherited ?? 0) of them held open by the program that started it\n"), "\(errors)")
        let written = try FileManager.default.attributesOfItem(atPath: directory + "/out")[.size] as? Int
        #expect(written == 60 * 100_000)
    }

    /// Lines past a first one slow to answer start and finish, and their outputs wait for it
    /// in files: as many as the descriptors left beside those in flight, not 2 × --parallel +
    /// 16. Under `ulimit -n 48`, 20 held by the parent, the outputs of the 22 lines let past
    /// it took the descriptors later lines needed ("cannot open a socket … too many open
    /// files", 27 of 60 failed).
    @Test func outputsWaitingForASlowFirstLineLeaveLaterLinesTheirDescriptors() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-slow-first")
        let lines = [server.url("/delay/1")] + (1..<60).map { server.url("/bytes/100000?n=\($0)") }
        let file = try TemporaryDirectory.write(lines.joined(separator: "\n") + "\n", named: "lines.txt", in: directory)
        let held = (3..<23).map { "\($0)</dev/null" }.joined(separator: " ")
        let (status, errors) = try AF.shell("exec /bin/bash -c \"ulimit -n 48; exec \(held); exec '\(AF.binary)' batch --parallel=60 '\(file)' > '\(directory)/out'\"")
        #expect(status == 0, "\(errors)")
        #expect(errors.hasPrefix("af: warning: --parallel=60 lowered to ") && errors.split(separator: "\n").count == 1, "\(errors)")
        let written = try FileManager.default.attributesOfItem(atPath: directory + "/out")[.size] as? Int
        #expect(written == 59 * 100_000 + 16)
    }
}

/// Arguments and batch lines are read as UTF-8. A byte in another encoding turned into
/// U+FFFD unseen (`example.org/caf\xE9` asked for `/caf%EF%BF%BD`); it is refused, shown.
@Suite struct ArgumentEncodingTests {
    @Test func anArgumentThatIsNotUTF8IsRefusedShowingItsBytes() throws {
        let server = try TestServer()
        for (argument, shown) in [("\(server.url("/caf"))\\351", "\(server.url("/caf"))\\xE9"), ("X-A:\\351\\377", "X-A:\\xE9\\xFF")] {
            // printf turns the octal escapes into the bytes; Swift strings cannot hold them.
            let (status, errors) = try AF.shell("exec '\(AF.binary)' \"$(printf '%b' '\(argument)')\" '\(server.url("/get"))'")
            #expect(status == 64, "\(errors)")
            #expect(errors == "af: error: the argument '\(shown)' is not UTF-8 text; af reads its arguments as UTF-8\n")
        }
        #expect(server.requests.isEmpty)
    }
}
