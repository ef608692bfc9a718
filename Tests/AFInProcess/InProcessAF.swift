import AFCommandLine
import AFTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs af's whole command (parse, build, send, print) inside the test process through the
/// injected `Environment`: the same arguments, environment and standard input as `AF.run`,
/// without spawning a process. For tests that need nothing only a process has (signals, a
/// working directory, a terminal, a crash or hang that must not take the runner with it).
public enum InProcessAF {
    /// Runs `arguments` as `AF.run` would and returns what it wrote and its exit status;
    /// `unsetting` removes variables `AF.environment` would set; `noticeDelays` shortens the
    /// waits before af says what it waits for; `stderrIsTerminal` has af draw on standard
    /// error what it draws only for a person (a download's progress bar), into the file;
    /// `processors` is how many processors af is told it may run on (the machine's if nil);
    /// with `stdoutReadAfter`, standard output is a pipe nobody reads for that many seconds
    /// (a slow reader: writes block once the pipe is full), read to its end after.
    ///
    /// af runs on a thread of its own, and a run that has not ended after `within` seconds is
    /// left there: the result says so (`timedOut`, status -1, and a line on its standard
    /// error), so that a hang fails its test instead of holding the whole suite for good.
    public static func run(
        _ arguments: [String], stdin: StandardInput = .null, environment extra: [String: String] = [:], unsetting: [String] = [],
        noticeDelays: NoticeDelays = NoticeDelays(), stderrIsTerminal: Bool = false, processors: Int? = nil, stdoutReadAfter: Double? = nil,
        within seconds: Double = 120
    ) -> AFResult {
        var variables = AF.environment(extra)
        for name in unsetting { variables.removeValue(forKey: name) }
        let scratch = (try? TemporaryDirectory.make(prefix: "af-inprocess")) ?? "/tmp"
        let outPath = scratch + "/stdout", errPath = scratch + "/stderr"
        var stdout = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        // Signalled once the late reader has copied the pipe to the file, to its end.
        var drained: DispatchSemaphore?
        if let delay = stdoutReadAfter {
            let ends = makePipe()
            let file = stdout
            let done = DispatchSemaphore(value: 0)
            Thread {
                Thread.sleep(forTimeInterval: delay)
                copyToEnd(from: ends.read, to: file)
                close(ends.read)
                close(file)
                done.signal()
            }.start()
            stdout = ends.write
            drained = done
        }
        let stderr = open(errPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let input: Int32
        // The write end of a pipe left open and empty for the whole run (`.openPipe`).
        var heldOpen: Int32?
        switch stdin {
        case .null:
            input = open("/dev/null", O_RDONLY | O_CLOEXEC)
        case .file(let path):
            input = open(path, O_RDONLY | O_CLOEXEC)
        case .bytes(let bytes):
            let ends = makePipe()
            input = ends.read
            let writeEnd = ends.write
            let feed: @Sendable () -> Void = {
                bytes.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let count = write(writeEnd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                        if count < 0, errno == EINTR { continue }
                        guard count > 0 else { break }
                        offset += count
                    }
                }
                close(writeEnd)
            }
            // What fits in the pipe is there before af looks (as when a shell pipeline's
            // producer has written); more is fed while af reads.
            if bytes.count <= 32 * 1024 { feed() } else { Thread(block: feed).start() }
        case .openPipe:
            let ends = makePipe()
            input = ends.read
            heldOpen = ends.write
        case .socket(let bytes):
            input = StandardInput.socketCarrying(bytes)
        case .later(let bytes, let seconds):
            input = pipeCarrying(now: [], then: bytes, after: seconds)
        case .inTwoParts(let now, let then, let seconds):
            input = pipeCarrying(now: now, then: then, after: seconds)
        }
        let environment = Environment(arguments: arguments, variables: variables, stdin: input, stdout: stdout, stderr: stderr,
                                      stderrIsTerminal: stderrIsTerminal, noticeDelays: noticeDelays, processors: processors)
        let ran = Ran()
        Thread {
            ran.status = AFCommand.run(environment)
            ran.ended.signal()
        }.start()
        guard ran.ended.wait(timeout: .now() + seconds) == .success else {
            // Its descriptors and files stay with the thread that still uses them.
            let told = Array("af-test: af had not ended after \(seconds) s (in-process, left running)\n".utf8)
            return AFResult(stdout: readAll(outPath), stderr: readAll(errPath) + told, status: -1, timedOut: true)
        }
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        for fd in [input, stdout, stderr] + (heldOpen.map { [$0] } ?? []) { close(fd) }
        drained?.wait()
        return AFResult(stdout: readAll(outPath), stderr: readAll(errPath), status: ran.status, timedOut: false)
    }

    /// What af's thread hands back: its status, written before `ended` is signalled and read
    /// only after.
    private final class Ran: @unchecked Sendable {
        var status: Int32 = -1
        let ended = DispatchSemaphore(value: 0)
    }

    /// The read end of a pipe that carries `now` (small: it fits the pipe), then after
    /// `seconds` `then`, and is closed.
    private static func pipeCarrying(now: [UInt8], then: [UInt8], after seconds: Double) -> Int32 {
        let ends = makePipe()
        let writeEnd = ends.write
        now.withUnsafeBytes { buffer in _ = write(writeEnd, buffer.baseAddress, buffer.count) }
        Thread {
            Thread.sleep(forTimeInterval: seconds)
            then.withUnsafeBytes { buffer in _ = write(writeEnd, buffer.baseAddress, buffer.count) }
            close(writeEnd)
        }.start()
        return ends.read
    }

    /// Copies what `source` gives to `target` until its end.
    private static func copyToEnd(from source: Int32, to target: Int32) {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var offset = 0
            while offset < count {
                let written = chunk.withUnsafeBytes { write(target, $0.baseAddress.map { $0 + offset }, count - offset) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// A pipe whose ends are closed on exec (af's tests spawn processes in parallel).
    private static func makePipe() -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// The file's bytes, read with plain POSIX calls (Foundation's reader leaks a block per
    /// small file under LeakSanitizer).
    private static func readAll(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }
}
