@testable import AFEngine
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
