@_spi(Locking) import AFEngine
import AFTestSupport
import Foundation
import Synchronization
import Testing

/// The library's async API: awaiting a response, streaming a body, task cancellation.
@Suite struct AsyncAPITests {
    let server: TestServer
    /// Lets `/slow` answer: a test that cancels signals it when done, so the route holds
    /// its answer as long as a loaded machine may take to cancel (a fixed 10 s once ran out
    /// before a starved test had even seen the request arrive).
    let slowAnswer = DispatchSemaphore(value: 0)

    init() throws {
        server = try TestServer()
        server.route("/slow") { [slowAnswer] _, _ in
            _ = slowAnswer.wait(timeout: .now() + 60)
            return .response(status: 200, body: Array("late\n".utf8))
        }
        server.route("/numbers") { _, _ in
            .response(status: 200, headers: [("Content-Type", "application/json")], body: Array(#"{"price": 1.10, "big": 123456789012345678901234567890, "tags": ["a", "b"]}"#.utf8))
        }
    }

    @Test func serializingDataGivesStatusHeadersBodyAndMetrics() async throws {
        let session = Session()
        defer { session.shutdown() }
        let data = try await session.request(RequestDescription(url: server.url("/numbers"))).serializingData()
        #expect(data.status == 200)
        #expect(data.headers.value(for: .contentType) == "application/json")
        #expect(data.metrics.count == 1)
        #expect(data.metrics.first?.httpVersion == "HTTP/1.1")
        let json = try data.json()
        #expect(json["price"] == .number("1.10"))
        #expect(json["big"] == .number("123456789012345678901234567890"))
        #expect(json["tags"] == .array([.string("a"), .string("b")]))
    }

    @Test func asyncAdaptersAndRetriersRunBetweenAttempts() async throws {
        let busy = Protected(0)
        server.route("/busy-once") { _, _ in
            busy.write { count -> Int in
                count += 1
                return count
            } == 1 ? .response(status: 503) : .response(status: 200, body: Array("ok".utf8))
        }
        let adapter = AsyncAdapter { description, request in
            try await Task.sleep(nanoseconds: 1_000_000)
            var adapted = description
            adapted.headers.set(name: "X-Attempt", value: "\(request.retryCount + 1)")
            return adapted
        }
        let retrier = AsyncRetrier({ _, _ in .doNotRetry }, afterResponse: { request, head in
            await Task.yield()
            return head.status == 503 && request.retryCount == 0 ? .retry : .doNotRetry
        })
        let session = Session(configuration: Session.Configuration(interceptor: Interceptor(adapters: [adapter], retriers: [retrier])))
        defer { session.shutdown() }
        let data = try await session.request(RequestDescription(url: server.url("/busy-once"))).serializingData()
        #expect(data.status == 200)
        #expect(data.body == Array("ok".utf8))
        #expect(server.requests(to: "/busy-once").map { $0.header("X-Attempt") } == ["1", "2"])

        struct Vault: Error, CustomStringConvertible { var description: String { "the vault is sealed" } }
        let refusing = Session(configuration: Session.Configuration(interceptor: Interceptor(adapters: [AsyncAdapter { _, _ in throw Vault() }])))
        defer { refusing.shutdown() }
        await #expect(throws: AFError.adaptationFailed(reason: "the vault is sealed")) {
            _ = try await refusing.request(RequestDescription(url: server.url("/never"))).serializingData()
        }
        #expect(server.hits("/never") == 0)
    }

    /// A path longer than a socket address holds is the request's fault, said before connecting.
    @Test func aUnixSocketPathTooLongIsAnInvalidRequest() async {
        let session = Session()
        defer { session.shutdown() }
        var description = RequestDescription(url: "http://localhost/")
        let path = "/tmp/" + String(repeating: "s", count: 103)
        description.options.unixSocketPath = path
        let reason = "cannot connect to unix socket '\(path)': the path is 108 bytes long, and a socket address holds at most 107; "
            + "give a shorter path to the socket (a symbolic link to it works)"
        await #expect(throws: AFError.invalidRequest(reason: reason)) {
            _ = try await session.request(description).serializingData()
        }
    }

    /// HTTP/1.0 has no chunked encoding: a body of unknown length is refused before connecting.
    @Test func aStreamOverHTTP10IsAnInvalidRequest() async throws {
        let session = Session()
        defer { session.shutdown() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        var description = RequestDescription(method: .post, url: server.url("/never"), body: .stream(fileDescriptor: ends[0]))
        description.options.httpVersion = .http1_0
        await #expect(throws: AFError.invalidRequest(reason: "HTTP/1.0 has no chunked encoding, so a body must be sent with its length, and this one's is not known (a stream, or chunked asked for); use HTTP/1.1 or a body of known length")) {
            _ = try await session.request(description).serializingData()
        }
        #expect(server.hits("/never") == 0)
    }

