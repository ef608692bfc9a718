@testable import AFCommandLine
import Foundation

/// Runs af's whole command (parse, build, send, print) inside the test process through the
/// injected `Environment`, for tests that need no separate process: no spawn, and a
/// debugger or sanitizer sees everything.
enum InProcessAF {
    struct Result {
        var status: Int32
        var out: String
        var err: String
    }

    /// Runs `arguments` with standard input at /dev/null and a private config directory.
    static func run(_ arguments: [String], variables: [String: String] = [:]) throws -> Result {
        let directory = NSTemporaryDirectory() + "af-inprocess-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outPath = directory + "/out", errPath = directory + "/err"
        let stdin = open("/dev/null", O_RDONLY | O_CLOEXEC)
        let stdout = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let stderr = open(errPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            close(stdin)
            close(stdout)
            close(stderr)
        }
        var environment = Environment(arguments: arguments, variables: ["AF_CONFIG_DIR": directory + "/config", "HOME": directory])
        for (key, value) in variables { environment.variables[key] = value }
        environment.stdin = stdin
        environment.stdout = stdout
        environment.stderr = stderr
        let status = AFCommand.run(environment)
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return Result(status: status, out: out, err: err)
    }
}
