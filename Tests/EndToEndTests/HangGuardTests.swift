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
        #expect(result.err == "af: error: connecting to 127.0.0.1:\(silent.port) timed out after 500ms; check the address, or raise --connect-timeout\n")
    }

    @Test func pinCommandHonoursConnectTimeout() throws {
        let silent = try silentServer()
        let stalled = AF.run(["pin", "--connect-timeout=0.4", "127.0.0.1:\(silent.port)"], timeout: 10)
        #expect(stalled.status == 2)
        #expect(stalled.err.contains("timed out after 400ms"))
    }

    @Test func openIdlePipeWithItemsDoesNotHang() throws {
        let server = try TestServer()
        let result = AF.run([server.url("/echo"), "a=1"], stdin: .openPipe, timeout: 10)
        #expect(!result.timedOut)
        #expect(result.status == 0)
        #expect(server.requests.last?.bodyText == #"{"a": "1"}"#)
    }
}
