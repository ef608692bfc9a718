@testable import AFEngine
import AFTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a thread of its own and waits at most `seconds` for it, so that a call
/// that would hang fails its test instead of hanging the suite. (Swift Testing's time limits
/// also count the time a test waits for a thread of its shared pool, which long tests of
/// other suites hold under ThreadSanitizer: a one-minute limit failed that way in CI.)
func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    return done.wait(timeout: .now() + seconds) == .success
}

/// A session's loop watches descriptors (`Session.watch(fileDescriptor:handler:)`), and a
/// library user may start and stop watching from any thread.
@Suite struct WatchTests {
    /// A pipe (its read end non-blocking) whose ends close when the test is done.
    final class Pipe: @unchecked Sendable {
        let read: Int32, write: Int32

        init() {
            var ends: [Int32] = [0, 0]
            precondition(Glibc.pipe(&ends) == 0)
            read = ends[0]
            write = ends[1]
            _ = fcntl(read, F_SETFL, O_NONBLOCK)
        }

        func send(_ text: String) {
            _ = Array(text.utf8).withUnsafeBytes { Glibc.write(write, $0.baseAddress, $0.count) }
        }

        /// Reads whatever is there.
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 64)
            while Glibc.read(read, &buffer, buffer.count) > 0 {}
        }

        /// Whether input waits to be read.
        var readable: Bool {
            var poller = pollfd(fd: read, events: Int16(POLLIN), revents: 0)
            return poll(&poller, 1, 0) == 1
        }

        deinit {
            close(read)
            close(write)
        }
    }

    /// Counts handler calls; the test thread waits for them.
    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        let arrived = DispatchSemaphore(value: 0)
        func record() { lock.withLock { count += 1 }; arrived.signal() }
        var total: Int { lock.withLock { count } }
    }

    /// Starts the session's thread and waits until its loop runs, and a little longer, so
    /// that it is idle in its wait (which lasts up to a minute) when the test goes on.
    private func running() -> Session {
        let session = Session()
        let started = DispatchSemaphore(value: 0)
        session.async { started.signal() }
        started.wait()
        usleep(200_000)
        return session
    }

    /// Watching from another thread wakes the running loop: an idle loop waits up to a
    /// minute, and the handler used to be called only after that.
    @Test func watchingFromAnotherThreadTakesEffectOnARunningLoop() {
        let session = running()
        defer { session.shutdown() }
        let pipe = Pipe(), calls = Calls()
        let started = Date()
        session.watch(fileDescriptor: pipe.read) { pipe.drain(); calls.record() }
        pipe.send("x")
        #expect(calls.arrived.wait(timeout: .now() + 10) == .success)
        #expect(Date().timeIntervalSince(started) < 5)
        session.stopWatching(fileDescriptor: pipe.read)
    }

    /// Once `stopWatching` returns on another thread the handler is never called again, so
    /// the descriptor may be closed; it used to be applied at the loop's next turn, after
    /// one more call for input that had arrived meanwhile.
    @Test func stoppingFromAnotherThreadEndsTheCallsBeforeItReturns() {
        let session = running()
        defer { session.shutdown() }
        let pipe = Pipe(), calls = Calls()
        // Watched from the loop's own thread, where it takes effect at once.
        session.async { session.watch(fileDescriptor: pipe.read) { pipe.drain(); calls.record() } }
        pipe.send("a")
        #expect(calls.arrived.wait(timeout: .now() + 10) == .success)
        usleep(200_000)
        #expect(finishes(within: 30) { session.stopWatching(fileDescriptor: pipe.read) })
        let before = calls.total
        pipe.send("b")
        usleep(300_000)
        #expect(calls.total == before)
        #expect(pipe.readable, "nothing read what came after stopWatching")
    }

    /// Watching queued while no loop runs starts no thread, and is taken up by a loop that
    /// runs later, before it first waits.
    @Test func watchingBeforeTheLoopRunsTakesEffectWhenItDoes() {
        let session = Session()
        defer { session.shutdown() }
        let pipe = Pipe(), calls = Calls()
        session.watch(fileDescriptor: pipe.read) { pipe.drain(); calls.record() }
        pipe.send("x")
        #expect(calls.arrived.wait(timeout: .now() + 0.3) == .timedOut, "no loop runs yet")
        session.async {}
        #expect(calls.arrived.wait(timeout: .now() + 10) == .success)
        session.stopWatching(fileDescriptor: pipe.read)
    }
}

/// Work that must run on a session's loop (its cookie engine) after that loop has ended: it
/// was queued for a loop that dropped it unrun, and the caller waited forever.
@Suite struct EndedLoopTests {
    /// Cookie names read on the worker thread of `finishes`, then by the test.
    final class Names: @unchecked Sendable {
        var before: [String] = []
        var after: [String] = []
    }

    @Test func cookiesCanBeReadAndAddedAfterShutdown() throws {
        let server = try TestServer()
        let session = Session()
        let response = session.request(RequestDescription(url: server.url("/cookies/set?a=1"))).resume().waitForCompletion()
        #expect(response.status == 200)
        session.shutdown()
        let names = Names()
        let finished = finishes(within: 30) {
            names.before = session.exportCookies().map(\.name)
            session.importCookies([Cookie(name: "b", value: "2", domain: "127.0.0.1")])
            names.after = session.exportCookies().map(\.name).sorted()
        }
        #expect(finished)
        guard finished else { return }
        #expect(names.before == ["a"])
        #expect(names.after == ["a", "b"])
    }
}

/// Waiting for a request on the thread that runs it can never end; it stops the program
/// with a message instead of hanging it.
@Suite struct WaitingOnTheLoopTests {
    @Test func waitingOnTheTransferThreadStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let session = Session()
            let request = session.request(RequestDescription(url: "http://127.0.0.1:9/"))
            session.async { _ = request.waitForCompletion() }
            // Without the check the transfer thread waits for itself and this returns.
            sleep(10)
        }
        let errors = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(errors.contains("cannot wait on the session's transfer thread"), "\(errors)")
    }
}
