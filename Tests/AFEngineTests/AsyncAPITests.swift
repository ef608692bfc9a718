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
