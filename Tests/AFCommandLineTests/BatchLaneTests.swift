@testable import AFCommandLine
import AFEngine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// `af batch` on several lanes (threads, each with connections of its own), run in-process
/// and told it has two processors, so that the thread sanitizer sees the lanes at work
/// whatever machine runs the tests.
@Suite struct BatchLaneTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-batch-lanes")
        server.routeAnswers()
        // A failure that comes once the lines beside it are surely in flight.
        server.route("/late-failure") { _, _ in
            usleep(500_000)
            return .response(status: 500, headers: [("Content-Type", "text/plain")], body: Array("late\n".utf8))
        }
    }

    private func file(_ lines: [String]) throws -> String {
        try TemporaryDirectory.write(lines.joined(separator: "\n") + "\n", named: "lines.txt", in: directory)
    }

    @Test func lanesFollowTheProcessorsTheParallelAndTheLines() {
        #expect(BatchCommand.lanes(parallel: 10, processors: 2, linesFit: true, oneThread: false) == 2)
        #expect(BatchCommand.lanes(parallel: 10, processors: 1, linesFit: true, oneThread: false) == 1)
        #expect(BatchCommand.lanes(parallel: 100, processors: 64, linesFit: true, oneThread: false) == BatchCommand.maxLanes)
        // Two requests a lane at least.
        #expect(BatchCommand.lanes(parallel: 5, processors: 16, linesFit: true, oneThread: false) == 2)
        #expect(BatchCommand.lanes(parallel: 3, processors: 16, linesFit: true, oneThread: false) == 1)
        #expect(BatchCommand.lanes(parallel: 10, processors: 2, linesFit: false, oneThread: false) == 1)
        #expect(BatchCommand.lanes(parallel: 10, processors: 2, linesFit: true, oneThread: true) == 1)
        // No more lanes than a file has lines; lines streamed on standard input are not counted.
        #expect(BatchCommand.lanes(parallel: 10, processors: 4, linesFit: true, oneThread: false, lines: 1) == 1)
        #expect(BatchCommand.lanes(parallel: 10, processors: 4, linesFit: true, oneThread: false, lines: 0) == 1)
        #expect(BatchCommand.lanes(parallel: 10, processors: 4, linesFit: true, oneThread: false, lines: 3) == 3)
        #expect(BatchCommand.lanes(parallel: 10, processors: 4, linesFit: true, oneThread: false, lines: nil) == 4)
    }

    /// A line fits any lane when it uses the batch's connections and speaks HTTP/1: lines that
    /// may become HTTP/2 streams of one connection need to be on one lane.
    @Test(arguments: [
        (["http://127.0.0.1:1/x"], true),
        (["post", "http://127.0.0.1:1/x", "a=1"], true),
        (["https://127.0.0.1:1/x"], false),
        (["--http-version=1.1", "https://127.0.0.1:1/x"], true),
        (["--http-version=1.0", "https://127.0.0.1:1/x"], true),
        (["--http-version=2", "http://127.0.0.1:1/x"], false),
        (["--http-version=2-prior-knowledge", "http://127.0.0.1:1/x"], false),
        (["--resolve=a.test:1:127.0.0.1", "http://a.test:1/x"], false),
    ])
    func linesFitAnyLaneWhenTheySpeakHTTP1OnTheBatchsConnections(words: [String], fits: Bool) throws {
        let planner = LinePlanner(base: Settings(), environment: Environment(arguments: []))
        #expect(try planner.prepare(words).fitsAnyLane == fits)
    }

    /// A file whose every line needs the first lane keeps to it; one with any line that fits
    /// any lane runs on lanes, the others handed to the first.
    @Test func aFileRunsOnLanesWhenAnyLineFitsThem() throws {
        let planner = LinePlanner(base: Settings(), environment: Environment(arguments: []))
        let plain = try file(["http://127.0.0.1:1/a", "# a comment", "post http://127.0.0.1:1/b a=1"])
        #expect(try FileLines(path: plain, planner: planner, temporaryDirectory: directory).fitsLanes)
        let mixed = try file(["https://127.0.0.1:1/a", "https://127.0.0.1:1/b", "http://127.0.0.1:1/c"])
        #expect(try FileLines(path: mixed, planner: planner, temporaryDirectory: directory).fitsLanes)
        let secure = try file(["https://127.0.0.1:1/a", "--http-version=2 http://127.0.0.1:1/b"])
        #expect(try !FileLines(path: secure, planner: planner, temporaryDirectory: directory).fitsLanes)
        // Streamed lines are checked as they start instead.
        #expect(StreamedLines(capacity: 4).fitsLanes)
    }

    /// Lines finishing out of order on two lanes' threads print in line order, whole, and the
    /// lanes' connections together stay within `--parallel`. Small outputs wait in memory,
    /// larger ones in files (`OrderedOutput`); each lane prints what its lines make ready.
    @Test(arguments: [nil, 40_000])
    func linesOnTwoLanesPrintInLineOrder(size: Int?) throws {
        let count = 300
        let path = try file((1...count).map { number in
            // Every fifth line answers late, so that later lines finish first.
            server.url("/answer/\(number)?size=\(size ?? 0)" + (number % 5 == 0 ? "&delay=0.02" : ""))
        })
        let result = try Self.runWithin(60, ["batch", "--parallel=8", path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err == "")
        // Compared line by line, so that a failure names the first line out of place instead
        // of printing megabytes.
        let expected = (1...count).map { String(decoding: TestServer.answer(String($0), size: size), as: UTF8.self) }
        let printed = result.out.split(separator: "\n", omittingEmptySubsequences: false).map { $0 + "\n" }.dropLast()
        let misplaced = expected.indices.first { $0 >= printed.count || printed[$0] != expected[$0] }
        #expect(misplaced == nil, "output line \((misplaced ?? 0) + 1) is '\(misplaced.flatMap { $0 < printed.count ? printed[$0].prefix(20) : nil } ?? "missing")…'")
        #expect(printed.count == count)
        #expect(server.requests.count == count)
        let connections = Set(server.requests.map(\.connection))
        #expect(connections.count <= 8, "\(connections.count) connections at --parallel=8")
    }

    /// A slow first line holds every later output back (`--parallel` × 2 + 16 lines may run
    /// past it): a lane that finishes its lines meanwhile stops with none running, and goes
    /// on when the slow line ends on the other lane, and the batch ends.
    @Test func aLaneHeldBackByAnEarlierLineGoesOnWhenItEnds() throws {
        let count = 100
        let path = try file((1...count).map { server.url("/answer/\($0)" + ($0 == 1 ? "?delay=0.5" : "")) })
        let result = try Self.runWithin(20, ["batch", "--parallel=4", path])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == (1...count).map { "answer \($0)\n" }.joined())
        #expect(server.requests.count == count)
    }

    /// Runs `af batch OPTIONS` on `lines` from a file (`input` "FILE") or from standard input
    /// ("-"), with `runWithin`.
    private func runBatch(_ options: [String], lines: [String], from input: String, within seconds: Double = 20) throws -> AFResult {
        let source = input == "-" ? "-" : try file(lines)
        let stdin: AFTestSupport.StandardInput = input == "-" ? .bytes(Array((lines.joined(separator: "\n") + "\n").utf8)) : .null
        return try Self.runWithin(seconds, ["batch"] + options + [source], stdin: stdin)
    }

    /// Runs af in-process, told it has two processors, failing when it has not ended after
    /// `seconds`.
    private static func runWithin(_ seconds: Double, _ arguments: [String], stdin: AFTestSupport.StandardInput = .null) throws -> AFResult {
        let result = InProcessAF.run(arguments, stdin: stdin, processors: 2, within: seconds)
        let timedOut = result.timedOut
        try #require(!timedOut, "af batch had not ended after \(seconds) s")
        return result
    }

    /// A failure on one lane stops the batch on both: the other lane's requests are cancelled
    /// at once, nothing more starts, and the summary counts them.
    @Test func failFastOnOneLaneCancelsTheOthers() throws {
        let path = try file((1...4).map { number in
            number == 2 ? server.url("/late-failure") : server.url("/answer/\(number)?delay=3")
        } + (5...20).map { server.url("/answer/\($0)") })
        let started = Date()
        let result = try Self.runWithin(20, ["batch", "--parallel=4", "--check-status", "--fail-fast", path])
        #expect(result.status == 5)
        #expect(Date().timeIntervalSince(started) < 2.5)
        #expect(result.err == """
        af: line 2: error: server answered 500 Internal Server Error
        af: error: 1 of 4 requests failed (line 2); --fail-fast started no more and cancelled 3

        """)
        #expect(server.requests.allSatisfy { !$0.path.hasPrefix("/answer/") || Int($0.path.dropFirst(8)).map { $0 < 5 } ?? false },
                "\(server.requests.map(\.path))")
    }

    /// A lane whose requests end while another lane's thread is held up writing earlier
    /// outputs to a slow reader leaves its outputs to that thread and goes on with its
    /// requests (up to the window of lines ahead of the one printing), instead of waiting
    /// until the reader reads. Line 1 ends after 0.3 s, and its lane then prints line 2's 1 MiB
    /// into a pipe nobody reads for 1.6 s; the other lines take 0.2 s each.
    @Test func aLaneGoesOnWhileAnotherWritesToASlowReader() throws {
        let lines = [server.url("/answer/1?delay=0.3"), server.url("/answer/2?size=1048576")]
            + (3...30).map { server.url("/answer/\($0)?delay=0.2") }
        let started = ProcessInfo.processInfo.systemUptime
        let result = InProcessAF.run(["batch", "--parallel=4", try file(lines)], processors: 2, stdoutReadAfter: 1.6, within: 20)
        #expect(result.status == 0, "\(result.err)")
        let expected = Array("answer 1\n".utf8) + TestServer.answer("2", size: 1_048_576) + Array((3...30).map { "answer \($0)\n" }.joined().utf8)
        #expect(result.stdout == expected, "\(result.stdout.count) bytes")
        // Before the reader came: the printing lane's 4 and the other lane's 2 every 0.2 s
        // until 1.4 s (about 18 in all); a lane that waited for the printing one stopped at
        // its first request ending after 0.3 s (about 8).
        let early = server.requests.filter { $0.receivedAt < started + 1.4 }.count
        #expect(early >= 13, "\(early) requests before the reader read")
    }

    /// `--debug` says how the requests in flight are shared: streamed lines on standard input
    /// share the lanes too, as a file's lines do.
    @Test(arguments: ["FILE", "-"])
    func debugSaysHowManyLanesShareTheRequests(input: String) throws {
        let lines = (1...3).map { server.url("/answer/\($0)") }
        let result = try runBatch(["--debug", "--parallel=5"], lines: lines, from: input)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("af: debug: batch: 2 lanes (threads), --parallel=5 shared 3 + 2\n"), "\(result.err)")
        let single = try runBatch(["--debug", "--parallel=5", "--rate=1000/s"], lines: lines, from: input)
        #expect(single.err.contains("af: debug: batch: 1 lane (threads), --parallel=5 shared 5\n"), "\(single.err)")
        // A file of one line starts no lane (thread) for nothing; streamed lines may go on.
        let one = try runBatch(["--debug", "--parallel=5"], lines: [lines[0]], from: input)
        #expect(one.status == 0, "\(one.err)")
        #expect(one.err.contains(input == "-" ? "af: debug: batch: 2 lanes (threads), --parallel=5 shared 3 + 2\n"
                                              : "af: debug: batch: 1 lane (threads), --parallel=5 shared 5\n"), "\(one.err)")
    }

    /// Lines streamed on standard input, finishing out of order on two lanes, print in line
    /// order; the lanes wait for lines that come later, and end when the input does.
    @Test func streamedLinesOnTwoLanesPrintInLineOrder() throws {
        let count = 200
        let text = (1...count).map { number in
            server.url("/answer/\(number)" + (number % 5 == 0 ? "?delay=0.02" : "")) + "\n"
        }.joined()
        // A third at once (it fits the pipe), the rest once the lanes have run dry and wait.
        let bytes = Array(text.utf8)
        let cut = try #require(bytes[(bytes.count / 3)...].firstIndex(of: UInt8(ascii: "\n"))) + 1
        let result = try Self.runWithin(20, ["batch", "--parallel=8", "-"], stdin: .inTwoParts(now: Array(bytes[..<cut]), then: Array(bytes[cut...]), seconds: 0.3))
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err == "")
        #expect(result.out == (1...count).map { "answer \($0)\n" }.joined())
        #expect(server.requests.count == count)
        let connections = Set(server.requests.map(\.connection))
        #expect(connections.count <= 8, "\(connections.count) connections at --parallel=8")
    }

    /// Lines that may become HTTP/2 streams of one connection keep to the first lane whichever
    /// lane takes them, so that they share one; the HTTP/1 lines between them run on either
    /// lane. (Without the hand-over, the lines the second lane took opened a connection of
    /// its own.) A file's lines as streamed ones.
    @Test(.enabled(if: ExternalServer.available("nghttpd"), "nghttpd (Debian's nghttp2-server) is not installed; ./install.sh --dev installs it"),
          arguments: ["FILE", "-"])
    func http2LinesShareOneConnectionBesideHTTP1Lines(input: String) throws {
        let pki = TestPKI.shared
        let issued = try pki.issue(name: "h2lanes")
        let served = try TemporaryDirectory.make(prefix: "af-h2lanes")
        try "h2\n".write(toFile: served + "/x.txt", atomically: false, encoding: .utf8)
        let h2 = try ExternalServer(nghttpdServing: served, key: issued.keyPath, certificate: issued.certificatePath)
        // Every sixth line (odd ones) names the test server's address itself (--resolve): a
        // connection setting of its own, which runs on the first lane with its own connections.
        let lines = (1...60).map { number in
            number % 2 == 0 ? "https://127.0.0.1:\(h2.port)/x.txt?n=\(number)"
                : number % 3 == 0 ? "--resolve=lanes.test:\(server.port):127.0.0.1 http://lanes.test:\(server.port)/answer/\(number)"
                : server.url("/answer/\(number)?delay=0.01")
        }
        let result = try runBatch(["--parallel=8", "--verify=\(pki.caCertificatePath)", "--report=json"], lines: lines, from: input, within: 60)
        #expect(result.status == 0, "\(result.err)")
        let reports = result.out.split(separator: "\n").compactMap { JSONHelpers.object(String($0)) }
        #expect(Set(reports.compactMap { $0["line"] as? Int }) == Set(1...60))
        let opened = reports.filter { ($0["line"] as? Int).map { $0 % 2 == 0 } ?? false }.compactMap { report -> Int? in
            guard let attempts = report["attempts"] as? [[String: Any]], let metrics = attempts.first?["metrics"] as? [String: Any] else { return nil }
            #expect(metrics["http_version"] as? String == "HTTP/2")
            return metrics["new_connections"] as? Int
        }
        #expect(opened.count == 30)
        #expect(opened.reduce(0, +) == 1, "HTTP/2 connections opened: \(opened.reduce(0, +))")
        #expect(server.requests.count == 30)
        #expect(server.requests.filter { $0.header("Host") == "lanes.test:\(server.port)" }.count == 10)
    }

    /// A lane whose every line was handed to the first lane, which then holds all of
    /// `--parallel`, has none of its own running: it goes on (and leaves) when a line ends on
    /// the first lane, rather than waiting for good with the batch unable to end. (Without
    /// that, this batch hung in 3 of 3 runs, from a file and from standard input alike.)
    @Test(arguments: ["FILE", "-"])
    func aLaneThatHandedItsLinesOverGoesOnWhenTheFirstLaneEndsOne(input: String) throws {
        // One line fits any lane; the others name the test server's address themselves
        // (--resolve), which keeps them to the first lane, and answer late enough that the
        // first lane holds --parallel of them when the second hands it more.
        let lines = [server.url("/answer/1")] + (2...24).map { number in
            "--resolve=lanes.test:\(server.port):127.0.0.1 http://lanes.test:\(server.port)/answer/\(number)?delay=0.05"
        }
        let result = try runBatch(["--parallel=4"], lines: lines, from: input)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == (1...24).map { "answer \($0)\n" }.joined())
        #expect(server.requests.count == 24)
    }

    /// Lines that fit any lane and lines that keep to the first, mixed at random (the same
    /// mix every run: a seeded generator), some answering late, at several --parallel shares:
    /// every batch ends, each line answered once and printed in line order. A net for the
    /// lanes' wake-ups, where a lane left waiting with nothing to tell it holds the batch for
    /// good.
    @Test(arguments: [(4, "FILE"), (5, "-"), (8, "FILE"), (8, "-"), (9, "FILE")])
    func mixedLinesEndInLineOrder(parallel: Int, input: String) throws {
        var random = SeededRandom(seed: UInt64(parallel * 31 + input.count))
        let count = 120
        let lines = (1...count).map { number -> String in
            let delay = random.next() % 4 == 0 ? "?delay=0.0\(1 + random.next() % 5)" : ""
            return random.next() % 5 < 2
                ? "--resolve=lanes.test:\(server.port):127.0.0.1 http://lanes.test:\(server.port)/answer/\(number)\(delay)"
                : server.url("/answer/\(number)\(delay)")
        }
        let result = try runBatch(["--parallel=\(parallel)"], lines: lines, from: input, within: 60)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == (1...count).map { "answer \($0)\n" }.joined())
        #expect(server.requests.count == count)
    }

    /// SplitMix64: the same numbers for the same seed, so that a failing mix can be run again.
    private struct SeededRandom {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
    }

    /// A --fail-fast failure while the other lane waits for streamed lines that have not come
    /// ends the batch at once: that lane is told, rather than waiting for input that may stay
    /// open for good (a CI step's standard input).
    @Test func aStopEndsALaneWaitingForStreamedLines() throws {
        for _ in 1...3 {
            let line = Array((server.url("/late-failure") + "\n").utf8)
            let started = Date()
            let result = try Self.runWithin(20, ["batch", "--parallel=4", "--check-status", "--fail-fast", "-"], stdin: .inTwoParts(now: line, then: [], seconds: 8))
            #expect(result.status == 5, "\(result.err)")
            #expect(Date().timeIntervalSince(started) < 4, "the batch ended after \(Date().timeIntervalSince(started)) s")
            #expect(result.err == """
            af: line 1: error: server answered 500 Internal Server Error
            af: error: 1 of 1 requests failed (line 1); --fail-fast started no more

            """)
        }
    }
}
