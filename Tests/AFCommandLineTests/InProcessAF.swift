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
        return Result(status: status, out: readAll(outPath), err: readAll(errPath))
    }

    /// The file's text, read with plain POSIX calls (Foundation's reader leaks a block per
    /// small file under LeakSanitizer).
    private static func readAll(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
