@testable import AFEngine
import AFTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A finished download gets its name without replacing a file (`FileCalls`), also where the
/// file system makes no hard links (FAT and exFAT sticks, some FUSE and network file systems),
/// and a written file's delayed write error (NFS, SMB: at `fsync` or `close`) is not lost.
@Suite struct FileCallsTests {
    let directory: String

    init() throws {
        directory = try TemporaryDirectory.make(prefix: "af-placing")
    }

    private func write(_ text: String, _ name: String) throws {
        _ = try TemporaryDirectory.write(text, named: name, in: directory)
    }

    private func read(_ name: String) -> String? {
        FileManager.default.contents(atPath: "\(directory)/\(name)").map { String(decoding: $0, as: UTF8.self) }
    }

    private func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// The calls of a file system without hard links, which answers `link` with `code`; its
    /// rename takes `RENAME_NOREPLACE` unless `noReplaceAnswer` says otherwise.
    private static func withoutHardLinks(_ code: Int32, noReplaceAnswer: Int32? = nil) -> FileCalls {
        FileCalls(
            link: { _, _ in code },
            renameWithoutReplacing: { from, to in noReplaceAnswer ?? FileCalls.system.renameWithoutReplacing(from, to) }
        )
    }

    @Test func theSystemsCallsMoveTheFileAndNeverReplaceOne() throws {
        try write("new", "a.part")
        #expect(FileCalls.system.place("\(directory)/a.part", at: "\(directory)/a") == 0)
        #expect(names() == ["a"])
        #expect(read("a") == "new")
        try write("newer", "a.part")
        #expect(FileCalls.system.place("\(directory)/a.part", at: "\(directory)/a") == EEXIST)
        #expect(names() == ["a", "a.part"])
        #expect(read("a") == "new")
    }

    /// `EPERM` is what FAT answers, `EOPNOTSUPP` and `ENOSYS` what some FUSE and network file
    /// systems do: the rename that refuses to replace takes over.
    @Test(arguments: [EPERM, EOPNOTSUPP, ENOSYS])
    func withoutHardLinksARenameThatDoesNotReplaceTakesOver(code: Int32) throws {
        let placing = Self.withoutHardLinks(code)
        try write("new", "b.part")
        #expect(placing.place("\(directory)/b.part", at: "\(directory)/b") == 0)
        #expect(names() == ["b"])
        try write("newer", "b.part")
        #expect(placing.place("\(directory)/b.part", at: "\(directory)/b") == EEXIST)
        #expect(read("b") == "new")
        #expect(read("b.part") == "newer")
    }

    /// A file system that takes neither: a rename after a check, which still leaves a file
    /// (or a dangling symbolic link) of that name alone.
    @Test(arguments: [EINVAL, ENOSYS])
    func withoutEitherARenameAfterACheck(answer: Int32) throws {
        let placing = Self.withoutHardLinks(EPERM, noReplaceAnswer: answer)
        try write("new", "c.part")
        #expect(placing.place("\(directory)/c.part", at: "\(directory)/c") == 0)
        #expect(read("c") == "new")
        try write("newer", "c.part")
        #expect(placing.place("\(directory)/c.part", at: "\(directory)/c") == EEXIST)
        #expect(symlink("\(directory)/nowhere", "\(directory)/d") == 0)
        #expect(placing.place("\(directory)/c.part", at: "\(directory)/d") == EEXIST)
        #expect(names() == ["c", "c.part", "d"])
    }

    /// Other failures of `link` (a full directory, no permission) are the answer: nothing is
    /// renamed instead.
    @Test func otherLinkFailuresAreReported() throws {
        let placing = FileCalls(link: { _, _ in ENOSPC }, renameWithoutReplacing: { _, _ in Issue.record("renamed"); return 0 })
        try write("new", "e.part")
        #expect(placing.place("\(directory)/e.part", at: "\(directory)/e") == ENOSPC)
        #expect(names() == ["e.part"])
    }

