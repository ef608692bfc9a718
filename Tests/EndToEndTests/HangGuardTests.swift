import AFTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Stalled peers: af must give up on its own. These run the real binary so that, were af to
/// hang, the harness kills it after `timeout` instead of the whole suite hanging.
@Suite struct HangGuardTests {
    /// A listener that accepts but never speaks TLS: the handshake cannot finish.
    private func silentServer() throws -> TestServer {
        let silent = try TestServer()
        silent.route("/") { _, _ in .custom { _ in Thread.sleep(forTimeInterval: 5) } }
        return silent
    }

    @Test func connectTimeoutCoversAStalledHandshake() throws {
        let silent = try silentServer()
        let result = AF.run(["--connect-timeout=0.5", "https://127.0.0.1:\(silent.port)/"], timeout: 10)
        #expect(result.status == 2)
        // Connected, so the handshake is what is named, with the likely cause.
        #expect(result.err == "af: error: the TLS handshake with 127.0.0.1:\(silent.port) did not finish within 500ms; the server took the connection but did not answer in TLS: if that port serves plain HTTP, use http://; otherwise raise --connect-timeout\n")
    }

    /// The total timeout, shorter than the connect timeout or the only one given, stops a
    /// connection too. It was reported with the connect timeout's limit ("after 10s" when
    /// af gave up after 500ms), as "connecting" when the handshake had stalled, and with
    /// advice to raise --connect-timeout, which changes nothing while --timeout stops it.
    @Test(arguments: [["--timeout=0.5"], ["--connect-timeout=10", "--timeout=0.5"]])
    func theTotalTimeoutIsNamedWhenItStopsAConnection(limits: [String]) throws {
        let silent = try silentServer()
        let stalled = AF.run(limits + ["https://127.0.0.1:\(silent.port)/"], timeout: 10)
        #expect(stalled.status == 2)
        #expect(stalled.err == "af: error: the TLS handshake with 127.0.0.1:\(silent.port) did not finish within 500ms; the server took the connection but did not answer in TLS: if that port serves plain HTTP, use http://; otherwise raise --timeout\n")
        let unanswered = try UnansweredPort()
        let connecting = AF.run(limits + ["http://127.0.0.1:\(unanswered.port)/"], timeout: 10)
        #expect(connecting.status == 2)
        #expect(connecting.err == "af: error: connecting to 127.0.0.1:\(unanswered.port) timed out after 500ms; check the address, or raise --timeout\n")
        // Over https too: no connection, so no handshake began.
        let unconnected = AF.run(limits + ["https://127.0.0.1:\(unanswered.port)/"], timeout: 10)
        #expect(unconnected.err == "af: error: connecting to 127.0.0.1:\(unanswered.port) timed out after 500ms; check the address, or raise --timeout\n")
        // A connect timeout shorter than the total one is still the one named.
        let shorter = AF.run(["--connect-timeout=0.5", "--timeout=10", "http://127.0.0.1:\(unanswered.port)/"], timeout: 10)
        #expect(shorter.err == "af: error: connecting to 127.0.0.1:\(unanswered.port) timed out after 500ms; check the address, or raise --connect-timeout\n")
    }

