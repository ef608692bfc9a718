import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a run of the real `af` binary produced.
public struct AFResult: Sendable {
    public var stdout: [UInt8]
    public var stderr: [UInt8]
    public var status: Int32
    public var timedOut: Bool

    public init(stdout: [UInt8], stderr: [UInt8], status: Int32, timedOut: Bool) {
        self.stdout = stdout
        self.stderr = stderr
        self.status = status
        self.timedOut = timedOut
    }

    public var out: String { String(decoding: stdout, as: UTF8.self) }
    public var err: String { String(decoding: stderr, as: UTF8.self) }
}

/// Where a run's standard input comes from.
public enum StandardInput: Sendable {
    /// `/dev/null`.
    case null
    /// A pipe carrying these bytes, then closed.
    case bytes([UInt8])
    /// A regular file.
    case file(String)
    /// A pipe that stays open and empty for the whole run.
    case openPipe
    /// A pipe that stays open and empty for `seconds`, then carries these bytes and is closed.
    case later([UInt8], seconds: Double)
    /// A pipe carrying `now`, then after `seconds` `then`, and closed.
    case inTwoParts(now: [UInt8], then: [UInt8], seconds: Double)
    /// One end of a socket pair carrying these bytes, the other end then shut for writing (as
    /// Node.js's child processes get their standard input).
    case socket([UInt8])

    /// For `.socket`: the end af reads, the other having sent `bytes` and shut for writing
    /// (small payloads: they fit the socket's buffer). Both ends close on exec.
    public static func socketCarrying(_ bytes: [UInt8]) -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else { return -1 }
        bytes.withUnsafeBytes { buffer in _ = send(ends[1], buffer.baseAddress, buffer.count, 0) }
        shutdown(ends[1], Int32(SHUT_WR))
        close(ends[1])
        return ends[0]
    }
}

/// Runs the built `af` binary as a user would, in a clean environment.
public enum AF {
    /// The binary: `$AF_BINARY`, or `af` next to the test bundle in `.build`.
    public static let binary: String = {
        if let explicit = ProcessInfo.processInfo.environment["AF_BINARY"] { return explicit }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("af").path
            if FileManager.default.isExecutableFile(atPath: candidate), !FileManager.default.fileExists(atPath: candidate + "/") { return candidate }
            directory.deleteLastPathComponent()
        }
        return ".build/debug/af"
    }()

    /// A scratch home and config directory per process, so no user file leaks in.
    public static let home: String = {
        (try? TemporaryDirectory.make(prefix: "af-home")) ?? "/tmp"
    }()

    /// The environment af runs in: no proxies, no colour preferences, a private HOME.
    public static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": home,
            "AF_CONFIG_DIR": home + "/config",
            "TMPDIR": ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp",
            "LANG": "C.UTF-8",
        ]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Runs `script` with /bin/sh, for what only a shell sets up around af (a redirect to
    /// /dev/full, `ulimit`, bytes from `printf`); the script names af as `AF.binary` and runs
    /// in `AF.environment()`. Standard output goes to /dev/null unless the script redirects
    /// it. Returns the exit status and what was written to standard error.
    public static func shell(_ script: String) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = environment()
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    /// Whether af can be run as another user under a limit of that user's own
    /// (`runLimited`): it takes root, whose own limit on processes is not enforced.
    public static let canRunLimited = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Runs af as nobody, which may have at most `processes` processes and threads
    /// (`ulimit -u`), with HOME and the config directory where nobody has none. Files it
    /// reads must be readable by others.
    public static func runLimited(_ arguments: [String], processes: Int) -> AFResult {
        // An AddressSanitizer build's leak check runs in a task of its own at exit, which the
        // limit refuses ("LeakSanitizer has encountered a fatal error").
        let environment = ["HOME": "/nonexistent", "AF_CONFIG_DIR": "/nonexistent/config", "ASAN_OPTIONS": "detect_leaks=0"]
        let launcher = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "/bin/bash", "-c", "ulimit -u \(processes) && exec \"$0\" \"$@\""]
        return start(arguments, environment: environment, launcher: launcher).wait(timeout: 30)
    }

    /// Runs af to completion (or `timeout` seconds, then kills it).
    @discardableResult
    public static func run(
        _ arguments: [String],
        stdin: StandardInput = .null,
        environment extra: [String: String] = [:],
        directory: String? = nil,
        timeout: Double = 30
    ) -> AFResult {
        let handle = start(arguments, stdin: stdin, environment: extra, directory: directory)
        return handle.wait(timeout: timeout)
    }

    /// Starts af and returns a handle to signal and wait for it. With a `launcher`, af runs
    /// as that command's last arguments (`launcher + [binary] + arguments`), in its process.
    public static func start(
        _ arguments: [String],
        stdin: StandardInput = .null,
        environment extra: [String: String] = [:],
        directory: String? = nil,
        launcher: [String] = []
    ) -> RunningAF {
        let scratch = (try? TemporaryDirectory.make(prefix: "af-run")) ?? "/tmp"
        let outPath = scratch + "/stdout"
        let errPath = scratch + "/stderr"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher.first ?? binary)
        process.arguments = launcher.isEmpty ? arguments : launcher.dropFirst() + [binary] + arguments
        process.environment = environment(extra)
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardOutput = FileHandle(forWritingAtPath: outPath)
        process.standardError = FileHandle(forWritingAtPath: errPath)
        var keepOpen: Pipe?
        switch stdin {
        case .null:
            process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        case .bytes(let bytes):
            let pipe = Pipe()
            process.standardInput = pipe
            let writer = pipe.fileHandleForWriting
            Thread.detachNewThread {
                writer.write(Data(bytes))
                try? writer.close()
            }
        case .later(let bytes, let seconds):
            process.standardInput = delayedPipe(now: [], then: bytes, after: seconds)
        case .inTwoParts(let now, let then, let seconds):
            process.standardInput = delayedPipe(now: now, then: then, after: seconds)
        case .file(let path):
            process.standardInput = FileHandle(forReadingAtPath: path)
        case .openPipe:
            let pipe = Pipe()
            process.standardInput = pipe
            keepOpen = pipe
        case .socket(let bytes):
            process.standardInput = FileHandle(fileDescriptor: StandardInput.socketCarrying(bytes), closeOnDealloc: true)
        }
        do {
            try process.run()
        } catch {
            fatalError("cannot run \(binary): \(error)")
        }
        return RunningAF(process: process, outPath: outPath, errPath: errPath, keepOpen: keepOpen)
    }
}

