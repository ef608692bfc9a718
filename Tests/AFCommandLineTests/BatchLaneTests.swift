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

    @Test func aFileFitsLanesOnlyWhenEveryLineDoes() throws {
        let planner = LinePlanner(base: Settings(), environment: Environment(arguments: []))
        let plain = try file(["http://127.0.0.1:1/a", "# a comment", "post http://127.0.0.1:1/b a=1"])
        #expect(try FileLines(path: plain, planner: planner, temporaryDirectory: directory).fitsLanes)
        let mixed = try file(["http://127.0.0.1:1/a", "https://127.0.0.1:1/b", "http://127.0.0.1:1/c"])
        #expect(try !FileLines(path: mixed, planner: planner, temporaryDirectory: directory).fitsLanes)
        #expect(!StreamedLines(capacity: 4).fitsLanes)
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
        let result = InProcessAF.run(["batch", "--parallel=8", path], processors: 2)
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

    /// Runs af in-process on a thread of its own, failing (rather than hanging the suite) when
    /// it has not ended after `seconds`.
    private static func runWithin(_ seconds: Double, _ arguments: [String]) throws -> AFResult {
        final class Outcome: @unchecked Sendable { var result: AFResult? }
        let outcome = Outcome()
        let ended = DispatchSemaphore(value: 0)
        Thread {
            outcome.result = InProcessAF.run(arguments, processors: 2)
            ended.signal()
        }.start()
        try #require(ended.wait(timeout: .now() + seconds) == .success, "af batch had not ended after \(seconds) s")
        return try #require(outcome.result)
    }

    /// A failure on one lane stops the batch on both: the other lane's requests are cancelled
    /// at once, nothing more starts, and the summary counts them.
    @Test func failFastOnOneLaneCancelsTheOthers() throws {
        let path = try file((1...4).map { number in
            number == 2 ? server.url("/late-failure") : server.url("/answer/\(number)?delay=3")
        } + (5...20).map { server.url("/answer/\($0)") })
        let started = Date()
        let result = InProcessAF.run(["batch", "--parallel=4", "--check-status", "--fail-fast", path], processors: 2)
        #expect(result.status == 5)
        #expect(Date().timeIntervalSince(started) < 2.5)
        #expect(result.err == """
        af: line 2: error: server answered 500 Internal Server Error
        af: error: 1 of 4 requests failed (line 2); --fail-fast started no more and cancelled 3

        """)
        #expect(server.requests.allSatisfy { !$0.path.hasPrefix("/answer/") || Int($0.path.dropFirst(8)).map { $0 < 5 } ?? false },
                "\(server.requests.map(\.path))")
    }
}