    /// A proxy that does not answer timed out as "connecting to example.test:80", the host
    /// it was asked for, which sent the user to check the wrong machine.
    @Test func aProxyThatDoesNotAnswerIsNamedInTheTimeout() throws {
        let proxy = try UnansweredPort()
        let given = AF.run(["--connect-timeout=0.5", "--proxy=http:http://user:secret@127.0.0.1:\(proxy.port)", "http://example.test/"], timeout: 10)
        #expect(given.status == 2)
        #expect(given.err == "af: error: connecting to the proxy http://127.0.0.1:\(proxy.port) for example.test:80 timed out after 500ms; check the address, or raise --connect-timeout\n")
        let fromEnvironment = AF.run(["--connect-timeout=0.5", "https://example.test/"], environment: ["https_proxy": "http://127.0.0.1:\(proxy.port)"], timeout: 10)
        #expect(fromEnvironment.status == 2)
        #expect(fromEnvironment.err == "af: error: connecting to the proxy http://127.0.0.1:\(proxy.port) for example.test:443 timed out after 500ms; check the address, or raise --connect-timeout "
                + "(the proxy is set by https_proxy in the environment; unset it, or list the host in no_proxy, to connect directly)\n")
        // Without a proxy the host itself is named, as before.
        let direct = AF.run(["--connect-timeout=0.5", "http://127.0.0.1:\(proxy.port)/"], timeout: 10)
        #expect(direct.err == "af: error: connecting to 127.0.0.1:\(proxy.port) timed out after 500ms; check the address, or raise --connect-timeout\n")
    }

    /// A proxy's port that takes the connection and never answers the CONNECT (not a proxy,
    /// or a stuck one) was "connecting to the proxy … timed out; check the address", which
    /// was right.
    @Test func aProxyThatNeverAnswersTheConnectIsNamed() throws {
        // A listener that never accepts: the kernel completes the connection in its queue,
        // and nothing ever reads or answers it.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        #expect(ready)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let result = AF.run(["--connect-timeout=0.5", "--proxy=https:http://127.0.0.1:\(port)", "https://example.test/"], timeout: 10)
        #expect(result.status == 2)
        #expect(result.err == "af: error: the proxy http://127.0.0.1:\(port) took the connection but did not answer the CONNECT for example.test:443 within 500ms; check that what listens there is an HTTP proxy, or raise --connect-timeout\n")
    }

    /// A server that refuses a streamed upload after its head (413 here) while af waits for
    /// the next bytes of a pipe that goes on (`tail -f log | af post --chunked URL`): the
    /// answer ends the body and af, as curl does, instead of holding both until the pipe's
    /// writer closes (here never, and the server keeps the connection 20 s). A FIFO item sent
    /// chunked the same (`--check-status` makes the 413 exit 4).
    @Test func anErrorAnswerEndsABodyThatWaitsForItsPipe() throws {
        let refusal = Array("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 10\r\n\r\ntoo large\n".utf8)
        let server = try GreetingPort(greeting: refusal, readsRequest: false, holding: 20, delay: 0.3)
        let started = Date()
        let running = AF.start(["post", "--chunked", "http://127.0.0.1:\(server.port)/upload"], stdin: .openPipe)
        running.send(Array("first part\n".utf8))
        let result = running.wait(timeout: 10)
        #expect(!result.timedOut)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "too large\n")
        #expect(result.err.isEmpty, "\(result.err)")

        let directory = try TemporaryDirectory.make(prefix: "af-early-fifo")
        let fifo = directory + "/body"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The writer opens the FIFO and keeps it open, writing nothing more.
        let writer = open(fifo, O_RDWR)
        defer { close(writer) }
        // A port of its own: each holds its connection before it takes the next.
        let second = try GreetingPort(greeting: refusal, readsRequest: false, holding: 20, delay: 0.3)
        let fromFIFO = AF.run(["--check-status", "put", "--chunked", "http://127.0.0.1:\(second.port)/upload", "@\(fifo)"], timeout: 10)
        #expect(!fromFIFO.timedOut)
        #expect(fromFIFO.status == 4, "\(fromFIFO.err)")
        #expect(fromFIFO.out == "too large\n")
    }

    /// An answer below 300 that comes before the body is whole (a server that answers at once
    /// and reads on) leaves the body to its end, as curl does: af sends what the pipe gives
    /// until it closes.
    @Test func anEarlySuccessLeavesTheBodyToItsEnd() throws {
        let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n".utf8)
        let server = try GreetingPort(greeting: answer, readsRequest: false, holding: 20, delay: 0.3)
        let running = AF.start(["post", "--chunked", "http://127.0.0.1:\(server.port)/upload"], stdin: .openPipe)
        running.send(Array("first part\n".utf8))
        Thread.sleep(forTimeInterval: 1.5)
        #expect(running.isRunning, "af ended the body before its pipe did")
        running.send(Array("second part\n".utf8))
        running.closeInput()
        let result = running.wait(timeout: 10)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "ok\n")
    }

    @Test func pinCommandHonoursConnectTimeout() throws {
        let silent = try silentServer()
        let stalled = AF.run(["pin", "--connect-timeout=0.4", "127.0.0.1:\(silent.port)"], timeout: 10)
        #expect(stalled.status == 2)
        // af pin speaks only TLS, so "use http://" would be no advice.
        #expect(stalled.err == "af: error: the TLS handshake with 127.0.0.1:\(silent.port) did not finish within 400ms; the server took the connection but did not answer in TLS: if that port serves plain HTTP, it has no certificate to pin; otherwise raise --connect-timeout\n")
    }

    @Test func openIdlePipeWithItemsDoesNotHang() throws {
        let server = try TestServer()
        let result = AF.run([server.url("/echo"), "a=1"], stdin: .openPipe, timeout: 10)
        #expect(!result.timedOut)
        #expect(result.status == 0)
        #expect(server.requests.last?.bodyText == #"{"a": "1"}"#)
    }
}
