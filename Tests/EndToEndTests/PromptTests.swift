import AFTestSupport
import Foundation
import Testing

/// The password prompt on a real terminal (a pseudo-terminal and a separate process).
@Suite struct PromptTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    @Test func passwordPromptOnATerminal() {
        let (output, status) = PTYRunner.run(["-a", "ada", "-b", "--pretty=none", server.url("/basic-auth/ada/typed")], input: "typed\n", waitFor: "Password for ada@127.0.0.1: ")
        #expect(status == 0)
        #expect(output.contains("Password for ada@127.0.0.1: "))
        #expect(!output.contains("typed"), "the password must not be echoed")
        #expect(output.contains(#"{"authenticated": true, "user": "ada"}"#))
    }

    @Test(arguments: [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)] as [(Int32, Int32)])
    func signalAtThePromptGivesTheTerminalItsEchoBack(signal: Int32, status: Int32) {
        let outcome = PTYRunner.run(["-a", "ada", server.url("/basic-auth/ada/pw")], signal: signal, waitFor: "Password for ada@127.0.0.1: ")
        #expect(outcome.status == status)
        #expect(outcome.echoes, "af left the terminal without echo")
        #expect(server.requests.isEmpty)
    }
}
