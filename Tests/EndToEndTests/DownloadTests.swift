import AFTestSupport
import Foundation
import Testing

/// SPEC §7: downloads never lose or clobber data.
@Suite struct DownloadTests {
    let server: TestServer
    let directory: String
    static let size = 300_000

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-dl")
    }

    private func contents(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: directory + "/" + name).map { [UInt8]($0) }
    }

    private func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// `/file/NAME`: the pattern bytes with Range support; with `drop`, the first request
    /// is cut after that many bytes.
    private func serveFile(drop: Int? = nil, ignoreRange: Bool = false, disposition: String? = nil) {
        let body = TestData.bytes(count: Self.size)
        server.route("/file/*") { request, hit in
            var start = 0
            if !ignoreRange, let range = request.header("Range"), range.hasPrefix("bytes="),
               let value = Int(range.dropFirst(6).split(separator: "-").first ?? "")
            {
                if value >= body.count {
                    return .response(status: 416, headers: [("Content-Range", "bytes */\(body.count)")])
                }
                start = value
            }
            var head = start > 0 ? "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(start)-\(body.count - 1)/\(body.count)\r\n" : "HTTP/1.1 200 OK\r\n"
            head += "Content-Length: \(body.count - start)\r\nETag: \"v1\"\r\nContent-Type: application/octet-stream\r\n"
            if let disposition { head += "Content-Disposition: \(disposition)\r\n" }
            head += "\r\n"
            let cut = hit == 1 ? drop : nil
            let offset = start
            let headText = head
            return .custom { connection in
                connection.write(headText)
                if let cut {
                    connection.write(Array(body[offset..<cut]))
                    connection.close()
                } else {
                    connection.write(Array(body[offset...]))
                }
            }
        }
    }

    @Test(arguments: [
        ("attachment; filename=\"../../escape.txt\"", "escape.txt"),
        ("attachment; filename=\"/etc/passwd\"", "passwd"),
        ("attachment; filename=\".bashrc\"", "bashrc"),
        ("attachment; filename=\"..\"", "evil"),
        ("attachment; filename=\"a\u{07}b\u{1b}[31m.txt\"", "ab[31m.txt"),
        ("attachment; filename=\"dir\\\\sub\\\\name.txt\"", "name.txt"),
        ("attachment; filename*=UTF-8''..%2F..%2Fcaf%C3%A9.txt; filename=\"plain.txt\"", "café.txt"),
        ("inline; filename=report.pdf", "report.pdf"),
    ])
    func hostileNamesLandInsideTheDirectory(disposition: String, expected: String) throws {
        serveFile(disposition: disposition)
        let result = AF.run(["-d", "--output-dir", directory, server.url("/file/evil")])
        #expect(result.status == 0, "\(result.err)")
        #expect(files() == [expected])
        #expect(contents(expected) == TestData.bytes(count: Self.size))
    }

    @Test func nameFromURLOrContentType() throws {
        server.route("/") { _, _ in .text("<p>hi</p>", type: "text/html") }
        #expect(AF.run(["-d", "--output-dir", directory, server.url("/")]).status == 0)
        #expect(AF.run(["-d", "--output-dir", directory, server.url("/bytes/10")]).status == 0)
        #expect(files() == ["10", "index.html"])
    }

    @Test func existingFilesAreNeverReplaced() throws {
        serveFile()
        let existing = directory + "/data.bin"
        try "precious".write(toFile: existing, atomically: true, encoding: .utf8)
        #expect(AF.run(["-d", "--output-dir", directory, server.url("/file/data.bin")]).status == 0)
        #expect(AF.run(["-d", "--output-dir", directory, server.url("/file/data.bin")]).status == 0)
        #expect(files() == ["data-1.bin", "data-2.bin", "data.bin"])
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "precious")
        let refused = AF.run(["-o", existing, server.url("/file/data.bin")])
        #expect(refused.status == 9)
        #expect(refused.err == "af: error: '\(existing)' exists; use --overwrite to replace it or -c to resume it\n")
        #expect(server.hits("/file/data.bin") == 2)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "precious")
        #expect(AF.run(["-o", existing, "--overwrite", server.url("/file/data.bin")]).status == 0)
        #expect(contents("data.bin") == TestData.bytes(count: Self.size))
    }

    @Test func outputDirectoryMustExistUnlessCreated() {
        serveFile()
        let nested = directory + "/a/b"
        let refused = AF.run(["-d", "--output-dir", nested, server.url("/file/x")])
        #expect(refused.status == 9)
        #expect(refused.err == "af: error: directory '\(nested)' does not exist; add --create-dirs to create it\n")
        #expect(server.requests.isEmpty)
        #expect(AF.run(["-d", "--create-dirs", "--output-dir", nested, server.url("/file/x")]).status == 0)
        #expect(FileManager.default.fileExists(atPath: nested + "/x"))
    }

    @Test func interruptedDownloadResumesByteIdentical() throws {
        serveFile(drop: 100_000)
        let target = directory + "/big.bin"
        let broken = AF.run(["-o", target, server.url("/file/big.bin")])
        #expect(broken.status == 1)
        #expect(broken.err.hasSuffix("; the partial download is in '\(target).part' (97.7 KiB): run the same command with -c to resume\n"))
        #expect(files() == ["big.bin.part"])
        #expect(contents("big.bin.part")?.count == 100_000)
        let resumed = AF.run(["-o", target, "-c", server.url("/file/big.bin")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(files() == ["big.bin"])
        let identical = contents("big.bin") == TestData.bytes(count: Self.size)
        #expect(identical)
        #expect(server.requests.last?.header("Range") == "bytes=100000-")
    }

    @Test func downloadResumesWithDashDAndContinue() throws {
        serveFile(drop: 50_000)
        #expect(AF.run(["-d", "--output-dir", directory, server.url("/file/part.iso")]).status == 1)
        #expect(files() == ["part.iso.part"])
        let resumed = AF.run(["-d", "-c", "--output-dir", directory, server.url("/file/part.iso")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(resumed.err.contains("af: saved 'part.iso'") || resumed.err.contains("/part.iso' (293.0 KiB)"))
        #expect(resumed.err.contains("resumed after 48.8 KiB"))
        let identical = contents("part.iso") == TestData.bytes(count: Self.size)
        #expect(identical)
    }

    @Test func flakyServerWithRetryResumesMidway() throws {
        serveFile(drop: 123_456)
        let result = AF.run(["-d", "--retry=2", "--retry-delay=0.1", "--output-dir", directory, server.url("/file/flaky.bin")])
        #expect(result.status == 0, "\(result.err)")
        let identical = contents("flaky.bin") == TestData.bytes(count: Self.size)
        #expect(identical)
        let requests = server.requests(to: "/file/flaky.bin")
        #expect(requests.count == 2)
        #expect(requests[0].header("Range") == nil)
        #expect(requests[1].header("Range") == "bytes=123456-")
        #expect(requests[1].header("If-Range") == "\"v1\"")
        #expect(requests[1].header("Accept-Encoding") == "identity")
    }

    @Test func serverIgnoringTheRangeRestartsWithANotice() throws {
        serveFile(ignoreRange: true)
        let part = directory + "/again.bin.part"
        _ = FileManager.default.createFile(atPath: part, contents: Data(repeating: 7, count: 1000))
        let result = AF.run(["-d", "-c", "--output-dir", directory, server.url("/file/again.bin")])
        #expect(result.status == 0)
        #expect(result.err.contains("af: the server did not resume the download; starting '\(directory)/again.bin' from the beginning\n"))
        let identical = contents("again.bin") == TestData.bytes(count: Self.size)
        #expect(identical)
    }

    @Test func completeFileAnswered416IsSuccess() throws {
        serveFile()
        let target = directory + "/done.bin"
        _ = FileManager.default.createFile(atPath: target, contents: Data(TestData.bytes(count: Self.size)))
        let result = AF.run(["-d", "-c", "-o", target, server.url("/file/done.bin")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("was already complete"))
        #expect(files() == ["done.bin"])
        #expect(server.requests.last?.header("Range") == "bytes=\(Self.size)-")
    }

    @Test func checksumsVerifyBeforeTheRename() throws {
        serveFile()
        let sha = Digests.sha256Hex(TestData.bytes(count: Self.size))
        let good = AF.run(["-d", "--checksum=sha256:\(sha)", "--output-dir", directory, server.url("/file/good.bin")])
        #expect(good.status == 0, "\(good.err)")
        #expect(good.err.contains("; sha256 verified\n"))
        #expect(files() == ["good.bin"])
        let wrong = String(repeating: "0", count: 64)
        let bad = AF.run(["-d", "--checksum=sha256:\(wrong)", "--output-dir", directory, server.url("/file/bad.bin")])
        #expect(bad.status == 9)
        #expect(bad.err.hasSuffix("af: error: sha256 of the download is \(sha), not \(wrong); nothing was saved as '\(directory)/bad.bin'; check the checksum and where it came from\n"))
        #expect(files() == ["good.bin"])
        let malformed = AF.run(["-d", "--checksum=sha256:xyz", server.url("/file/x")])
        #expect(malformed.status == 64)
        #expect(malformed.err.hasPrefix("af: error: invalid checksum 'sha256:xyz'"))
    }

    @Test func writeFailureKeepsThePartAndSaysSo() throws {
        serveFile()
        let script = "ulimit -f 100; exec '\(AF.binary)' -d --output-dir '\(directory)' '\(server.url("/file/limited.bin"))'"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = AF.environment()
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 9)
        #expect(text.contains("af: error: cannot write '\(directory)/limited.bin.part': file too large; the partial download is in"))
        #expect(files() == ["limited.bin.part"])
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
    }

    @Test func nonSuccessIsNotSaved() {
        let result = AF.run(["-d", "--output-dir", directory, server.url("/status/404")])
        #expect(result.status == 4)
        #expect(files().isEmpty)
    }

    @Test func outputFileWithoutDownloadSavesTheBodyExactly() {
        let result = AF.run(["-o", directory + "/page.json", server.url("/gzip")])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(contents("page.json") == Deflate.compress(Array(BuiltinRoutes.sampleJSON.utf8), gzip: true))
        #expect(server.requests.last?.header("Accept-Encoding") == "identity")
    }

    @Test func progressBarOnATerminal() {
        server.route("/paced/file.bin") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 400000\r\n\r\n")
                for index in 0..<4 {
                    connection.write(TestData.bytes(count: 100_000, offset: index * 100_000))
                    Thread.sleep(forTimeInterval: 0.25)
                }
            }
        }
        let (output, status) = PTYRunner.run(["-d", "--output-dir", directory, server.url("/paced/file.bin")])
        #expect(status == 0)
        #expect(output.contains("%"))
        #expect(output.contains(" / 390.6 KiB"))
        #expect(output.contains("ETA"))
        #expect(output.contains("af: saved '\(directory)/file.bin' (390.6 KiB)"))
    }
}