/// A running af process.
public final class RunningAF: @unchecked Sendable {
    let process: Process
    let outPath: String
    let errPath: String
    let keepOpen: Pipe?

    init(process: Process, outPath: String, errPath: String, keepOpen: Pipe?) {
        self.process = process
        self.outPath = outPath
        self.errPath = errPath
        self.keepOpen = keepOpen
    }

    /// Sends a signal.
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Sends a signal and waits for the process (killing it after `timeout` seconds): what it
    /// left, and how many seconds it took from the signal to its end.
    public func stop(with number: Int32, timeout: Double = 10) -> (result: AFResult, seconds: Double) {
        let sent = Date()
        signal(number)
        let result = wait(timeout: timeout)
        return (result, Date().timeIntervalSince(sent))
    }

    /// Writes to standard input (started with `.openPipe`), waiting while the pipe is full.
    public func send(_ bytes: [UInt8]) {
        keepOpen?.fileHandleForWriting.write(Data(bytes))
    }

    /// Closes standard input (started with `.openPipe`): af reads its end.
    public func closeInput() {
        try? keepOpen?.fileHandleForWriting.close()
    }

    /// Whether af is still running.
    public var isRunning: Bool { process.isRunning }

    /// Standard output so far.
    public var outputSoFar: String {
        String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
    }

    /// Waits for the process; kills it after `timeout` seconds.
    public func wait(timeout: Double = 30) -> AFResult {
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning {
            if Date() > deadline {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(2000)
        }
        process.waitUntilExit()
        _ = keepOpen
        let out = FileManager.default.contents(atPath: outPath) ?? Data()
        let err = FileManager.default.contents(atPath: errPath) ?? Data()
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: outPath).deletingLastPathComponent().path)
        return AFResult(stdout: [UInt8](out), stderr: [UInt8](err), status: process.terminationStatus, timedOut: timedOut)
    }
}

/// Runs af on a pseudo-terminal (for terminal output and prompts).
public enum PTYRunner {
    /// What a run on a pseudo-terminal left behind.
    public struct Outcome {
        /// Everything the terminal showed.
        public var output: String
        /// The exit status, or 128 + the signal that ended af.
        public var status: Int32
        /// Whether the terminal echoes input once af is gone.
        public var echoes: Bool
    }

    /// Runs af with standard input, output and error on a new pseudo-terminal; `input` is
    /// typed once the first `waitFor` text appears (or at once). Returns everything the
    /// terminal showed and the exit status.
    /// `standardOutput` (a file's path) takes standard output off the terminal, as `> FILE`
    /// does.
    public static func run(
        _ arguments: [String], input: String? = nil, waitFor: String? = nil, environment extra: [String: String] = [:], columns: Int = 120,
        standardOutput: String? = nil, timeout: Double = 20
    ) -> (output: String, status: Int32) {
        let outcome = session(arguments, waitFor: waitFor, environment: extra, columns: columns, standardOutput: standardOutput, timeout: timeout) { _, master in
            if let input { _ = input.withCString { write(master, $0, strlen($0)) } }
        }
        return (outcome.output, outcome.status)
    }

