@_spi(Locking) @testable import AFEngine
import AFTestSupport
import Foundation
import Testing

/// Sessions end: their thread exits and libcurl's handles are freed, whether shut down
/// explicitly or simply dropped.
@Suite struct SessionLifecycleTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
        server.route("/slow") { _, _ in
            usleep(2_000_000)
            return .response(status: 200, body: Array("late\n".utf8))
        }
    }

    private static func count(_ directory: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: directory).count) ?? -1
    }

    /// Threads and descriptors of this process, once they have settled (threads exit a
    /// moment after their session lets go).
    private static func settledCounts(atMost limits: (threads: Int, descriptors: Int)? = nil) -> (threads: Int, descriptors: Int) {
        var counts = (threads: count("/proc/self/task"), descriptors: count("/proc/self/fd"))
        guard let limits else { return counts }
        let deadline = Date().addingTimeInterval(5)
        while (counts.threads > limits.threads || counts.descriptors > limits.descriptors), Date() < deadline {
            usleep(10_000)
            counts = (count("/proc/self/task"), count("/proc/self/fd"))
        }
        return counts
    }

    @Test func aThousandSessionsLeaveNoThreadsOrDescriptorsBehind() {
        // Warm up: libcurl's global state and the test server's first connection.
        _ = Session().request(RequestDescription(url: server.url("/get"))).resume().waitForCompletion()
        let before = Self.settledCounts()
        for index in 0..<1000 {
            let session = Session()
            let response = session.request(RequestDescription(url: server.url("/get?n=\(index)"))).resume().waitForCompletion()
            #expect(response.status == 200)
            // Half are shut down explicitly, half are just dropped.
            if index.isMultiple(of: 2) { session.shutdown() }
        }
        // Other suites run in parallel in this process and start threads and connections of
        // their own (test servers, sessions, slow routes), so the bound leaves room for them;
        // a leak here would be a thousand threads and a thousand connections.
        let after = Self.settledCounts(atMost: (before.threads + 64, before.descriptors + 128))
        #expect(after.threads <= before.threads + 64, "threads: \(before.threads) before, \(after.threads) after")
        #expect(after.descriptors <= before.descriptors + 128, "descriptors: \(before.descriptors) before, \(after.descriptors) after")
    }

    /// `shutdownAndWait()` returns once the session's thread has ended, having let go of
    /// everything: a finished request (whose completion reached the caller before the thread
    /// was done with it) and a session sharing the thread are gone when it returns, every
    /// time. (Without the wait a program exiting at once could leave them behind, which
    /// LeakSanitizer reported as a leaked weak-reference side table.)
    @Test func shutdownAndWaitReturnsOnceTheThreadHasLetGoOfEverything() {
        for index in 0..<50 {
            let session = Session()
            weak var request: Request?
            weak var sharing: Session?
            do {
                let other = Session(configuration: Session.Configuration(), sharingConnectionsWith: session)
                sharing = other
                let made = other.request(RequestDescription(url: server.url("/get?n=\(index)")))
                request = made
                #expect(made.resume().waitForCompletion().status == 200)
            }
            #expect(session.driver.loopIsRunning, "round \(index): the thread was expected to run")
            #expect(session.shutdownAndWait(timeout: 10))
            #expect(!session.driver.loopIsRunning, "round \(index): the thread still runs")
            #expect(request == nil, "round \(index): the request outlived the thread")
            #expect(sharing == nil, "round \(index): the sharing session outlived the thread")
        }
    }

    /// While another session still uses the thread, the wait ends at its timeout, saying
    /// the thread runs on; once that session goes, the thread ends.
    @Test func shutdownAndWaitGivesUpAtItsTimeoutWhileTheThreadIsShared() {
        let session = Session()
        var other: Session? = Session(configuration: Session.Configuration(), sharingConnectionsWith: session)
        #expect(other?.request(RequestDescription(url: server.url("/get"))).resume().waitForCompletion().status == 200)
        let started = Date()
        #expect(!session.shutdownAndWait(timeout: 0.2))
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.15 && waited < 5, "waited \(waited) s")
        #expect(session.driver.loopIsRunning)
        other = nil
        #expect(session.shutdownAndWait(timeout: 10))
        #expect(!session.driver.loopIsRunning)
    }

    @Test func shutdownCancelsWhatIsInFlightAndRefusesNewRequests() {
        let session = Session()
        let slow = session.request(RequestDescription(url: server.url("/slow"))).resume()
        let started = Date()
        while server.hits("/slow") == 0, Date().timeIntervalSince(started) < 5 { usleep(5000) }
        session.shutdown()
        let response = slow.waitForCompletion()
        #expect(response.error == .cancelled(.sessionShutDown))
        #expect(Date().timeIntervalSince(started) < 1.9)
        #expect(session.isShutDown)
        let late = session.request(RequestDescription(url: server.url("/get"))).resume().waitForCompletion()
        #expect(late.error == .cancelled(.sessionShutDown))
        #expect(late.attempts.isEmpty)
    }

    /// Every request the session holds is cancelled, however many: the first one made, the
    /// later ones, and one never resumed; then the thread ends.
    @Test func shutdownCancelsEveryRequestItHolds() {
        let session = Session()
        let slow = (0..<3).map { _ in session.request(RequestDescription(url: server.url("/slow"))).resume() }
        let idle = session.request(RequestDescription(url: server.url("/get")))
        let ended = DispatchSemaphore(value: 0)
        let errors = Protected<[AFError?]>([])
        for request in slow + [idle] {
            request.onCompletion { response in
                errors.write { $0.append(response.error) }
                ended.signal()
            }
        }
        let started = Date()
        while server.hits("/slow") < 3, Date().timeIntervalSince(started) < 5 { usleep(5000) }
        session.shutdown()
        // Bounded: a request the shutdown missed would never end.
        for _ in 0..<4 { _ = ended.wait(timeout: .now() + 5) }
        #expect(errors.value == Array(repeating: AFError.cancelled(.sessionShutDown), count: 4))
        #expect(Date().timeIntervalSince(started) < 1.9)
        #expect(session.shutdownAndWait(timeout: 10))
        #expect(server.hits("/get") == 0)
    }

    @Test func sessionsSharingConnectionsKeepTheThreadUntilTheLastLetsGo() {
        let first = Session()
        let second = Session(configuration: Session.Configuration(), sharingConnectionsWith: first)
        #expect(first.request(RequestDescription(url: server.url("/get"))).resume().waitForCompletion().status == 200)
        first.shutdown()
        let response = second.request(RequestDescription(url: server.url("/get"))).resume().waitForCompletion()
        #expect(response.status == 200, "the shared thread still runs for the second session")
        #expect(Set(server.requests.map(\.connection)).count == 1, "the second session reused the first one's connection")
        second.shutdown()
    }
}
