import AFTestSupport
import Foundation
import Testing

/// SPEC §7, what needs a real process: a file-size limit, an interrupt, a terminal.
@Suite struct DownloadTests {
    let server: TestServer
    let directory: String
    static let size = 300_000

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-dl")
    }

    private func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test func writeFailureKeepsThePartAndSaysSo() throws {
        server.serveRangedFile(size: Self.size)
        let (status, text) = try AF.shell("ulimit -f 100; exec '\(AF.binary)' -d --output-dir '\(directory)' '\(server.url("/file/limited.bin"))'")
        #expect(status == 9)
        #expect(text.contains("af: error: cannot write '\(directory)/limited.bin.part': file too large; the partial download is in"))
        #expect(files() == ["limited.bin.part"])
        // Bytes are written in large pieces: what the limit let through is on disk, and -c
        // continues from exactly there (with a checksum of the whole file).
        let part = try #require(FileManager.default.contents(atPath: "\(directory)/limited.bin.part"))
        #expect(part.count == 100 * 512)
        #expect(Array(part) == Array(TestData.bytes(count: Self.size).prefix(part.count)))
        let whole = Digests.sha256Hex(TestData.bytes(count: Self.size))
        let resumed = AF.run(["-d", "-c", "--checksum=sha256:\(whole)", "--output-dir", directory, server.url("/file/limited.bin")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(FileManager.default.contents(atPath: "\(directory)/limited.bin").map(Array.init) == TestData.bytes(count: Self.size))
    }

    /// A small body waits in af's write buffer until the transfer ends; when that last write
    /// fails (a full disk, here a size limit of 0), af fails as it does for a write that fails
    /// midway, and an empty `.part` (nothing to resume) is not left behind.
    @Test func aFailedLastWriteLeavesNoEmptyPart() throws {
        server.serveRangedFile(size: 2_000)
        let (status, errors) = try AF.shell("ulimit -f 0; exec '\(AF.binary)' -d --output-dir '\(directory)' '\(server.url("/file/small.bin"))'")
        #expect(status == 9)
        #expect(errors.hasSuffix("af: error: cannot write '\(directory)/small.bin.part': file too large\n"), "\(errors)")
        #expect(files() == [])
    }

    /// A download into standard output that cannot be written (`/dev/full`) names it as
    /// the rest of af does, not in quotes as if it were a file called "standard output".
    @Test func aFullStandardOutputIsNamedAsSuch() throws {
        server.serveRangedFile(size: 2_000)
        let (status, errors) = try AF.shell("exec '\(AF.binary)' -d -q -o - '\(server.url("/file/out.bin"))' > /dev/full")
        #expect(status == 9)
        #expect(errors == "af: error: cannot write standard output: no space left on device\n", "\(errors)")
        #expect(files() == [])
    }

    /// `-c -o FILE` moves FILE aside to `FILE.part` while it resumes; when the last write
    /// fails and nothing was added, FILE is back under its name with its bytes, as when a
    /// write fails midway (it used to stay renamed to `FILE.part`).
    @Test func aFailedLastWriteOfAResumeGivesTheFileBackItsName() throws {
        server.serveRangedFile(size: 2_000)
        let path = "\(directory)/kept.bin"
        let first = TestData.bytes(count: 1_024)
        try Data(first).write(to: URL(fileURLWithPath: path))
        // 2 blocks of 512 bytes: the file is already at the limit.
        let (status, errors) = try AF.shell("ulimit -f 2; exec '\(AF.binary)' -c -o '\(path)' '\(server.url("/file/kept.bin"))'")
        #expect(status == 9)
        #expect(errors == "af: error: cannot write '\(path)': file too large\n")
        #expect(files() == ["kept.bin"])
        #expect(FileManager.default.contents(atPath: path).map(Array.init) == first)
    }

    /// A download's heads go to standard error, which is for diagnostics: closed or full, it
    /// does not cost the download (it failed with exit 9 and nothing saved).
    @Test(arguments: ["2>/dev/full", "2>&-"])
    func aStandardErrorThatCannotBeWrittenDoesNotCostTheDownload(redirect: String) throws {
        server.serveRangedFile(size: Self.size)
        let (status, _) = try AF.shell("exec '\(AF.binary)' -d -v --output-dir '\(directory)' '\(server.url("/file/kept.bin"))' \(redirect)")
        #expect(status == 0)
        #expect(files() == ["kept.bin"])
        #expect(FileManager.default.contents(atPath: "\(directory)/kept.bin").map(Array.init) == TestData.bytes(count: Self.size))
    }

    @Test func interruptKeepsThePart() throws {
        server.route("/slow/file.bin") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
                connection.write(TestData.bytes(count: 10_000))
                Thread.sleep(forTimeInterval: 10)
            }
        }
        let running = AF.start(["-d", "--output-dir", directory, server.url("/slow/file.bin")])
        Thread.sleep(forTimeInterval: 0.6)
        running.signal(SIGINT)
        let result = running.wait(timeout: 5)
        #expect(result.status == 130)
        #expect(result.err.hasSuffix("af: error: interrupted; the partial download is in '\(directory)/file.bin.part' (9.8 KiB): run the same command with -c to resume\n"))
        #expect(files() == ["file.bin.part"])
        // What had come was held for a larger write, and written out when interrupted.
        #expect(FileManager.default.contents(atPath: "\(directory)/file.bin.part").map(Array.init) == TestData.bytes(count: 10_000))
    }

    /// The progress line starts once the body is being saved: libcurl reports progress while
    /// it waits for the head, and the line drawn then ("⠙ 0 B  0 B/s") stayed in front of the
    /// status line printed after it.
    @Test func theProgressLineWaitsForTheHead() {
        server.route("/slow-head/file.bin") { _, _ in
            .custom { connection in
                Thread.sleep(forTimeInterval: 0.5)
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n")
                connection.write(TestData.bytes(count: 100_000))
                Thread.sleep(forTimeInterval: 0.3)
                connection.write(TestData.bytes(count: 100_000, offset: 100_000))
            }
        }
        let (output, status) = PTYRunner.run(["-d", "--output-dir", directory, server.url("/slow-head/file.bin")])
        #expect(status == 0)
        let head = output.range(of: "HTTP/1.1")
        #expect(head != nil, "\(output.debugDescription)")
        if let head { #expect(!output[..<head.lowerBound].contains("B/s"), "\(output.debugDescription)") }
        #expect(output.contains("ETA"), "the line is drawn once the body comes")
        #expect(output.contains("af: saved '\(directory)/file.bin' (195.3 KiB)"))
    }

    /// A retried download erases the progress line before the retry's notice, which was
    /// written on after it ("ETA --:--af: retrying in 100ms …").
    @Test func aRetryErasesTheProgressLine() {
        let body = TestData.bytes(count: 200_000)
        server.route("/flaky/file.bin") { [server] _, _ in
            .custom { connection in
                if server.hits("/flaky/file.bin") == 1 {
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n")
                    connection.write(Array(body[..<100_000]))
                    Thread.sleep(forTimeInterval: 0.3)
                } else {
                    Thread.sleep(forTimeInterval: 0.4)
                    connection.write("HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n")
                    connection.write(body)
                }
                connection.close()
            }
        }
        let (output, status) = PTYRunner.run(["-d", "--retry=1", "--retry-delay=0.1", "--output-dir", directory, server.url("/flaky/file.bin")])
        #expect(status == 0, "\(output.debugDescription)")
        // A progress line ends in an erase-to-the-end escape; whatever comes next starts by
        // going back to the start of the line.
        let pieces = output.components(separatedBy: "\u{1B}[K")
        for (index, piece) in pieces.enumerated().dropLast() where piece.split(separator: "\r").last?.contains("ETA") == true {
            #expect(pieces[index + 1].isEmpty || pieces[index + 1].hasPrefix("\r"), "written on after the progress line: \(output.debugDescription)")
        }
        #expect(output.contains("retrying in"), "\(output.debugDescription)")
        #expect(output.contains("af: saved '\(directory)/file.bin' (195.3 KiB)"))
    }

    /// Answers `path` with 400,000 bytes in four pieces a quarter of a second apart, so that a
    /// progress bar is drawn several times.
    private func pacedDownload(_ path: String) {
        server.route(path) { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 400000\r\n\r\n")
                for index in 0..<4 {
                    connection.write(TestData.bytes(count: 100_000, offset: index * 100_000))
                    Thread.sleep(forTimeInterval: 0.25)
                }
            }
        }
    }

    @Test func progressBarOnATerminal() {
        pacedDownload("/paced/file.bin")
        let (output, status) = PTYRunner.run(["-d", "--output-dir", directory, server.url("/paced/file.bin")])
        #expect(status == 0)
        #expect(output.contains("%"))
        #expect(output.contains(" / 390.6 KiB"))
        #expect(output.contains("ETA"))
        #expect(output.contains("af: saved '\(directory)/file.bin' (390.6 KiB)"))
    }

    /// `af -d URL | tar xz`, as HTTPie users pipe a download: af's -d saves a file whatever
    /// standard output is (a script's is redirected too), and tells the person at the
    /// terminal that standard output got nothing and how to send the body there.
    @Test func aDownloadWithStandardOutputRedirectedSaysWhereTheBodyWent() throws {
        server.route("/piped/file.bin") { _, _ in .response(status: 200, headers: [], body: TestData.bytes(count: 1000)) }
        let captured = directory + "/captured-stdout"
        let (output, status) = PTYRunner.run(["-d", "--output-dir", directory, server.url("/piped/file.bin")], standardOutput: captured)
        #expect(status == 0)
        #expect(output.contains("af: standard output got nothing: -d saved the body to '\(directory)/file.bin'; give -o - to send it to standard output instead\r\n"),
                "\(output.debugDescription)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: captured)).isEmpty)
        #expect(FileManager.default.contents(atPath: directory + "/file.bin") == Data(TestData.bytes(count: 1000)))
        // With -o - the body goes there, with the bar's percent (the size is known), and no note.
        let (piped, pipedStatus) = PTYRunner.run(["-d", "-o", "-", server.url("/piped/file.bin")], standardOutput: captured)
        #expect(pipedStatus == 0)
        #expect(!piped.contains("got nothing"))
        #expect(piped.contains("af: wrote 1000 B to standard output in "), "\(piped.debugDescription)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: captured)) == Data(TestData.bytes(count: 1000)))
        // Nobody at a terminal (a script, a CI job): the file and the summary, no note.
        let scripted = AF.run(["-d", "--output-dir", directory, server.url("/piped/file.bin")])
        #expect(scripted.status == 0)
        #expect(scripted.err.contains("af: saved '\(directory)/file-1.bin' (1000 B)"), "\(scripted.err)")
        #expect(!scripted.err.contains("got nothing"), "\(scripted.err)")
    }

    /// Writing to standard output (-o -), the bar shows the percent and time left as it does
    /// into a file: the size is known from Content-Length.
    @Test func theBarIntoStandardOutputShowsThePercent() throws {
        pacedDownload("/paced-stdout/file.bin")
        let captured = directory + "/paced-stdout"
        let (output, status) = PTYRunner.run(["-d", "-o", "-", server.url("/paced-stdout/file.bin")], standardOutput: captured)
        #expect(status == 0)
        let lines = PTYRunner.statusLines(in: output, holding: " / 390.6 KiB")
        #expect(!lines.isEmpty, "\(output.debugDescription)")
        #expect(lines.allSatisfy { $0.contains("%") && $0.contains("ETA") }, "\(output.debugDescription)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: captured)).count == 400_000)
    }

    /// On a narrow terminal the bar keeps to one row, leaving out what does not fit: one that
    /// wrapped left a copy of its first row behind at every redraw (it took at least 53
    /// columns).
    @Test func progressBarFitsANarrowTerminal() {
        pacedDownload("/paced-narrow/*")
        for columns in [30, 50] {
            let (output, status) = PTYRunner.run(["-d", "--output-dir", directory, server.url("/paced-narrow/\(columns).bin")], columns: columns)
            #expect(status == 0)
            let lines = PTYRunner.statusLines(in: output, holding: "%")
            #expect(lines.count >= 2, "\(output.debugDescription)")
            for line in lines { #expect(line.unicodeScalars.count < columns, "\(line.debugDescription) on a \(columns)-column terminal") }
            // The sizes stay at both widths; the ETA and speed go first.
            #expect(lines.allSatisfy { $0.contains(" / 390.6 KiB") && !$0.contains("ETA") }, "\(output.debugDescription)")
        }
    }

    // MARK: Retries into a stream

    /// `-o -` (a stream, a FIFO, a device) cannot take back what it was given. A retried
    /// 503's page went out ahead of the body; after a body cut short, a server that ignored
    /// the range sent the whole body after the part already out, a range at the wrong place
    /// was spliced on, and an error page followed the part: each exit 0.
    @Test func aRetriedAnswerDoesNotGoIntoAStream() throws {
        server.route("/busy") { _, hit in
            hit == 1 ? .response(status: 503, headers: [("Retry-After", "0")], body: Array("busy, sorry\n".utf8)) : .response(status: 200, body: Array("hello\n".utf8))
        }
        let result = AF.run(["--retry=2", "--retry-delay=0.01", "-o", "-", server.url("/busy")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "hello\n")
        #expect(result.err == "af: retrying in 0s (attempt 2 of 3): server answered 503 Service Unavailable\n")
    }

    /// After a body cut short, the rest follows what is already out: the range asked for, or
    /// (from a server that ignores ranges) the whole body again with the same ETag, its first
    /// bytes skipped.
    @Test(arguments: [false, true])
    func aStreamCutShortIsContinued(ignoreRange: Bool) throws {
        server.serveRangedFile(size: Self.size, drop: 100_000, ignoreRange: ignoreRange)
        let result = AF.run(["--retry=2", "--retry-delay=0.01", "-o", "-", server.url("/file/s.bin")])
        #expect(result.status == 0, "\(result.err)")
        let same = result.stdout == TestData.bytes(count: Self.size)
        #expect(same, "\(result.stdout.count) bytes")
        let requests = server.requests(to: "/file/s.bin")
        #expect(requests.map { $0.header("Range") } == [nil, "bytes=100000-"])
        #expect(requests.last?.header("If-Range") == "\"v1\"")
    }

    /// `-o FIFO` with a retry hung: the FIFO was closed after the attempt that was cut short,
    /// so its reader saw the end and went, and opening it again for the retry waited for a
    /// reader that never came. It stays open, and the retry continues the body in it.
    @Test func aRetryIntoAFIFOContinuesIt() throws {
        server.serveRangedFile(size: Self.size, drop: 100_000)
        let fifo = directory + "/pipe", out = directory + "/out.bin"
        let (status, text) = try AF.shell("""
            mkfifo '\(fifo)' && { cat '\(fifo)' > '\(out)' & } && \
            timeout 20 '\(AF.binary)' --retry=2 --retry-delay=0.01 -o '\(fifo)' '\(server.url("/file/f.bin"))'; s=$?; wait; exit $s
            """)
        #expect(status == 0, "\(text)")
        #expect(FileManager.default.contents(atPath: out).map(Array.init) == TestData.bytes(count: Self.size))
        #expect(server.requests(to: "/file/f.bin").map { $0.header("Range") } == [nil, "bytes=100000-"])
    }

    /// The null device keeps nothing, so nothing written there can be wrong: `-o /dev/null`
    /// (or standard output sent there), used to check a status, starts each answer over
    /// instead of failing when a retry cannot continue the body.
    @Test func theNullDeviceStartsEachAnswerOver() throws {
        server.route("/plain") { _, hit in
            hit % 2 == 1 ? .cut(TestData.bytes(count: 100_000), announcing: 200_000) : .response(status: 200, body: TestData.bytes(count: 200_000))
        }
        let result = AF.run(["--retry=2", "--retry-delay=0.01", "--check-status", "-o", "/dev/null", server.url("/plain")])
        #expect(result.status == 0, "\(result.err)")
        let (status, text) = try AF.shell("exec '\(AF.binary)' --retry=2 --retry-delay=0.01 -o - '\(server.url("/plain"))' > /dev/null")
        #expect(status == 0, "\(text)")
        #expect(server.requests(to: "/plain").map { $0.header("Range") } == [nil, nil, nil, nil])
    }

    /// What cannot follow the part already out ends the run (exit 9), which says so; the
    /// stream has exactly that part.
    @Test(arguments: [
        ("wrong", "the server resumed at byte 99000 instead of after them"),
        ("missing", "the server answered 404 Not Found instead of sending the rest"),
        ("changed", "the server answered 200 OK instead of sending the rest"),
        ("refused", "the server refused the range (416), and the resource has 300000 bytes"),
        ("longer", "the server resumed a resource of 400000 bytes, not the one of 200000 it began with"),
    ])
    func whatCannotFollowAStreamCutShortEndsTheRun(mode: String, told: String) throws {
        let body = TestData.bytes(count: 200_000)
        server.route("/cut/*") { _, hit in
            guard hit > 1 else { return .cut(Array(body[..<100_000]), announcing: 200_000, headers: [("ETag", "\"v1\"")]) }
            switch mode {
            case "wrong": return .response(status: 206, headers: [("Content-Range", "bytes 99000-199999/200000")], body: Array(body[99_000...]))
            case "missing": return .response(status: 404, body: Array("gone\n".utf8))
            case "refused": return .response(status: 416, headers: [("Content-Range", "bytes */300000")])
            case "longer": return .response(status: 206, headers: [("Content-Range", "bytes 100000-399999/400000")], body: Array(TestData.bytes(count: 400_000)[100_000...]))
            default: return .response(status: 200, headers: [("ETag", "\"v2\"")], body: body)
            }
        }
        let result = AF.run(["--retry=2", "--retry-delay=0.01", "-o", "-", server.url("/cut/" + mode)])
        #expect(result.status == 9)
        #expect(result.err.hasSuffix("\naf: error: standard output got 100000 bytes of the body before an attempt failed, and \(told); they cannot be taken back, so what was written is incomplete (after 2 attempts)\n"), "\(result.err)")
        let part = result.stdout == Array(body[..<100_000])
        #expect(part, "\(result.stdout.count) bytes")
    }
}
