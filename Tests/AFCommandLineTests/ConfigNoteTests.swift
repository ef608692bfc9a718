@testable import AFCommandLine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// An error line that names an option the config file set says so: nothing on the command
/// line shows where `raise --timeout` came from.
@Suite struct ConfigNoteTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make()
    }

    @Test func aTimeoutFromTheConfigFileIsNamedAsSuch() throws {
        try TemporaryDirectory.writeConfig(defaultOptions: ["--timeout=0.3"], in: directory)
        let result = InProcessAF.run([server.url("/delay/3")], environment: ["AF_CONFIG_DIR": directory])
        #expect(result.status == 2)
        #expect(result.err == "af: error: no complete response from 127.0.0.1:\(server.port) within 300ms; raise --timeout if it needs longer "
                + "(--timeout comes from the config file '\(directory)/config.json')\n")
        // Given again on the command line, it is the user's own: no note.
        let given = InProcessAF.run(["--timeout=0.3", server.url("/delay/3")], environment: ["AF_CONFIG_DIR": directory])
        #expect(given.err == "af: error: no complete response from 127.0.0.1:\(server.port) within 300ms; raise --timeout if it needs longer\n")
    }

    /// A batch option in the config file is the default of af batch: every other run failed
    /// with "--parallel is an option of af batch". On the command line it is still refused.
    @Test func aSubcommandsOptionInTheConfigFileIsItsDefaultNotAnErrorElsewhere() throws {
        try TemporaryDirectory.writeConfig(defaultOptions: ["--parallel=2", "--fail-fast"], in: directory)
        let environment = ["AF_CONFIG_DIR": directory]
        let single = InProcessAF.run([server.url("/get")], environment: environment)
        #expect(single.status == 0, "\(single.err)")
        #expect(server.requests(to: "/get").count == 1)
        let lines = try TemporaryDirectory.write("\(server.url("/delay/0.5"))\n\(server.url("/delay/0.5"))\n", named: "lines.txt", in: directory)
        let started = Date()
        let batch = InProcessAF.run(["batch", lines], environment: environment)
        #expect(batch.status == 0, "\(batch.err)")
        // Two at once, as the config file says: one at a time would take 1 s.
        #expect(Date().timeIntervalSince(started) < 0.95)
        let given = InProcessAF.run(["--rate=2/s", server.url("/get")], environment: environment)
        #expect(given.status == 64)
        #expect(given.err == "af: error: --rate is an option of af batch: af batch --rate… FILE runs one request per line of FILE\n")
        #expect(server.requests(to: "/get").count == 1)
    }

    /// A subcommand's option given outside it is named as such, also when it took the URL for
    /// its value (curl's --parallel is a flag; af's takes a number), and nothing is sent.
    @Test(arguments: [
        (["--parallel"], "--parallel is an option of af batch: af batch --parallel… FILE runs one request per line of FILE"),
        (["--rate"], "--rate is an option of af batch: af batch --rate… FILE runs one request per line of FILE"),
        (["--file"], "--file is an option of af pin: af pin --file CERT prints the pins of a certificate file"),
    ])
    func aSubcommandsOptionThatTookTheURLIsNamed(options: [String], message: String) {
        let result = InProcessAF.run(options + [server.url("/get")])
        #expect(result.status == 64)
        #expect(result.err == "af: error: \(message)\n")
        #expect(server.requests(to: "/get").isEmpty)
    }

    @Test(arguments: [("--help", "the help"), ("--version", "the version")])
    func helpOrVersionInTheConfigFileIsRefused(option: String, shown: String) throws {
        try TemporaryDirectory.writeConfig(defaultOptions: [option], in: directory)
        let result = InProcessAF.run([server.url("/get")], environment: ["AF_CONFIG_DIR": directory])
        #expect(result.status == 64)
        #expect(result.err == "af: error: the config file '\(directory)/config.json' gives \(option), which would make every run print \(shown) and send nothing; "
                + "remove it from \"default_options\"\n")
        #expect(result.out.isEmpty)
        #expect(server.requests.isEmpty)
    }

    @Test func aMessageThatNamesNoConfiguredOptionGetsNoNote() throws {
        try TemporaryDirectory.writeConfig(defaultOptions: ["--timeout=30", "--max-redirects=3"], in: directory)
        let result = InProcessAF.run(["http://127.0.0.1:1/x"], environment: ["AF_CONFIG_DIR": directory])
        #expect(result.err == "af: error: connection refused by 127.0.0.1:1; is the server running?\n")
    }

    @Test func anOptionIsNamedWholeNotAsThePrefixOfAnother() {
        #expect(Settings.names("raise --timeout if", option: "timeout"))
        #expect(Settings.names("raise --timeout", option: "timeout"))
        #expect(Settings.names("(--timeout=2)", option: "timeout"))
        #expect(!Settings.names("raise --timeouts", option: "timeout"))
        #expect(!Settings.names("--connect-timeout", option: "timeout"))
        #expect(!Settings.names("--timeout-x", option: "timeout"))
        #expect(!Settings.names("", option: "timeout"))
        #expect(Settings.names("--connect-timeout and --timeout", option: "timeout"))
    }
}
