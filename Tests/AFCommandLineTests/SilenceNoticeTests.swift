@testable import AFCommandLine
@_spi(Locking) import AFEngine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// A server that takes a request and does not answer gets one line on standard error after a
/// while (af without --timeout waits as long as it does), through the real engine.
@Suite struct SilenceNoticeTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    /// Runs a GET of `path` with the notice after `seconds`; what the notice said.
    private func notices(_ path: String, seconds: Double, watchesBody: Bool = true) -> [String] {
        let said = Protected<[String]>([])
        let notice = SilenceNotice(seconds: seconds, sendsBody: false, watchesBody: watchesBody) { text in said.write { $0.append(text) } }
        _ = Session(configuration: .init(eventMonitors: [notice])).request(RequestDescription(url: server.url(path))).run()
        // A check that was due as the request ended has had its time.
        Thread.sleep(forTimeInterval: seconds + 0.2)
        return said.value
    }

    /// Routes `path` to a body of `bytes` bytes sent one at a time, `every` seconds apart;
    /// with `thenPause`, nine more bytes were announced, and come that long after the last.
    private func trickle(_ path: String, bytes: Int, every: Double, thenPause: Double? = nil) {
        let announced = bytes + (thenPause == nil ? 0 : 9)
        server.route(path) { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(announced)\r\n\r\n")
                for _ in 0..<bytes {
                    Thread.sleep(forTimeInterval: every)
                    connection.write("x")
                }
                guard let thenPause else { return }
                Thread.sleep(forTimeInterval: thenPause)
                connection.write("xxxxxxxxx")
            }
        }
    }

    @Test func aSilentServerIsNamedOnce() {
        server.route("/silent") { _, _ in .custom { connection in Thread.sleep(forTimeInterval: 2.5); connection.close() } }
        #expect(notices("/silent", seconds: 0.3) == ["127.0.0.1:\(server.port) has not answered for 300ms; still waiting (--timeout=SECONDS sets a limit)"])
    }

    @Test func anAnswerInTimeIsNotASilence() {
        server.route("/prompt") { _, _ in .custom { connection in Thread.sleep(forTimeInterval: 0.2); connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") } }
        #expect(notices("/prompt", seconds: 2).isEmpty)
        // Nor a body that keeps coming, however slowly.
        trickle("/trickle", bytes: 8, every: 0.25)
        #expect(notices("/trickle", seconds: 0.8).isEmpty)
    }

    /// A body that stops coming after its head (a stalled download) is named with what came
    /// of it; not where the notice leaves bodies alone (`--stream`, a progress bar), nor for
    /// an event stream, whose silences are its way.
    @Test func aBodyThatStopsComingIsNamed() {
        server.route("/stalled") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhalf")
                Thread.sleep(forTimeInterval: 2.5)
                connection.write("!!")
            }
        }
        #expect(notices("/stalled", seconds: 0.5) == ["127.0.0.1:\(server.port) has sent nothing more for 500ms (4 B of the body so far); still waiting (--timeout=SECONDS sets a limit)"])
        #expect(notices("/stalled", seconds: 0.5, watchesBody: false).isEmpty)
        server.route("/events") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 18\r\n\r\ndata: 1\n\n")
                Thread.sleep(forTimeInterval: 2)
                connection.write("data: 2\n\n")
            }
        }
        #expect(notices("/events", seconds: 0.5).isEmpty)
    }

    /// A body that stops just after the watch has looked is told soon after it has been
    /// silent for the period, not a whole period later: while bytes come, the watch looks a
    /// quarter of the period apart. Here bytes come for 1.1 s and the period is 1 s: looked
    /// at once a period, the stop would be seen at 2 s and told at 3 s.
    @Test func aBodyThatStopsIsToldSoonAfterThePeriod() {
        trickle("/slows", bytes: 11, every: 0.1, thenPause: 3.5)
        let start = Monotonic.now()
        let told = Protected<[(String, Double)]>([])
        let notice = SilenceNotice(seconds: 1, sendsBody: false) { text in told.write { $0.append((text, Monotonic.now() - start)) } }
        _ = Session(configuration: .init(eventMonitors: [notice])).request(RequestDescription(url: server.url("/slows"))).run()
        #expect(told.value.map(\.0) == ["127.0.0.1:\(server.port) has sent nothing more for 1s (11 B of the body so far); still waiting (--timeout=SECONDS sets a limit)"])
        // Silent for the period at the earliest (the last byte came at about 1.1 s).
        let at = told.value.first?.1 ?? 0
        #expect(at >= 2.05 && at < 2.75, "told at \(at) s")
    }

    /// A server that stops taking the request body (it reads nothing; the socket's buffers
    /// fill) has not been asked anything yet: that is what is named, with how much went.
    @Test func aServerThatStopsTakingTheBodyIsNamed() throws {
        // Held long enough for a check even when a loaded machine (sanitizers) runs it late.
        let port = try GreetingPort(greeting: [], readsRequest: false, holding: 3)
        let said = Protected<[String]>([])
        let notice = SilenceNotice(seconds: 0.3, sendsBody: true) { text in said.write { $0.append(text) } }
        let body = RequestBody.bytes(Array(repeating: UInt8(ascii: "x"), count: 32 << 20))
        let response = Session(configuration: .init(eventMonitors: [notice]))
            .request(RequestDescription(method: .post, url: "http://127.0.0.1:\(port.port)/", body: body)).run()
        #expect(response.error != nil, "the server closes the connection after three seconds")
        let told = said.value
        #expect(told.count == 1, "\(told)")
        #expect(told.first?.hasPrefix("127.0.0.1:\(port.port) has taken no more of the request body for 300ms (") == true, "\(told)")
        #expect(told.first?.hasSuffix(" of 32.0 MiB sent); still waiting (--timeout=SECONDS sets a limit)") == true, "\(told)")
    }

    /// Through the command: a stalled body is named by default, not with --stream.
    /// A body streamed from a pipe that gives nothing: the server waits for the rest of the
    /// body, which af has not had yet. It was named as the one silent ("has not answered").
    @Test func aStreamedBodysSilentPipeIsNamedNotTheServer() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let writer = ends[1]
        Thread.detachNewThread {
            // Long enough for a check even when a loaded machine runs it late.
            Thread.sleep(forTimeInterval: 2)
            _ = Array("late".utf8).withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            close(writer)
        }
        let result = InProcessAF.run(["--chunked", "-b", "post", server.url("/post"), "@/proc/self/fd/\(ends[0])"], noticeDelays: NoticeDelays(silentServer: 0.4))
        close(ends[0])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err == "af: the request body's pipe has given nothing for 400ms (0 B sent to 127.0.0.1:\(server.port) so far); still waiting (--timeout=SECONDS sets a limit)\n")
        #expect(try #require(server.requests(to: "/post").last).bodyText == "late")
    }

    @Test func theCommandNamesAStalledBodyUnlessItStreams() {
        server.route("/stalled-body") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhalf")
                // Long enough for two checks even when a loaded machine runs them late.
                Thread.sleep(forTimeInterval: 3)
                connection.write("!!")
            }
        }
        let delays = NoticeDelays(silentServer: 0.4)
        let plain = InProcessAF.run([server.url("/stalled-body")], noticeDelays: delays)
        #expect(plain.status == 0)
        #expect(plain.out == "half!!")
        #expect(plain.err == "af: 127.0.0.1:\(server.port) has sent nothing more for 400ms (4 B of the body so far); still waiting (--timeout=SECONDS sets a limit)\n")
        let streamed = InProcessAF.run(["--stream", server.url("/stalled-body")], noticeDelays: delays)
        #expect(streamed.out == "half!!" && streamed.err.isEmpty, "\(streamed.err)")
    }

    /// A download under a progress bar (standard error a terminal) is not told of a body
    /// that stops coming: the bar shows it, and a line written under it would break it up.
    /// Without a terminal the same download is told.
    @Test func aDownloadUnderAProgressBarIsNotToldOfAStall() throws {
        server.route("/stalled-file") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhalf")
                Thread.sleep(forTimeInterval: 3)
                connection.write("!!")
            }
        }
        let directory = try TemporaryDirectory.make(prefix: "af-stall")
        let delays = NoticeDelays(silentServer: 0.4)
        let notice = "has sent nothing more for 400ms"
        let drawn = InProcessAF.run(["-d", "-o", directory + "/drawn", server.url("/stalled-file")], noticeDelays: delays, stderrIsTerminal: true)
        #expect(drawn.status == 0)
        #expect(try String(contentsOfFile: directory + "/drawn", encoding: .utf8) == "half!!")
        #expect(drawn.err.contains("\r"), "no progress bar was drawn: \(drawn.err)")
        #expect(!drawn.err.contains(notice), "\(drawn.err)")
        let logged = InProcessAF.run(["-d", "-o", directory + "/logged", server.url("/stalled-file")], noticeDelays: delays)
        #expect(logged.status == 0)
        #expect(logged.err.contains("af: 127.0.0.1:\(server.port) \(notice) (4 B of the body so far); still waiting"), "\(logged.err)")
    }

    /// An interim response (`103 Early Hints`) is no answer: the silence after it counts.
    @Test func aSilenceAfterAnInterimResponseIsNamed() {
        server.route("/hinted") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n")
                Thread.sleep(forTimeInterval: 2.5)
                connection.close()
            }
        }
        #expect(notices("/hinted", seconds: 0.5) == ["127.0.0.1:\(server.port) has not answered for 500ms; still waiting (--timeout=SECONDS sets a limit)"])
    }

    /// A body still going up is no silence: counted from the last byte sent.
    @Test func aSlowUploadIsNotASilence() throws {
        server.route("/upload") { request, _ in .text("got \(request.body.count)") }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let writer = Thread {
            for _ in 0..<8 {
                Thread.sleep(forTimeInterval: 0.25)
                _ = write(writeEnd, "chunk", 5)
            }
            close(writeEnd)
        }
        writer.start()
        let said = Protected<[String]>([])
        let notice = SilenceNotice(seconds: 0.8, sendsBody: true) { text in said.write { $0.append(text) } }
        let description = RequestDescription(method: .post, url: server.url("/upload"), body: .stream(fileDescriptor: readEnd))
        let response = Session(configuration: .init(eventMonitors: [notice])).request(description).run()
        close(readEnd)
        #expect(response.head?.status == 200)
        Thread.sleep(forTimeInterval: 1.0)
        #expect(said.value.isEmpty, "\(said.value)")
    }

    /// Each attempt is counted from its own connection: a retry after a silence that was
    /// told is told again.
    @Test func eachAttemptIsCountedOnItsOwn() {
        server.route("/silent-twice") { _, _ in .custom { connection in Thread.sleep(forTimeInterval: 2.5); connection.close() } }
        let said = Protected<[String]>([])
        let notice = SilenceNotice(seconds: 0.3, sendsBody: false) { text in said.write { $0.append(text) } }
        let configuration = Session.Configuration(
            interceptor: Interceptor(retriers: [RetryPolicy(retryLimit: 1, delayScale: 0.01)]),
            eventMonitors: [notice]
        )
        _ = Session(configuration: configuration).request(RequestDescription(url: server.url("/silent-twice"))).run()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(server.hits("/silent-twice") == 2)
        #expect(said.value.count == 2, "\(said.value)")
    }

    /// A line of a batch that waits is named, by its line: a CI log has no progress line to
    /// show which line holds the batch. Not with -q.
    @Test func aSilentLineOfABatchIsNamed() throws {
        server.route("/answered") { _, _ in .text("ok") }
        server.route("/late") { _, _ in
            .custom { connection in
                Thread.sleep(forTimeInterval: 1.5)
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate")
            }
        }
        let directory = try TemporaryDirectory.make(prefix: "silent-batch")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let lines = [server.url("/answered"), server.url("/late"), server.url("/answered")].joined(separator: "\n")
        let path = try TemporaryDirectory.write(lines, named: "lines.txt", in: directory)
        let result = InProcessAF.run(["batch", "--parallel=3", path], noticeDelays: NoticeDelays(silentServer: 0.4))
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "oklateok")
        #expect(result.err == "af: line 2: 127.0.0.1:\(server.port) has not answered for 400ms; still waiting (--timeout=SECONDS sets a limit)\n")
        let quiet = InProcessAF.run(["batch", "-q", "--parallel=3", path], noticeDelays: NoticeDelays(silentServer: 0.4))
        #expect(quiet.status == 0 && quiet.err.isEmpty, "\(quiet.err)")
    }

    /// The watch holds a request only while it waits for its answer: after 40 answered
    /// requests it holds none, while a silent one waits it holds that one.
    @Test func theWatchHoldsOnlyRequestsThatWait() {
        server.route("/quick") { _, _ in .text("ok") }
        server.route("/slow") { _, _ in .custom { connection in Thread.sleep(forTimeInterval: 1); connection.close() } }
        let watch = SilenceWatch()
        let notice = SilenceNotice(seconds: 30, sendsBody: false, watch: watch) { _ in }
        let session = Session(configuration: .init(eventMonitors: [notice]))
        for _ in 0..<40 {
            #expect(session.request(RequestDescription(url: server.url("/quick"))).run().head?.status == 200)
        }
        #expect(watch.count == 0)
        // A connection of its own: libcurl sends a request again, at once, when a reused
        // connection closes without an answer.
        let request = Session(configuration: .init(eventMonitors: [notice])).request(RequestDescription(url: server.url("/slow")))
        let started = Thread { _ = request.run() }
        started.start()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(watch.count == 1)
        Thread.sleep(forTimeInterval: 1)
        #expect(watch.count == 0)
    }
}
