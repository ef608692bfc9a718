@_spi(Locking) import AFEngine
import CFileCalls
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// SPEC §7: downloads never lose or clobber data (in-process; the process-bound cases are
/// in EndToEndTests).
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

    /// A symbolic link where a resumed download's partial file (or the file to resume) is:
    /// af measured what it points to for the Range it asked for, sent the request, then
    /// refused to write through the link and said to run the same command with -c. Now
    /// nothing is sent, and what it points to is neither read nor written.
    @Test func aResumeThroughASymbolicLinkIsRefusedBeforeSending() throws {
        let victim = try TemporaryDirectory.write("not yours\n", named: "victim.txt", in: directory)
        let linked = directory + "/linked"
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: false)
        for (name, extra) in [("100.part", ["--output-dir=\(linked)"]), ("100", ["--output-dir=\(linked)"]), ("out.bin", ["-o", linked + "/out.bin"])] {
            let link = linked + "/" + name
            #expect(symlink(victim, link) == 0)
            let result = InProcessAF.run(["-d", "-c"] + extra + [server.url("/bytes/100")])
            #expect(result.status == 9, "\(name)")
            #expect(result.err == "af: error: cannot write '\(link)': it is a symbolic link; af never writes through one: remove it, or save under another name\n", "\(name)")
            unlink(link)
        }
        #expect(server.requests.isEmpty)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "not yours\n")
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
        // A combining mark after the slash or the dot makes one Swift character of the two.
        ("attachment; filename*=UTF-8''sub%2F%CC%81x.txt", "x.txt"),
        ("attachment; filename*=UTF-8''..%2F%CC%81..%2F%CC%81up.txt", "up.txt"),
        ("attachment; filename*=UTF-8''.%CC%81hidden", "hidden"),
    ])
    func hostileNamesLandInsideTheDirectory(disposition: String, expected: String) throws {
        server.serveRangedFile(size: Self.size, disposition: disposition)
        let result = InProcessAF.run(["-d", "--output-dir", directory, server.url("/file/evil")])
        #expect(result.status == 0, "\(result.err)")
        #expect(files() == [expected])
        #expect(contents(expected) == TestData.bytes(count: Self.size))
    }

    /// A file name of 251 to 255 bytes is good, but its `.part` is not: af sent the request,
    /// then failed to open the part file ("file name too long") and lost the answer. Now it is
    /// refused before anything is sent; a name of 250 bytes is saved.
    @Test func aNameTooLongForItsPartFileIsRefusedBeforeSending() throws {
        // 255 on the usual file systems; whatever the tests' temporary directory takes.
        let limit = pathconf(directory, Int32(_PC_NAME_MAX))
        try #require(limit > 5 && limit < 4000)
        for length in [limit - 4, limit, limit + 45] {
            let name = String(repeating: "b", count: length)
            let result = InProcessAF.run(["-o", directory + "/" + name, "post", server.url("/post"), "a=1"])
            #expect(result.status == 9, "\(length)")
            #expect(result.err == "af: error: cannot save '\(directory)/\(name)': its name is too long to download into, as af first writes NAME.part and '\(directory)' takes names of at most \(limit) bytes; name a shorter file\n", "\(length)")
        }
        #expect(server.requests.isEmpty)
        #expect(files().isEmpty)
        let fits = String(repeating: "b", count: limit - 5)
        #expect(InProcessAF.run(["-o", directory + "/" + fits, server.url("/bytes/10")]).status == 0)
        #expect(files() == [fits])
    }

    @Test func nameFromURLOrContentType() throws {
        server.route("/") { _, _ in .text("<p>hi</p>", type: "text/html") }
        #expect(InProcessAF.run(["-d", "--output-dir", directory, server.url("/")]).status == 0)
        #expect(InProcessAF.run(["-d", "--output-dir", directory, server.url("/bytes/10")]).status == 0)
        #expect(files() == ["10", "index.html"])
    }

    /// A HEAD response has no body to save: -d with HEAD saved an empty file under the
    /// resource's name and called it saved ("saved '10' (0 B)"). Nothing is sent.
    @Test func aHeadRequestIsNoDownload() throws {
        for arguments in [["-d", "head"], ["-d", "-c", "HEAD"]] {
            let result = InProcessAF.run(arguments + ["--output-dir", directory, server.url("/bytes/10")])
            #expect(result.status == 64)
            #expect(result.err == "af: error: -d (--download) saves the response body, and a HEAD response has none: drop -d to see the headers, or use GET\n")
        }
        #expect(files().isEmpty)
        #expect(server.requests.isEmpty)
        let batch = try TemporaryDirectory.write("\(server.url("/get"))\nhead \(server.url("/bytes/10")) -d\n", named: "lines.txt", in: try TemporaryDirectory.make())
        let lines = InProcessAF.run(["batch", "--output-dir", directory, batch])
        #expect(lines.status == 64)
        #expect(lines.err == "af: error: \(batch):2: -d (--download) saves the response body, and a HEAD response has none: drop -d to see the headers, or use GET\n")
        #expect(server.requests.isEmpty)
    }

    @Test func existingFilesAreNeverReplaced() throws {
        server.serveRangedFile(size: Self.size)
        let existing = directory + "/data.bin"
        try "precious".write(toFile: existing, atomically: false, encoding: .utf8)
        #expect(InProcessAF.run(["-d", "--output-dir", directory, server.url("/file/data.bin")]).status == 0)
        #expect(InProcessAF.run(["-d", "--output-dir", directory, server.url("/file/data.bin")]).status == 0)
        #expect(files() == ["data-1.bin", "data-2.bin", "data.bin"])
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "precious")
        let refused = InProcessAF.run(["-o", existing, server.url("/file/data.bin")])
        #expect(refused.status == 9)
        #expect(refused.err == "af: error: '\(existing)' exists; use --overwrite to replace it or -c to resume it\n")
        #expect(server.hits("/file/data.bin") == 2)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "precious")
        #expect(InProcessAF.run(["-o", existing, "--overwrite", server.url("/file/data.bin")]).status == 0)
        #expect(contents("data.bin") == TestData.bytes(count: Self.size))
    }

    /// A file the server names for each download: its head after `head` seconds with the
    /// body's first byte, the rest after `rest` more.
    private func serveNamedFiles() {
        server.route("/named") { request, _ in
            let name = request.queryValue("name") ?? "x"
            let body = request.queryValue("body") ?? "body"
            let head = Double(request.queryValue("head") ?? "0") ?? 0, rest = Double(request.queryValue("rest") ?? "0") ?? 0
            return .custom { connection in
                Thread.sleep(forTimeInterval: head)
                connection.write("HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename=\"\(name)\"\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body.prefix(1))")
                Thread.sleep(forTimeInterval: rest)
                connection.write(String(body.dropFirst()))
                connection.close()
            }
        }
    }

    /// One download's name can be another's `.part` file (a server names one `x.part` and
    /// another `x`): the first to finish was refused its name, which the other's partial file
    /// had taken meanwhile ("it appeared while downloading", exit 9, its file left as
    /// `x.part.part`). A download now claims its name with its `.part` file, so the second
    /// takes the next free name from the start.
    @Test func aNameThatIsAnotherDownloadsPartFileIsLeftToIt() throws {
        serveNamedFiles()
        // Line 1 is named at once and ends at 2.5 s; line 2 is named at 1.5 s and writes
        // until 4.5 s.
        let lines = try TemporaryDirectory.write("""
            -d --output-dir=\(directory) \(server.url("/named?name=x.part&body=PART&rest=2.5"))
            -d --output-dir=\(directory) \(server.url("/named?name=x&body=XFILE&head=1.5&rest=3"))

            """, named: "named.txt", in: try TemporaryDirectory.make(prefix: "af-dl-lines"))
        let result = InProcessAF.run(["batch", "--parallel=2", lines])
        #expect(result.status == 0, "\(result.err)")
        #expect(files() == ["x-1", "x.part"])
        #expect(contents("x.part") == Array("PART".utf8) && contents("x-1") == Array("XFILE".utf8))
    }

    /// A name the server gave that another program makes while the download runs is left to
    /// that program: the download takes the next free name, as it would have at the start,
    /// where it failed with exit 9.
    @Test func aNameMadeWhileDownloadingIsLeftToWhoMadeIt() throws {
        let directory = self.directory
        server.route("/taken") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename=\"y.txt\"\r\nContent-Length: 4\r\n\r\nb")
                // Once af has named its file and is writing it, another program makes the name.
                let started = Date()
                while !FileManager.default.fileExists(atPath: directory + "/y.txt.part"), Date().timeIntervalSince(started) < 10 {
                    Thread.sleep(forTimeInterval: 0.01)
                }
                _ = FileManager.default.createFile(atPath: directory + "/y.txt", contents: Data("theirs".utf8))
                connection.write("ody")
                connection.close()
            }
        }
        let result = InProcessAF.run(["-d", "--output-dir=\(directory)", server.url("/taken")])
        #expect(result.status == 0)
        let lines = result.err.split(separator: "\n").dropFirst(3).map(String.init)
        #expect(lines.first == "af: '\(directory)/y.txt' appeared while downloading; saving this one as '\(directory)/y-1.txt'", "\(result.err)")
        #expect(lines.dropFirst().first?.hasPrefix("af: saved '\(directory)/y-1.txt' (4 B)") == true, "\(result.err)")
        #expect(files() == ["y-1.txt", "y.txt"])
        #expect(contents("y.txt") == Array("theirs".utf8) && contents("y-1.txt") == Array("body".utf8))
    }

    /// `-d -o DIR` (wget's -P and curl's --output-dir take a directory): refused before
    /// anything is sent, with the option that does that.
    @Test func aDirectoryGivenToDashOIsPointedToOutputDir() throws {
        server.serveRangedFile(size: Self.size)
        let folder = directory + "/into"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let refused = InProcessAF.run(["-d", "-o", folder, server.url("/file/x")])
        #expect(refused.status == 9)
        #expect(refused.err == "af: error: '\(folder)' is a directory; name a file; to save into it under the name from the server or URL, give --output-dir=\(folder) instead of -o\n")
        #expect(server.requests.isEmpty)
        // Without -d, -o writes the body to a file: no directory option to point to.
        #expect(InProcessAF.run(["-o", folder, server.url("/file/x")]).err == "af: error: '\(folder)' is a directory; name a file\n")
        #expect(InProcessAF.run(["-d", "--output-dir=\(folder)", server.url("/file/x")]).status == 0)
        #expect(FileManager.default.fileExists(atPath: folder + "/x"))
        // A name that ends with '/' is a directory by its spelling, there or not: --create-dirs
        // made it, and then it failed as a directory, leaving the new one behind.
        let missing = directory + "/new/"
        let spelled = InProcessAF.run(["--create-dirs", "-o", missing, server.url("/file/x")])
        #expect(spelled.status == 9)
        #expect(spelled.err == "af: error: '\(missing)' ends with '/', so it names a directory; name a file\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(InProcessAF.run(["-d", "-o", missing, server.url("/file/x")]).err
            == "af: error: '\(missing)' ends with '/', so it names a directory; name a file; to save into it under the name from the server or URL, give --output-dir=\(missing) instead of -o\n")
        #expect(server.requests.count == 1, "only the --output-dir download was sent")
    }

    @Test func outputDirectoryMustExistUnlessCreated() {
        server.serveRangedFile(size: Self.size)
        let nested = directory + "/a/b"
        let refused = InProcessAF.run(["-d", "--output-dir", nested, server.url("/file/x")])
        #expect(refused.status == 9)
        #expect(refused.err == "af: error: directory '\(nested)' does not exist; add --create-dirs to create it\n")
        #expect(server.requests.isEmpty)
        #expect(InProcessAF.run(["-d", "--create-dirs", "--output-dir", nested, server.url("/file/x")]).status == 0)
        #expect(FileManager.default.fileExists(atPath: nested + "/x"))
        // -o with a file name that starts with a combining mark: the slash before it still
        // ends the directory that --create-dirs makes.
        let marked = directory + "/c/d/\u{301}e.bin"
        let created = InProcessAF.run(["-d", "--create-dirs", "-o", marked, server.url("/file/x")])
        #expect(created.status == 0, "\(created.err)")
        #expect(FileManager.default.fileExists(atPath: marked))
        // A directory whose name starts with a combining mark, in the middle of the path: each
        // slash still separates a directory to create.
        let markedDirectory = directory + "/f/\u{301}g/h"
        let made = InProcessAF.run(["-d", "--create-dirs", "--output-dir", markedDirectory, server.url("/file/x")])
        #expect(made.status == 0, "\(made.err)")
        #expect(FileManager.default.fileExists(atPath: markedDirectory + "/x"))
    }

    @Test func interruptedDownloadResumesByteIdentical() throws {
        server.serveRangedFile(size: Self.size, drop: 100_000)
        let target = directory + "/big.bin"
        let broken = InProcessAF.run(["-o", target, server.url("/file/big.bin")])
        #expect(broken.status == 1)
        #expect(broken.err.hasSuffix("; the partial download is in '\(target).part' (97.7 KiB): run the same command with -c to resume\n"))
        #expect(files() == ["big.bin.part"])
        #expect(contents("big.bin.part")?.count == 100_000)
        let resumed = InProcessAF.run(["-o", target, "-c", server.url("/file/big.bin")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(files() == ["big.bin"])
        let identical = contents("big.bin") == TestData.bytes(count: Self.size)
        #expect(identical)
        #expect(server.requests.last?.header("Range") == "bytes=100000-")
    }

    @Test func downloadResumesWithDashDAndContinue() throws {
        server.serveRangedFile(size: Self.size, drop: 50_000)
        #expect(InProcessAF.run(["-d", "--output-dir", directory, server.url("/file/part.iso")]).status == 1)
        #expect(files() == ["part.iso.part"])
        let resumed = InProcessAF.run(["-d", "-c", "--output-dir", directory, server.url("/file/part.iso")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(resumed.err.contains("af: saved 'part.iso'") || resumed.err.contains("/part.iso' (293.0 KiB)"))
        #expect(resumed.err.contains("resumed after 48.8 KiB"))
        let identical = contents("part.iso") == TestData.bytes(count: Self.size)
        #expect(identical)
    }

    /// `-c` without `-o` resumes the name from the URL, so after a download the server named
    /// ("real.iso" for /file/get) the advice "run the same command with -c" downloaded it
    /// whole again under the URL's name. The advice names the file.
    @Test func theAdviceToResumeNamesAFileTheServerNamed() throws {
        server.serveRangedFile(size: Self.size, drop: 50_000, disposition: "attachment; filename=\"real.iso\"")
        let first = InProcessAF.run(["-d", "--output-dir", directory, server.url("/file/get")])
        #expect(first.status == 1)
        #expect(first.err.hasSuffix("; the partial download is in '\(directory)/real.iso.part' (48.8 KiB): run the same command with -c -o real.iso to resume\n"), "\(first.err)")
        let resumed = InProcessAF.run(["-d", "-c", "-o", "real.iso", "--output-dir", directory, server.url("/file/get")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(resumed.err.contains("resumed after 48.8 KiB"))
        #expect(files() == ["real.iso"])
        let identical = contents("real.iso") == TestData.bytes(count: Self.size)
        #expect(identical)
    }

    @Test func flakyServerWithRetryResumesMidway() throws {
        server.serveRangedFile(size: Self.size, drop: 123_456)
        let result = InProcessAF.run(["-d", "--retry=2", "--retry-delay=0.1", "--output-dir", directory, server.url("/file/flaky.bin")])
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

    /// The first 1,000 bytes of `name` as its `.part`, resumed (`-d -c`, and `options`) from a
    /// server that answers ranges with `answer`; the run, the `.part` path and the whole file.
    /// Resumes `name` from 1000 bytes left in `name.part`, or with `underItsName` in `name`
    /// itself (what `-c` moves aside while it resumes).
    private func resume(_ name: String, answer: RangeAnswer, options: [String] = [], underItsName: Bool = false) -> (result: AFResult, part: String, whole: [UInt8]) {
        server.serveRangedFile(size: Self.size, answer: answer)
        let part = directory + "/" + name + ".part"
        let whole = TestData.bytes(count: Self.size)
        _ = FileManager.default.createFile(atPath: underItsName ? directory + "/" + name : part, contents: Data(whole[0..<1000]))
        let result = InProcessAF.run(["-d", "-c"] + options + ["--output-dir", directory, server.url("/file/" + name)])
        return (result, part, whole)
    }

    /// A resumed body that ended early within a matching Content-Length, short of the range
    /// its Content-Range announced, was saved as the complete file (exit 0). Now the attempt
    /// fails as a truncated body: retried and resumed from what arrived, and kept as `.part`
    /// for a later `-c` when the retries run out.
    @Test func aResumedBodyShortOfItsRangeIsNotSavedAsComplete() throws {
        let (result, part, whole) = resume("short.bin", answer: .shortBody(bytes: 100), options: ["--retry=2", "--retry-delay=0.1"])
        #expect(result.status == 1)
        #expect(result.err.hasSuffix("\naf: error: the resumed body ended 298700 bytes short of the range its Content-Range announced (bytes 1200-299999) (after 3 attempts); the partial download is in '\(part)' (1.3 KiB): run the same command with -c to resume\n"), "\(result.err)")
        #expect(server.requests(to: "/file/short.bin").map { $0.header("Range") } == ["bytes=1000-", "bytes=1100-", "bytes=1200-"])
        #expect(files() == ["short.bin.part"])
        let kept = contents("short.bin.part") == Array(whole[0..<1300])
        #expect(kept)
        // Nothing was lost: an honest server finishes it.
        server.serveRangedFile(size: Self.size)
        #expect(InProcessAF.run(["-d", "-c", "--output-dir", directory, server.url("/file/short.bin")]).status == 0)
        let identical = contents("short.bin") == whole
        #expect(identical)
    }

    /// A resumed body longer than its Content-Range: the bytes past the range are not kept, so
    /// resuming continues where the range ended.
    @Test func aResumedBodyPastItsRangeIsCutBack() throws {
        let (result, part, whole) = resume("long.bin", answer: .longBody(announcing: 100))
        #expect(result.status == 1)
        #expect(result.err.hasSuffix("\naf: error: the resumed body ran 298900 bytes past the range its Content-Range announced (bytes 1000-1099); they were not kept; the partial download is in '\(part)' (1.1 KiB): run the same command with -c to resume\n"), "\(result.err)")
        let kept = contents("long.bin.part") == Array(whole[0..<1100])
        #expect(kept)
    }

    /// Asked for all the rest, a server sent one range of it: the file is not whole, so the
    /// attempt fails as a truncated body and a retry resumes from where that range ended.
    @Test func aResumedRangeShortOfTheResourceIsResumedAgain() throws {
        let (result, part, _) = resume("capped.bin", answer: .contentRange("bytes 1000-299999/300010"))
        #expect(result.status == 1)
        #expect(result.err.hasSuffix("\naf: error: the server resumed with bytes 1000-299999 of the resource's 300010 bytes, not all the rest; the partial download is in '\(part)' (293.0 KiB): run the same command with -c to resume\n"), "\(result.err)")
        #expect(files() == ["capped.bin.part"])
    }

    /// A file resumed under its own name (not a `.part`) is named so when the server resumes
    /// it wrongly: the messages named the `.part` it had been moved to, which was moved back.
    @Test(arguments: [
        ("bytes 0-299999/300000", "the server resumed at byte 0 but '%@' holds 1000 bytes; remove it to start over"),
        ("bytes 1000-999/300000", "the server resumed with an invalid range ('Content-Range: bytes 1000-999/300000'); '%@' was kept as it was (1000 bytes): try again later, or remove it to start over"),
    ])
    func aFileResumedUnderItsNameIsNamedWhenTheResumeIsRefused(value: String, message: String) throws {
        let name = "own-\(UUID().uuidString).bin"
        let (result, _, whole) = resume(name, answer: .contentRange(value), options: ["--check-status"], underItsName: true)
        #expect(result.status == 9)
        let expected = message.replacingOccurrences(of: "%@", with: directory + "/" + name)
        #expect(result.err.hasSuffix("\naf: error: \(expected)\n"), "\(result.err)")
        #expect(files().filter { $0.hasPrefix(name) } == [name])
        let kept = contents(name) == Array(whole[0..<1000])
        #expect(kept)
    }

    /// RFC 9110 §14.4: a Content-Range that ends before it starts, or at or past the length it
    /// gives, is invalid and its content ignored; af appended it.
    @Test(arguments: ["bytes 1000-999/300000", "bytes 1000-299999/5000"])
    func anInvalidContentRangeIsRefused(value: String) throws {
        let (result, part, whole) = resume("invalid.bin", answer: .contentRange(value))
        #expect(result.status == 9)
        #expect(result.err.hasSuffix("\naf: error: the server resumed with an invalid range ('Content-Range: \(value)'); '\(part)' was kept as it was (1000 bytes): try again later, or remove it to start over\n"), "\(result.err)")
        let kept = contents("invalid.bin.part") == Array(whole[0..<1000])
        #expect(kept)
    }

    @Test func serverIgnoringTheRangeRestartsWithANotice() throws {
        server.serveRangedFile(size: Self.size, ignoreRange: true)
        let part = directory + "/again.bin.part"
        _ = FileManager.default.createFile(atPath: part, contents: Data(repeating: 7, count: 1000))
        let result = InProcessAF.run(["-d", "-c", "--output-dir", directory, server.url("/file/again.bin")])
        #expect(result.status == 0)
        #expect(result.err.contains("af: the server did not resume the download; starting '\(directory)/again.bin' from the beginning\n"))
        let identical = contents("again.bin") == TestData.bytes(count: Self.size)
        #expect(identical)
    }

    @Test func completeFileAnswered416IsSuccess() throws {
        server.serveRangedFile(size: Self.size)
        let target = directory + "/done.bin"
        _ = FileManager.default.createFile(atPath: target, contents: Data(TestData.bytes(count: Self.size)))
        let result = InProcessAF.run(["-d", "-c", "-o", target, server.url("/file/done.bin")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("was already complete"))
        #expect(files() == ["done.bin"])
        #expect(server.requests.last?.header("Range") == "bytes=\(Self.size)-")
    }

    @Test func checksumsVerifyBeforeTheRename() throws {
        server.serveRangedFile(size: Self.size)
        let sha = Digests.sha256Hex(TestData.bytes(count: Self.size))
        let good = InProcessAF.run(["-d", "--checksum=sha256:\(sha)", "--output-dir", directory, server.url("/file/good.bin")])
        #expect(good.status == 0, "\(good.err)")
        #expect(good.err.contains("; sha256 verified\n"))
        #expect(files() == ["good.bin"])
        let wrong = String(repeating: "0", count: 64)
        let bad = InProcessAF.run(["-d", "--checksum=sha256:\(wrong)", "--output-dir", directory, server.url("/file/bad.bin")])
        #expect(bad.status == 9)
        #expect(bad.err.hasSuffix("af: error: sha256 of the download is \(sha), not \(wrong); nothing was saved as '\(directory)/bad.bin'; check the checksum and where it came from\n"))
        #expect(files() == ["good.bin"])
        let malformed = InProcessAF.run(["-d", "--checksum=sha256:xyz", server.url("/file/x")])
        #expect(malformed.status == 64)
        #expect(malformed.err == "af: error: invalid value 'sha256:xyz' for --checksum: a sha256 digest has 64 hexadecimal digits, not 3\n")
    }

    /// A checksum is checked as the option is read: --offline and --curl took any value, and
    /// only a download said what was wrong with it. A digest as people paste it gets a word
    /// on what to change: a `sha256sum` line with its file name, the CR of a file with CRLF
    /// line ends, a digest without its function's name.
    @Test func aChecksumIsCheckedAsItIsRead() {
        let sha = String(repeating: "ab", count: 32)
        let md5 = String(repeating: "cd", count: 16)
        let cases: [(String, String)] = [
            ("sha256:\(sha)  file.iso", "a sha256 digest has 64 hexadecimal digits, not 74; give the digest alone, without the file name that follows it in a sha256sum line"),
            ("sha256:\(sha)\r", "a sha256 digest has 64 hexadecimal digits, not 65; the last is a carriage return, which a file with CRLF line ends leaves (tr -d '\\r')"),
            (sha, "expected ALGO:HEX; 64 hexadecimal digits are a sha256 digest: give sha256:\(sha)"),
            (md5, "expected ALGO:HEX; 32 hexadecimal digits are an md5 digest: give md5:\(md5)"),
            ("crc32:00", "expected ALGO:HEX with ALGO one of sha256, sha1, sha512, md5"),
        ]
        for (value, problem) in cases {
            for mode in ["--offline", "--curl"] {
                let result = InProcessAF.run([mode, "-d", "--checksum=\(value)", server.url("/file/x")])
                #expect(result.status == 64)
                #expect(result.err == "af: error: invalid value '\(value.replacingOccurrences(of: "\r", with: "\\r"))' for --checksum: \(problem)\n", "\(result.err)")
                #expect(result.out.isEmpty)
            }
        }
        #expect(InProcessAF.run(["--offline", "-d", "--checksum=SHA256:\(sha.uppercased())", server.url("/file/x")]).status == 0)
        #expect(server.requests.isEmpty)
    }

    /// A resume that fails before adding a byte (refused, an error page, a range the server
    /// refused) left the user's file renamed to NAME.part; it goes back under its name.
    @Test func aResumeThatAddsNothingLeavesTheFileWhereItWas() throws {
        server.serveRangedFile(size: 1000)
        let target = directory + "/kept.bin"
        let bytes = TestData.bytes(count: 2000)
        #expect(FileManager.default.createFile(atPath: target, contents: Data(bytes)))
        let refused = InProcessAF.run(["-c", "-o", target, "http://127.0.0.1:1/kept.bin"])
        #expect(refused.status == 1)
        #expect(refused.err == "af: error: connection refused by 127.0.0.1:1; is the server running?\n")
        let larger = InProcessAF.run(["-d", "-c", "-o", target, server.url("/file/kept.bin")])
        #expect(larger.status == 9)
        #expect(larger.err.hasSuffix("af: error: the server refused the range (416) but the resource has 1000 bytes and '\(target)' holds 2000; remove it to start over\n"))
        #expect(files() == ["kept.bin"])
        #expect(contents("kept.bin") == bytes)
        // NAME and NAME.part both there: the part was resumed, then refused its name at the
        // end ("it appeared while downloading"). Now nothing is sent.
        #expect(FileManager.default.createFile(atPath: target + ".part", contents: Data(bytes[..<500])))
        let requests = server.requests.count
        let both = InProcessAF.run(["-c", "-o", target, server.url("/file/kept.bin")])
        #expect(both.status == 9)
        #expect(both.err == "af: error: both '\(target)' and '\(target).part' exist: resuming '\(target).part' would end by replacing '\(target)', which is not allowed; remove one of them, or add --overwrite to allow it\n")
        #expect(server.requests.count == requests)
        let replaced = InProcessAF.run(["-c", "--overwrite", "-o", target, server.url("/file/kept.bin")])
        #expect(replaced.status == 0, "\(replaced.err)")
        #expect(files() == ["kept.bin"])
        #expect(contents("kept.bin") == Array(bytes[..<500]) + Array(TestData.bytes(count: 1000)[500...]))
        // Named from the URL (-d -c without -o), the same advice.
        #expect(FileManager.default.createFile(atPath: target + ".part", contents: Data(bytes[..<500])))
        let named = InProcessAF.run(["-d", "-c", "--output-dir", directory, server.url("/file/kept.bin")])
        #expect(named.status == 9)
        #expect(named.err.hasSuffix("which is not allowed; remove one of them, or add --overwrite to allow it\n"))
    }

    /// A partial download an earlier run left (telling the user to resume it with -c) was
    /// truncated by `-o NAME` without -c; now that run is refused before sending.
    @Test func anEarlierPartialDownloadIsNotTruncatedWithoutResume() throws {
        server.serveRangedFile(size: 1000)
        let target = directory + "/p.bin"
        let partial = Array(TestData.bytes(count: 1000)[..<400])
        #expect(FileManager.default.createFile(atPath: target + ".part", contents: Data(partial)))
        let refused = InProcessAF.run(["-o", target, server.url("/file/p.bin")])
        #expect(refused.status == 9)
        #expect(refused.err == "af: error: '\(target).part' holds 400 B of an earlier download of '\(target)'; use --overwrite to replace it or -c to resume it\n")
        #expect(server.requests.isEmpty)
        #expect(contents("p.bin.part") == partial)
        let resumed = InProcessAF.run(["-c", "-o", target, server.url("/file/p.bin")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(contents("p.bin") == TestData.bytes(count: 1000))
        // Named by the server, a download takes the next free name, and says why.
        #expect(FileManager.default.createFile(atPath: directory + "/q.bin.part", contents: Data(partial)))
        let named = InProcessAF.run(["-d", "--output-dir", directory, server.url("/file/q.bin")])
        #expect(named.status == 0, "\(named.err)")
        #expect(named.err.contains("af: '\(directory)/q.bin.part' holds 400 B of an earlier download of '\(directory)/q.bin'; saving this one as '\(directory)/q-1.bin' (resuming would continue that part)\n"))
        #expect(contents("q.bin.part") == partial)
        #expect(contents("q-1.bin") == TestData.bytes(count: 1000))
    }

    /// `-c -o FILE` saved whatever answer came, as `-o` alone does: a 404 replaced the
    /// partial file with the error page, exit 0, and a 503 before a retry that would have
    /// resumed made the retry start from zero. Only a successful body continues a resume.
    @Test func aResumeSavesOnlyASuccessfulBody() throws {
        let whole = TestData.bytes(count: 3000)
        server.route("/flaky") { request, hit in
            guard hit > 1 else { return .response(status: 503, body: Array("busy".utf8)) }
            let start = Int(request.header("Range")?.dropFirst(6).split(separator: "-").first ?? "") ?? 0
            return .response(status: start > 0 ? 206 : 200, headers: start > 0 ? [("Content-Range", "bytes \(start)-2999/3000")] : [],
                             body: Array(whole[start...]))
        }
        let target = directory + "/r.bin"
        #expect(FileManager.default.createFile(atPath: target, contents: Data(whole[..<2000])))
        let missing = InProcessAF.run(["-c", "-o", target, server.url("/status/404")])
        #expect(missing.status == 4)
        #expect(missing.err == "af: error: server answered 404 Not Found\n")
        // Nothing was added, so the file is back under its name (the run moved it to r.bin.part).
        #expect(contents("r.bin") == Array(whole[..<2000]))
        #expect(files() == ["r.bin"])
        let resumed = InProcessAF.run(["-c", "--retry=1", "--retry-delay=0.01", "-o", target, server.url("/flaky")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(server.requests(to: "/flaky").map { $0.header("Range") } == ["bytes=2000-", "bytes=2000-"])
        let same = contents("r.bin") == whole
        #expect(same, "the file is the resource, resumed after 2000 bytes")
    }

    /// `-o FILE` saves whatever answer the request ends with, but a retried 503's page went
    /// into the `.part` file: the next attempt asked for a range after it (12 bytes), and a
    /// server that honoured it had the file saved as the page followed by the rest of the
    /// resource, exit 0; a 503 after a body cut short threw away what had come. An answer
    /// that is retried is not saved, and only a successful body is resumed.
    @Test func aRetriedAnswerIsNotSavedIntoTheFile() throws {
        let whole = TestData.bytes(count: 3000)
        server.route("/busy") { request, hit in
            if hit == 1 || hit == 3 { return .response(status: 503, headers: [("Retry-After", "0")], body: Array("busy, sorry\n".utf8)) }
            let start = Int(request.header("Range")?.dropFirst(6).split(separator: "-").first ?? "") ?? 0
            guard hit > 2 else { return .cut(Array(whole[..<1000]), announcing: 3000, headers: [("ETag", "\"v1\"")]) }
            return .response(status: 206, headers: [("Content-Range", "bytes \(start)-2999/3000"), ("ETag", "\"v1\"")], body: Array(whole[start...]))
        }
        let target = directory + "/busy.bin"
        let result = InProcessAF.run(["--retry=3", "--retry-delay=0.01", "-o", target, server.url("/busy")])
        #expect(result.status == 0, "\(result.err)")
        #expect(!result.err.contains("did not resume"), "\(result.err)")
        #expect(server.requests(to: "/busy").map { $0.header("Range") } == [nil, nil, "bytes=1000-", "bytes=1000-"])
        let same = contents("busy.bin") == whole
        #expect(same)
        #expect(files() == ["busy.bin"])
        // The answer the request ends with is saved, as without retries.
        let ended = InProcessAF.run(["--retry=1", "--retry-delay=0.01", "-o", directory + "/page.txt", server.url("/status/503")])
        #expect(ended.status == 0, "\(ended.err)")
        #expect(files() == ["busy.bin", "page.txt"])
        #expect(FileManager.default.contents(atPath: directory + "/page.txt")?.isEmpty == false)
    }

    /// Without a validator, a retry asks for a range without If-Range, and a resource that
    /// changed meanwhile had its rest spliced onto the start of the old one. A range of a
    /// resource of another length than the one begun is refused, the part kept.
    @Test func aRangeOfAResourceOfAnotherLengthIsNotSpliced() throws {
        server.route("/grew") { _, hit in
            guard hit > 1 else { return .cut(TestData.bytes(count: 1000), announcing: 3000) }
            return .response(status: 206, headers: [("Content-Range", "bytes 1000-3999/4000")], body: Array(TestData.bytes(count: 4000)[1000...]))
        }
        let target = directory + "/grew.bin"
        let result = InProcessAF.run(["--retry=2", "--retry-delay=0.01", "-o", target, server.url("/grew")])
        #expect(result.status == 9)
        #expect(result.err.hasSuffix("af: error: the server resumed a resource of 4000 bytes, but '\(target).part' holds the start of one of 3000: it changed since; remove it to start over (after 2 attempts)\n"), "\(result.err)")
        #expect(server.requests(to: "/grew").map { $0.header("Range") } == [nil, "bytes=1000-"])
        let kept = contents("grew.bin.part") == TestData.bytes(count: 1000)
        #expect(kept)
    }

    /// A download cut short in one run and resumed by another (`-d`, then `-d -c`) after the
    /// resource changed: the second run knew no validator, asked for the rest without
    /// `If-Range`, and spliced the new version's rest onto the old one's start, exit 0. The
    /// `.part` file now keeps the validator and the length (extended attributes), so the
    /// resumed request carries `If-Range` and the changed resource starts over; the saved
    /// file keeps no marks. Where the file system keeps no user attributes, nothing is known.
    @Test func aResourceThatChangedBetweenRunsIsNotSpliced() throws {
        let version = Protected(1)
        server.route("/doc.bin") { request, _ in
            let current = version.value
            let body = [UInt8](repeating: UInt8(current), count: 3000)
            let etag = "\"v\(current)\""
            if let range = request.header("Range"), request.header("If-Range").map({ $0 == etag }) ?? true,
               let start = Int(range.dropFirst("bytes=".count).prefix { $0 != "-" }) {
                return .response(status: 206, headers: [("ETag", etag), ("Content-Range", "bytes \(start)-2999/3000")], body: Array(body[start...]))
            }
            return current == 1 ? .cut(Array(body[..<1000]), announcing: 3000, headers: [("ETag", etag)]) : .response(status: 200, headers: [("ETag", etag)], body: body)
        }
        guard userAttributesWork(in: directory) else { return }
        let first = InProcessAF.run(["-d", "--output-dir", directory, server.url("/doc.bin")])
        #expect(first.status == 1)
        #expect(files() == ["doc.bin.part"])
        version.write { $0 = 2 }
        let resumed = InProcessAF.run(["-d", "-c", "--output-dir", directory, server.url("/doc.bin")])
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(server.requests(to: "/doc.bin").last?.header("Range") == "bytes=1000-")
        #expect(server.requests(to: "/doc.bin").last?.header("If-Range") == "\"v1\"")
        #expect(resumed.err.contains("af: the server did not resume the download; starting '\(directory)/doc.bin' from the beginning\n"), "\(resumed.err)")
        let whole = contents("doc.bin") == [UInt8](repeating: 2, count: 3000)
        #expect(whole)
        #expect(files() == ["doc.bin"])
        #expect(getxattr(directory + "/doc.bin", "user.af.validator", nil, 0) < 0)

        // A server that ignores If-Range, resuming a resource of another length: refused by
        // the length the first run kept, the part left as it was.
        server.route("/grown.bin") { _, hit in
            guard hit > 1 else { return .cut(TestData.bytes(count: 1000), announcing: 3000) }
            return .response(status: 206, headers: [("Content-Range", "bytes 1000-3999/4000")], body: Array(TestData.bytes(count: 4000)[1000...]))
        }
        #expect(InProcessAF.run(["-d", "--output-dir", directory, server.url("/grown.bin")]).status == 1)
        let grown = InProcessAF.run(["-d", "-c", "--output-dir", directory, server.url("/grown.bin")])
        #expect(grown.status == 9)
        #expect(grown.err.hasSuffix("af: error: the server resumed a resource of 4000 bytes, but '\(directory)/grown.bin.part' holds the start of one of 3000: it changed since; remove it to start over\n"), "\(grown.err)")
        let kept = contents("grown.bin.part") == TestData.bytes(count: 1000)
        #expect(kept)
    }

    /// Marks on a `.part` that af would not have written (a validator with a line break,
    /// which would become a header of its own; a length that is no number) are ignored: the
    /// resume asks for the rest without If-Range, and sends no header from them.
    @Test func hostileMarksOnAPartFileAreIgnored() throws {
        server.serveRangedFile(size: Self.size)
        guard userAttributesWork(in: directory) else { return }
        let part = directory + "/marked.bin.part"
        _ = FileManager.default.createFile(atPath: part, contents: Data(TestData.bytes(count: Self.size)[..<1000]))
        let validator = "\"v1\"\r\nX-Injected: 1"
        #expect(setxattr(part, "user.af.validator", validator, validator.utf8.count, 0) == 0)
        #expect(setxattr(part, "user.af.length", "-5", 2, 0) == 0)
        let result = InProcessAF.run(["-d", "-c", "--output-dir", directory, server.url("/file/marked.bin")])
        #expect(result.status == 0, "\(result.err)")
        let request = try #require(server.requests(to: "/file/marked.bin").last)
        #expect(request.header("Range") == "bytes=1000-")
        #expect(request.header("If-Range") == nil)
        #expect(request.header("X-Injected") == nil)
        let whole = contents("marked.bin") == TestData.bytes(count: Self.size)
        #expect(whole)
    }

    /// Whether files in `directory` keep user extended attributes (ext4, XFS, Btrfs, tmpfs
    /// from Linux 6.6): without them a `.part` file keeps nothing for the next run.
    private func userAttributesWork(in directory: String) -> Bool {
        let probe = directory + "/.xattr-probe"
        _ = FileManager.default.createFile(atPath: probe, contents: Data())
        defer { unlink(probe) }
        return setxattr(probe, "user.af.probe", "1", 1, 0) == 0
    }

    /// `--max-filesize` looked at the part a resumed answer brings: 50,000 bytes on top of
    /// 250,000 on disk passed a 260,000-byte limit and saved a file of 300,000. The limit
    /// bounds the file resuming makes, by the Content-Range the answer gives.
    @Test func aResumeCannotMakeAFileOverTheSizeLimit() throws {
        server.serveRangedFile(size: 300_000)
        let whole = TestData.bytes(count: 300_000)
        let target = directory + "/big.bin"
        #expect(FileManager.default.createFile(atPath: target, contents: Data(whole[..<250_000])))
        let refused = InProcessAF.run(["-c", "-o", target, "--max-filesize=260000", server.url("/file/big.bin")])
        #expect(refused.status == 1)
        #expect(refused.err == "af: error: response body exceeds --max-filesize (260000 bytes); raise it if you expect a body this large\n")
        let kept = contents("big.bin") == Array(whole[..<250_000])
        #expect(kept)
        #expect(files() == ["big.bin"])
        let resumed = InProcessAF.run(["-c", "-o", target, "--max-filesize=300000", server.url("/file/big.bin")])
        #expect(resumed.status == 0, "\(resumed.err)")
        let same = contents("big.bin") == whole
        #expect(same)
    }

    /// A mistyped checksum deleted the file a resume was pointed at: a complete one (416),
    /// or the partial one with what this run added. Bytes from before the run are kept.
    @Test func aChecksumMismatchKeepsWhatWasOnDiskBeforeTheRun() throws {
        server.serveRangedFile(size: Self.size)
        let whole = TestData.bytes(count: Self.size)
        let wrong = String(repeating: "1", count: 64)
        let sha = Digests.sha256Hex(whole)
        let target = directory + "/c.bin"
        #expect(FileManager.default.createFile(atPath: target, contents: Data(whole)))
        let complete = InProcessAF.run(["-c", "-o", target, "--checksum=sha256:\(wrong)", server.url("/file/c.bin")])
        #expect(complete.status == 9)
        #expect(complete.err == "af: error: sha256 of the download is \(sha), not \(wrong); nothing was saved as '\(target)', and '\(target).part' keeps the "
                + "\(Self.size) bytes (\(Self.size) of them there before this run); check the checksum and where it came from, or remove it to download the file whole\n")
        let kept = contents("c.bin.part") == whole
        #expect(kept)
        #expect(files() == ["c.bin.part"])
        #expect(FileManager.default.createFile(atPath: target + ".part", contents: Data(whole[..<1000])))
        let resumed = InProcessAF.run(["-c", "-o", target, "--checksum=sha256:\(wrong)", server.url("/file/c.bin")])
        #expect(resumed.status == 9)
        #expect(resumed.err.contains("keeps the \(Self.size) bytes (1000 of them there before this run)"))
        let grown = contents("c.bin.part") == whole
        #expect(grown)
    }

    /// A standard stream cannot be taken back or resumed; the messages name the stream it
    /// is (standard error was called standard output) without quoting it as a path.
    @Test func aStandardStreamIsNamedAsOne() throws {
        server.serveRangedFile(size: Self.size)
        let wrong = String(repeating: "0", count: 64)
        let sha = Digests.sha256Hex(TestData.bytes(count: Self.size))
        let written = InProcessAF.run(["-o", "-", "--checksum=sha256:\(wrong)", server.url("/file/s.bin")])
        #expect(written.status == 9)
        let whole = written.stdout == TestData.bytes(count: Self.size)
        #expect(whole, "the body is written as it comes")
        #expect(written.err == "af: error: sha256 of the download is \(sha), not \(wrong); what was written to standard output is not what you expected\n")
        for (name, stream) in [("-", "standard output"), ("/dev/stderr", "standard error")] {
            let resumed = InProcessAF.run(["-c", "-o", name, server.url("/file/s.bin")])
            #expect(resumed.status == 9)
            #expect(resumed.err == "af: error: \(stream) cannot be resumed; name a file to resume\n")
        }
    }

    @Test func nonSuccessIsNotSaved() {
        let result = InProcessAF.run(["-d", "--output-dir", directory, server.url("/status/404")])
        #expect(result.status == 4)
        #expect(files().isEmpty)
    }

    @Test func outputFileWithoutDownloadSavesTheBodyExactly() {
        let result = InProcessAF.run(["-o", directory + "/page.json", server.url("/gzip")])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(contents("page.json") == Deflate.compress(Array(BuiltinRoutes.sampleJSON.utf8), gzip: true))
        #expect(server.requests.last?.header("Accept-Encoding") == "identity")
        #expect(result.err == "af: warning: the server sent the body gzip-encoded (Content-Encoding: gzip) though af asked for it unencoded; "
            + "'\(directory)/page.json' holds it as sent (gzip -dc \(directory)/page.json decodes it)\n")
    }

    /// A body sent content-coded though the download asked for it unencoded is saved as sent
    /// (as curl and wget save it), and said to be, unless its name says it is such a file.
    @Test func anEncodedBodyIsSavedAsSentAndSaidToBe() {
        let downloaded = InProcessAF.run(["-d", "--output-dir", directory, server.url("/gzip?as=x-gzip")])
        #expect(downloaded.status == 0)
        #expect(downloaded.err.hasSuffix("af: warning: the server sent the body x-gzip-encoded (Content-Encoding: x-gzip) though af asked for it unencoded; "
            + "'\(directory)/gzip' holds it as sent (gzip -dc \(directory)/gzip decodes it)\n"))
        let streamed = InProcessAF.run(["-o", "-", server.url("/gzip?as=br")])
        #expect(streamed.out.isEmpty == false)
        #expect(streamed.err == "af: warning: the server sent the body br-encoded (Content-Encoding: br) though af asked for it unencoded; standard output got it as sent (pipe it to brotli -dc)\n")
        // An archive served with Content-Encoding: gzip is the file itself.
        let archive = InProcessAF.run(["-o", directory + "/site.tar.gz", server.url("/gzip")])
        #expect(archive.status == 0)
        #expect(archive.err.isEmpty)
        #expect(InProcessAF.run(["-q", "-o", directory + "/quiet.json", server.url("/gzip")]).err.isEmpty)
        // A checksum that matched the bytes as sent: they are the ones expected.
        let sha = Digests.sha256Hex(Deflate.compress(Array(BuiltinRoutes.sampleJSON.utf8), gzip: true))
        let verified = InProcessAF.run(["-o", directory + "/verified.json", "--checksum=sha256:\(sha)", server.url("/gzip")])
        #expect(verified.status == 0)
        #expect(verified.err.isEmpty)
        #expect(InProcessAF.run(["-o", directory + "/plain.json", server.url("/json")]).err.isEmpty)
    }
}
