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

    /// A server that asks for a client certificate, and an encrypted key for one it accepts.
    private func clientCertificateSetup() throws -> (server: TestServer, certificate: String, key: String, ca: String) {
        let pki = TestPKI.shared
        var identity = try pki.issue(name: "prompt-mtls").identity
        identity.clientCAPath = pki.caCertificatePath
        let client = try pki.issue(name: "prompt-client", hosts: ["client"], client: true)
        let key = try pki.encryptedKey(of: client, password: "open sesame")
        return (try TestServer(tls: identity), client.certificatePath, key, "--verify=\(pki.caCertificatePath)")
    }

    /// HTTPie asks for an encrypted key's pass phrase when --cert-key-pass is not given; af
    /// left that to OpenSSL, whose prompt came from inside the handshake.
    @Test func passPhrasePromptForAnEncryptedKey() throws {
        let (tls, certificate, key, ca) = try clientCertificateSetup()
        let question = "Pass phrase for \(key): "
        let (output, status) = PTYRunner.run([ca, "--cert=\(certificate)", "--cert-key=\(key)", "-b", "--pretty=none", tls.url("/get")], input: "open sesame\n", waitFor: question)
        #expect(status == 0, "\(output)")
        #expect(output.contains(question))
        #expect(!output.contains("open sesame"), "the pass phrase must not be echoed")
        #expect(output.contains("\"target\": \"/get\""))
        let (wrong, refused) = PTYRunner.run([ca, "--cert=\(certificate)", "--cert-key=\(key)", tls.url("/get")], input: "guess\n", waitFor: question)
        #expect(refused == 66)
        #expect(wrong.contains("af: error: cannot use '\(key)' (from '--cert-key'): the pass phrase typed does not decrypt its private key; check the pass phrase"), "\(wrong)")
        #expect(tls.connections == 1)
    }

    /// A key in a FIFO (as `<(…)` makes) is read once and checked as a file is (it went to the
    /// handshake unchecked, exit 7, where OpenSSL once prompted for its pass phrase, twice, on
    /// the terminal or standard error): without a terminal to ask on, the missing pass phrase
    /// is named before anything is sent.
    @Test func anUncheckedEncryptedKeyIsNeverPromptedForByOpenSSL() throws {
        let (tls, certificate, key, ca) = try clientCertificateSetup()
        let directory = try TemporaryDirectory.make(prefix: "af-fifo-key")
        let fifo = directory + "/key"
        let script = "mkfifo '\(fifo)' && (cat '\(key)' > '\(fifo)' &) && exec timeout 20 '\(AF.binary)' \(ca) --cert='\(certificate)' --cert-key='\(fifo)' '\(tls.url("/get"))' < /dev/null"
        let (status, errors) = try AF.shell(script)
        #expect(status == 64)
        #expect(!errors.contains("pass phrase:"), "\(errors)")
        #expect(errors == "af: error: the private key in '\(fifo)' is encrypted and standard input is not a terminal to ask for its pass phrase on; give --cert-key-pass=PASS\n")
        #expect(tls.requests.isEmpty)
        #expect(tls.connections == 0)
        // With its pass phrase, the copy serves the handshake.
        let opened = directory + "/opened-key"
        let (good, goodErrors) = try AF.shell("mkfifo '\(opened)' && (cat '\(key)' > '\(opened)' &) && exec timeout 20 '\(AF.binary)' \(ca) --cert='\(certificate)' --cert-key='\(opened)' --cert-key-pass='open sesame' '\(tls.url("/get"))' < /dev/null > /dev/null")
        #expect(good == 0, "\(goodErrors)")
        #expect(tls.requests.count == 1)
    }

    /// Ctrl-Z at the password prompt: a shell puts its own terminal settings back when a job
    /// stops and does not put the job's back on `fg`, so af stopped with echo off, and the
    /// rest of the password was echoed once it went on. Now echo is on while af is stopped
    /// and off again when it continues; what was typed before and after is one password.
    @Test func ctrlZAtThePromptGivesEchoBackUntilItContinues() {
        var echoedWhileStopped = false
        var silencedAgain = false
        let outcome = PTYRunner.runAsJob(["-a", "ada", "-b", server.url("/basic-auth/ada/pw")], waitFor: "Password for ada@127.0.0.1: ") { process, master in
            let pid = process.processIdentifier
            _ = write(master, "p", 1)
            kill(pid, SIGTSTP)
            echoedWhileStopped = Self.within(seconds: 5) { Self.state(of: pid) == "T" } && Self.echoes(master)
            kill(pid, SIGCONT)
            silencedAgain = Self.within(seconds: 5) { !Self.echoes(master) }
            _ = write(master, "w\n", 2)
        }
        #expect(echoedWhileStopped)
        #expect(silencedAgain)
        #expect(outcome.status == 0, "\(outcome.output)")
        #expect(outcome.echoes)
        #expect(!outcome.output.contains("w\r\n"), "\(outcome.output)")
        #expect(server.requests.last?.header("Authorization") == "Basic YWRhOnB3")
    }

    /// Whether `condition` holds within `seconds`, asked every 10 ms.
    private static func within(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// The state letter of process `pid` (`T` when stopped), from /proc.
    private static func state(of pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// Whether the terminal (asked through its master side) echoes input.
    private static func echoes(_ master: Int32) -> Bool {
        var settings = termios()
        return tcgetattr(master, &settings) == 0 && settings.c_lflag & tcflag_t(ECHO) != 0
    }

    @Test(arguments: [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)] as [(Int32, Int32)])
    func signalAtThePromptGivesTheTerminalItsEchoBack(signal: Int32, status: Int32) {
        let outcome = PTYRunner.run(["-a", "ada", server.url("/basic-auth/ada/pw")], signal: signal, waitFor: "Password for ada@127.0.0.1: ")
        #expect(outcome.status == status)
        #expect(outcome.echoes, "af left the terminal without echo")
        #expect(server.requests.isEmpty)
    }
}
