import AFTestSupport
import Foundation
import Testing

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
