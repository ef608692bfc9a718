import Foundation

/// Runs a program other than af (a shell, dpkg-deb, tar) and collects what it printed.
public enum Command {
    /// Runs `executable` (looked up on PATH) with `arguments`; stdout and stderr together.
    public static func run(
        _ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String] = [:]
    ) throws -> (output: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        var variables = ProcessInfo.processInfo.environment
        for (key, value) in environment { variables[key] = value }
        process.environment = variables
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), process.terminationStatus)
    }
}