    /// A whole download into a file system without hard links: saved under its name, and the
    /// next one of the same name under the next free one.
    /// A 200 answer with the body "body" downloaded from `name` through a sink with `calls`:
    /// the sink, once finished, and what finishing answered.
    private func download(_ name: String, calls: FileCalls) throws -> (DownloadSink, AFError?) {
        let ok = ResponseHead(status: 200, reason: "OK", httpVersion: "HTTP/1.1", headers: [])
        let sink = try DownloadSink(configuration: .init(directory: directory, requestURL: "http://example.test/\(name)"), notice: { _ in }, calls: calls)
        try sink.open(ok, attempt: 1)
        // A buffer of its own: a typed-throws closure given to `withUnsafeBytes` crashes
        // this compiler (6.3.1).
        let body = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 1)
        defer { body.deallocate() }
        body.copyBytes(from: Array("body".utf8))
        try sink.write(UnsafeRawBufferPointer(body))
        #expect(sink.bodyDidEnd() == nil)
        return (sink, sink.finish(error: nil))
    }

    @Test func aDownloadIsSavedWhereThereAreNoHardLinks() throws {
        for expected in ["f.bin", "f-1.bin"] {
            let (sink, error) = try download("f.bin", calls: Self.withoutHardLinks(EPERM))
            #expect(error == nil)
            #expect(sink.report?.path == "\(directory)/\(expected)")
        }
        #expect(names() == ["f-1.bin", "f.bin"])
        #expect(read("f.bin") == "body")
    }

    /// The descriptors a stand-in `close` was given (each closed for real).
    private final class Closed: Sendable {
        let descriptors = Mutex<[Int32]>([])
    }

    /// A file system that cannot sync (`EINVAL`) and an interrupted close (which closed) are
    /// no failure; a delayed write error from either call is the answer; the descriptor is
    /// closed once whatever happened, and without `syncing` nothing is synced.
    @Test(arguments: [
        (Int32(0), Int32(0), true, Int32(0)), (EINVAL, 0, true, 0), (0, EINTR, true, 0),
        (EIO, 0, true, EIO), (EDQUOT, EDQUOT, true, EDQUOT), (0, ENOSPC, true, ENOSPC), (EIO, 0, false, 0),
    ])
    func finishingAWrittenFileReportsADelayedWriteError(syncAnswer: Int32, closeAnswer: Int32, syncing: Bool, expected: Int32) throws {
        let closed = Closed()
        let calls = FileCalls(
            link: FileCalls.system.link, renameWithoutReplacing: FileCalls.system.renameWithoutReplacing,
            sync: { _ in syncAnswer },
            close: { fd in
                closed.descriptors.withLock { $0.append(fd) }
                _ = Glibc.close(fd)
                return closeAnswer
            }
        )
        let fd = open("\(directory)/g", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        #expect(calls.finish(fd, syncing: syncing) == expected)
        #expect(closed.descriptors.withLock { $0 } == [fd])
    }

    /// A download whose file fails at `close` (a network file system's quota): a failed
    /// write like any other — the part is kept for a resume, nothing takes the name.
    @Test func aDownloadWhoseCloseFailsIsNotSaved() throws {
        let calls = FileCalls(
            link: FileCalls.system.link, renameWithoutReplacing: FileCalls.system.renameWithoutReplacing,
            close: { fd in
                _ = Glibc.close(fd)
                return EDQUOT
            }
        )
        let (sink, error) = try download("h.bin", calls: calls)
        #expect(error?.description.contains("h.bin.part") == true, "\(String(describing: error))")
        #expect(error?.description.contains(POSIXFailure(code: EDQUOT).description) == true, "\(String(describing: error))")
        #expect(sink.report == nil)
        #expect(names() == ["h.bin.part"])
        #expect(read("h.bin.part") == "body")
    }
}
