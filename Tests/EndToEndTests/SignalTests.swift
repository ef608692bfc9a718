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
        let sent = Date()
        running.signal(signal)
        let result = running.wait(timeout: 5)
        #expect(Date().timeIntervalSince(sent) < 1)
        #expect(result.status == status)
        #expect(result.err == "af: error: \(word)\n")
        #expect(result.out.contains("Attempt 1: error: \(word)"))
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
