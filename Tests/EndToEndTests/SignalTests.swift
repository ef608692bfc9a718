import AFTestSupport
import Foundation
import Testing

/// Signals and a reader going away: what only a real process shows.
@Suite struct SignalTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    @Test(arguments: [(SIGINT, Int32(130), "interrupted"), (SIGTERM, 143, "terminated")])
    func signalsCancelCleanly(signal: Int32, status: Int32, word: String) {
        let running = AF.start(["-m", server.url("/delay/10")])
        Thread.sleep(forTimeInterval: 0.5)
        let (result, seconds) = running.stop(with: signal, timeout: 5)
        #expect(seconds < 1)
        #expect(result.status == status)
        #expect(result.err == "af: error: \(word)\n")
        #expect(result.out.contains("Attempt 1: error: \(word)"))
    }

    /// A token command still running when a signal ends af (one that waits on a slow
    /// vault, say) was left running without af: Ctrl-C on a terminal reaches the whole
    /// process group, but `kill`, `timeout` or a CI runner signals af alone.
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func aTokenCommandDoesNotOutliveASignalledRun(signal: Int32, status: Int32) throws {
        let directory = try TemporaryDirectory.make(prefix: "af-auth-cmd-signal")
        let pids = directory + "/pids"
        let running = AF.start(["--auth-cmd=echo $$ > '\(pids)'; sleep 30 & echo $! >> '\(pids)'; wait", server.url("/get")])
        var started: [pid_t] = []
        for _ in 0..<50 where started.count < 2 {
            Thread.sleep(forTimeInterval: 0.1)
            started = ((try? String(contentsOfFile: pids, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { pid_t($0) }
        }
        #expect(started.count == 2, "the command wrote its shell's and its sleep's process ids")
        let sent = Date()
        running.signal(signal)
        let result = running.wait(timeout: 5)
        #expect(result.status == status)
        #expect(Date().timeIntervalSince(sent) < 2, "af's output ended with af")
        #expect(server.requests.isEmpty, "no token, no request")
        // Gone, or a zombie waiting for whoever adopted it to reap it.
        Thread.sleep(forTimeInterval: 0.2)
        for pid in started {
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: ")").last?.split(separator: " ").first
            #expect(state == nil || state == "Z", "process \(pid) still runs (state \(state.map(String.init) ?? "?"))")
        }
    }

    /// The command got af's descriptors that are not close-on-exec (the transfer loop's
    /// wake-up sockets, a connection libcurl opened, whatever af inherited): one that went on
    /// running held them, and af's reader waited for it to see af's output end.
    @Test func aTokenCommandGetsNoneOfAfsDescriptors() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-auth-cmd-descriptors")
        let listing = directory + "/fds"
        let result = AF.run(["--auth-cmd=ls -l /proc/$$/fd > '\(listing)'; echo token", server.url("/get")])
        #expect(result.status == 0, "\(result.err)")
        // The shell's own: its three, and those it keeps at 10 and above (dash saves one).
        let text = try String(contentsOfFile: listing, encoding: .utf8)
        let open = text.split(separator: "\n").compactMap { line in line.split(separator: " ").dropLast(2).last.flatMap { Int($0) } }
        #expect(open.contains(2), "\(text)")
        #expect(open.allSatisfy { $0 <= 2 || $0 >= 10 }, "\(text)")
        #expect(!text.contains("socket:"), "\(text)")
    }

    /// `af pin` against a server that takes the connection and never answers waited out its
    /// connect timeout (30 s) whatever signal came: `timeout 5 af pin HOST` ran for 30 s.
    @Test(arguments: [(SIGINT, Int32(130), "interrupted"), (SIGTERM, 143, "terminated")])
    func pinEndsAtASignal(signal: Int32, status: Int32, word: String) throws {
        let silent = try TestServer()
        silent.route("/") { _, _ in .custom { _ in Thread.sleep(forTimeInterval: 5) } }
        let running = AF.start(["pin", "127.0.0.1:\(silent.port)"])
        Thread.sleep(forTimeInterval: 0.5)
        let (result, seconds) = running.stop(with: signal)
        #expect(seconds < 1)
        #expect(result.status == status)
        #expect(result.err == "af: error: \(word)\n")
        #expect(result.out == "")
    }

    /// A run saving a session waits its turn on the session's directory; another run
    /// stopped while it held it (Ctrl-Z) held this one past any signal.
    @Test func aSignalEndsAWaitToSaveASession() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-session-lock")
        let lock = open(directory, O_RDONLY | O_DIRECTORY)
        defer { close(lock) }
        #expect(flock(lock, LOCK_EX) == 0)
        let running = AF.start(["--session=\(directory)/s.json", server.url("/get")])
        let deadline = Date().addingTimeInterval(10)
        while server.requests(to: "/get").isEmpty, Date() < deadline { usleep(10000) }
        usleep(300_000)
        let (result, seconds) = running.stop(with: SIGTERM)
        #expect(seconds < 1)
        #expect(result.status == 143)
        #expect(result.err == "af: error: terminated while waiting for another af to finish writing the session '\(directory)/s.json'; this exchange's changes were not saved\n")
        #expect(!FileManager.default.fileExists(atPath: directory + "/s.json"))
    }

    @Test func interruptDuringARetryWaitIsImmediate() {
        server.route("/wait") { _, _ in .response(status: 503) }
        let running = AF.start(["--retry=3", "--retry-delay=20", server.url("/wait")])
        Thread.sleep(forTimeInterval: 0.5)
        let sent = Date()
        running.signal(SIGINT)
        let result = running.wait(timeout: 5)
        #expect(Date().timeIntervalSince(sent) < 1)
        #expect(result.status == 130)
    }

    /// A reader that stops reading (a pipe to a stalled program) left af blocked in its write
    /// after SIGINT or SIGTERM, for as long as the reader waited: the write, interrupted by the
    /// signal, was simply tried again. A report is written after the signal (the transfer
    /// stops first): its write waits a second for the reader, then gives up.
    @Test(arguments: [([String](), SIGINT, Int32(130), "interrupted"), ([], SIGTERM, 143, "terminated"), (["--report=json"], SIGINT, 130, "interrupted")])
    func aSignalEndsAWriteToAReaderThatDoesNotRead(options: [String], signal: Int32, status: Int32, word: String) throws {
        let directory = try TemporaryDirectory.make(prefix: "af-stalled-reader")
        let arguments = (options + [server.url("/bytes/50000000")]).map { "'\($0)'" }.joined(separator: " ")
        let script = """
            cd '\(directory)' && mkfifo pipe
            sleep 30 < pipe & reader=$!
            '\(AF.binary)' \(arguments) > pipe 2> errors & af=$!
            sleep 1
            kill -\(signal) $af
            sleep 2.5
            if kill -0 $af 2> /dev/null; then echo still running > state; fi
            kill $reader
            wait $af; echo $? > status
            """
        let (shell, errors) = try AF.shell(script)
        #expect(shell == 0, "\(errors)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/state"), "af was still running 2.5 s after the signal")
        #expect(try String(contentsOfFile: directory + "/status", encoding: .utf8) == "\(status)\n")
        #expect(try String(contentsOfFile: directory + "/errors", encoding: .utf8) == "af: error: \(word)\n")
    }

    @Test func readerGoingAwayEndsQuietly() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "'\(AF.binary)' '\(server.url("/bytes/50000000"))' | head -c 10 > /dev/null; echo \"${PIPESTATUS:-}\""]
        let errors = Pipe()
        process.standardError = errors
        process.environment = AF.environment()
        let started = Date()
        try process.run()
        process.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 5)
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.isEmpty)
    }
}