    /// Runs af on a terminal `columns` wide, narrowed to `narrowedTo` columns once `waitFor`
    /// appears (as a user drags a window smaller).
    public static func run(_ arguments: [String], columns: Int, narrowedTo narrower: Int, waitFor: String, timeout: Double = 20) -> Outcome {
        session(arguments, waitFor: waitFor, environment: [:], columns: columns, timeout: timeout) { _, master in
            var size = winsize(ws_row: 40, ws_col: UInt16(narrower), ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        }
    }

    /// Runs af on a pseudo-terminal and sends it `signal` once `waitFor` appears.
    public static func run(_ arguments: [String], signal: Int32, waitFor: String, timeout: Double = 20) -> Outcome {
        session(arguments, waitFor: waitFor, environment: [:], columns: 120, timeout: timeout) { process, _ in
            kill(process.processIdentifier, signal)
        }
    }

    /// Runs af on a pseudo-terminal in a process group of its own, as a shell with job control
    /// starts a job (Ctrl-Z stops it there; the kernel ignores SIGTSTP in a group no parent
    /// outside it can continue), and calls `act` with af's process and the terminal's master
    /// side once `waitFor` appears. perl (always on Debian) makes the group, unblocks SIGTSTP
    /// and becomes af.
    public static func runAsJob(_ arguments: [String], waitFor: String, timeout: Double = 20, act: (Process, Int32) -> Void) -> Outcome {
        session(arguments, waitFor: waitFor, environment: [:], columns: 120, timeout: timeout, asJob: true, act: act)
    }

    private static func session(
        _ arguments: [String], waitFor: String?, environment extra: [String: String], columns: Int, standardOutput: String? = nil, timeout: Double,
        asJob: Bool = false, act: (Process, Int32) -> Void
    ) -> Outcome {
        // /dev/ptmx, unlocked and numbered with ioctls (what posix_openpt, unlockpt and
        // ptsname do, without needing _XOPEN_SOURCE).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0, ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0 else {
            fatalError("cannot open a pseudo-terminal")
        }
        var size = winsize(ws_row: 40, ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        let slavePath = "/dev/pts/\(number)"
        let slave = open(slavePath, O_RDWR | O_NOCTTY)
        let process = Process()
        if asJob {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/perl")
            // The test runner's thread may block SIGTSTP, and af would inherit that; a shell never does.
            let script = "use POSIX; setpgrp(0, 0); sigprocmask(SIG_UNBLOCK, POSIX::SigSet->new(SIGTSTP)); exec { $ARGV[0] } @ARGV or die"
            process.arguments = ["-e", script, AF.binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: AF.binary)
            process.arguments = arguments
        }
        // A colour terminal unless the test says otherwise (TERM=dumb).
        process.environment = AF.environment(["TERM": "xterm-256color"].merging(extra) { $1 })
        let slaveHandle = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = slaveHandle
        if let standardOutput, FileManager.default.createFile(atPath: standardOutput, contents: nil), let file = FileHandle(forWritingAtPath: standardOutput) {
            process.standardOutput = file
        } else {
            process.standardOutput = slaveHandle
        }
        process.standardError = slaveHandle
        try? process.run()
        var output: [UInt8] = []
        var acted = false
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 50) == 1 {
                let count = read(master, &buffer, buffer.count)
                if count > 0 { output += buffer[0..<count] } else if !process.isRunning { break }
            } else if !process.isRunning {
                break
            }
            if !acted, waitFor.map({ String(decoding: output, as: UTF8.self).contains($0) }) ?? true {
                acted = true
                act(process, master)
            }
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        // The slave stays open until here so that its settings can still be read.
        var settings = termios()
        let echoes = tcgetattr(slave, &settings) == 0 && settings.c_lflag & tcflag_t(ECHO) != 0
        close(slave)
        close(master)
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return Outcome(output: String(decoding: output, as: UTF8.self), status: status, echoes: echoes)
    }
}

extension PTYRunner {
    /// The lines a run drew in place (`\r`, then the line with an erase to the end of the
    /// line before or after it) that hold `marker`, as the terminal was asked to show them.
    public static func statusLines(in output: String, holding marker: String) -> [String] {
        let erase = "\u{1B}[K"
        // A terminal ends lines with CR LF, one Character to Swift, which a split at CR leaves whole.
        let output = output.replacingOccurrences(of: "\r\n", with: "\n")
        return output.split(separator: "\r", omittingEmptySubsequences: true).compactMap { piece -> String? in
            var line = String(piece)
            if line.hasPrefix(erase) { line.removeFirst(erase.count) }
            if line.hasSuffix(erase) { line.removeLast(erase.count) }
            // The last drawing, ended to stay as a summary.
            if line.hasSuffix("\n") { line.removeLast() }
            return line.contains("\n") || !line.contains(marker) ? nil : line
        }
    }
}

extension AFResult {
    /// Whether standard error holds exactly one `af: error:` line and it comes last (a
    /// download prints the response head on standard error first).
    public var endsWithOneErrorLine: Bool {
        let lines = err.split(separator: "\n")
        return lines.filter { $0.hasPrefix("af: error: ") }.count == 1 && lines.last?.hasPrefix("af: error: ") == true
    }
}

/// A pipe that carries `now`, then after `seconds` `then`, and is closed.
private func delayedPipe(now: [UInt8], then: [UInt8], after seconds: Double) -> Pipe {
    let pipe = Pipe()
    let writer = pipe.fileHandleForWriting
    Thread.detachNewThread {
        if !now.isEmpty { writer.write(Data(now)) }
        Thread.sleep(forTimeInterval: seconds)
        writer.write(Data(then))
        try? writer.close()
    }
    return pipe
}