    /// A streamed body whose pipe gives nothing pauses only its own transfer: the request
    /// after it on the same session completes, and the first one's timeout still fires (the
    /// read waited in libcurl's read callback, on the thread every transfer runs on).
    /// Callbacks, not tasks: a task may start late when other suites keep the cooperative
    /// threads busy, and the request must start when the test says.
    @Test func aSilentStreamedBodyHoldsUpNothingElse() throws {
        let session = Session()
        defer { session.shutdown() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        var description = RequestDescription(method: .post, url: server.url("/post"), body: .stream(fileDescriptor: ends[0]))
        description.options.timeout = 1.5
        let silentEnded = DispatchSemaphore(value: 0)
        let silentOutcome = Mutex<Response?>(nil)
        let silent = session.request(description)
        silent.onCompletion { response in
            silentOutcome.withLock { $0 = response }
            silentEnded.signal()
        }
        silent.resume()
        // The writer goes after 4 s, so that an engine that blocks on the pipe fails this
        // test rather than hanging it.
        let writer = ends[1]
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 4)
            close(writer)
        }
        Thread.sleep(forTimeInterval: 0.2)
        let started = Date()
        let otherEnded = DispatchSemaphore(value: 0)
        let otherStatus = Mutex<Int?>(nil)
        let other = session.request(RequestDescription(url: server.url("/get")))
        other.onCompletion { response in
            otherStatus.withLock { $0 = response.status }
            otherEnded.signal()
        }
        other.resume()
        #expect(otherEnded.wait(timeout: .now() + 10) == .success)
        #expect(otherStatus.withLock { $0 } == 200)
        #expect(Date().timeIntervalSince(started) < 1.0)
        #expect(silentEnded.wait(timeout: .now() + 10) == .success)
        guard case .transport(let failure)? = silentOutcome.withLock({ $0 })?.error else {
            Issue.record("expected a timeout, got \(String(describing: silentOutcome.withLock { $0 }?.error))")
            return
        }
        #expect(failure.kind == .timeout)
        #expect(server.hits("/post") == 0)
    }

    /// A suspended request stays suspended when its body's pipe gets bytes; resumed, it sends
    /// them, and the writer's going ends the body.
    @Test func aSuspendedRequestIsNotResumedByItsBodysPipe() throws {
        let session = Session()
        defer { session.shutdown() }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let request = session.request(RequestDescription(method: .post, url: server.url("/post"), body: .stream(fileDescriptor: ends[0])))
        let ended = DispatchSemaphore(value: 0)
        let status = Mutex<Int?>(nil)
        request.onCompletion { response in
            status.withLock { $0 = response.status }
            ended.signal()
        }
        request.resume()
        // The transfer starts and finds nothing in the pipe; the suspension is applied
        // before the bytes come.
        Thread.sleep(forTimeInterval: 0.3)
        request.suspend()
        Thread.sleep(forTimeInterval: 0.2)
        _ = Array("piped body".utf8).withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        Thread.sleep(forTimeInterval: 0.5)
        #expect(server.hits("/post") == 0)
        request.resume()
        #expect(ended.wait(timeout: .now() + 10) == .success)
        #expect(status.withLock { $0 } == 200)
        #expect(try #require(server.requests(to: "/post").last).bodyText == "piped body")
    }

    @Test func failuresAreThrown() async {
        let session = Session()
        defer { session.shutdown() }
        let request = session.request(RequestDescription(url: server.url("/status/404")), validation: StatusValidation(acceptable: [200...299]))
        await #expect(throws: AFError.responseValidationFailed(status: 404, reason: "Not Found")) {
            _ = try await request.serializingData()
        }
    }

    @Test func cancellingTheTaskCancelsTheTransfer() async throws {
        let session = Session()
        defer { session.shutdown() }
        defer { slowAnswer.signal() }
        let request = session.request(RequestDescription(url: server.url("/slow")))
        let task = Task { try await request.serializingData() }
        let started = Date()
        while server.hits("/slow") == 0, Date().timeIntervalSince(started) < 20 { try await Task.sleep(nanoseconds: 5_000_000) }
        // When the request ended, taken on the engine's thread: the awaiting task itself may
        // resume late when other suites keep the cooperative threads busy (under
        // ThreadSanitizer it once resumed 10.4 s after the cancellation).
        let ended = Mutex<Date?>(nil)
        request.onCompletion { _ in ended.withLock { $0 = Date() } }
        let cancelled = Date()
        task.cancel()
        // The server answers only when the test ends (or after 60 s): ending with a
        // cancellation, within seconds, shows the transfer was stopped.
        await #expect(throws: AFError.cancelled(.explicitly)) { _ = try await task.value }
        let end = try #require(ended.withLock { $0 })
        #expect(end.timeIntervalSince(cancelled) < 30)
        #expect(request.state == .cancelled)
    }

    @Test func streamingDeliversTheBodyInChunks() async throws {
        let session = Session()
        defer { session.shutdown() }
        let size = 3 << 20
        let stream = session.streamRequest(RequestDescription(url: server.url("/bytes/\(size)")))
        var received: [UInt8] = []
        var chunks = 0
        for try await chunk in stream {
            received.append(contentsOf: chunk)
            chunks += 1
        }
        #expect(received == TestData.bytes(count: size))
        #expect(chunks > 1)
        #expect(stream.head?.status == 200)
        #expect(stream.request.state == .finished)
    }

    @Test func aStreamEndsWithTheErrorThatEndedTheRequest() async {
        let session = Session()
        defer { session.shutdown() }
        let stream = session.streamRequest(RequestDescription(url: server.url("/status/503")))
        await #expect(throws: AFError.responseValidationFailed(status: 503, reason: "Service Unavailable")) {
            for try await _ in stream {}
        }
    }
}
