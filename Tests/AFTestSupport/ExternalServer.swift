import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server program from the system (nghttpd), started and stopped by a test.
public final class ExternalServer: @unchecked Sendable {
    public let port: Int
    private let process: Process

    /// Whether `name` is on the PATH.
    public static func available(_ name: String) -> Bool {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        return paths.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// A free TCP port on 127.0.0.1 (bound, then released).
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts nghttpd on 127.0.0.1 serving `directory`, with TLS (`key`, `certificate`) or
    /// cleartext HTTP/2 when they are nil. Waits until it accepts connections.
    public init(nghttpdServing directory: String, key: String?, certificate: String?) throws {
        port = Self.freePort()
        process = Process()
        let paths = ["/usr/sbin/nghttpd", "/usr/bin/nghttpd", "/usr/local/bin/nghttpd"]
        process.executableURL = URL(fileURLWithPath: paths.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "nghttpd")
        var arguments = ["-a", "127.0.0.1", "-d", directory]
        if key == nil { arguments.append("--no-tls") }
        arguments.append("\(port)")
        if let key, let certificate { arguments += [key, certificate] }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            close(fd)
            if connected == 0 { return }
            usleep(50_000)
        }
        throw ServerError.socket("nghttpd did not start on port \(port)")
    }

    deinit {
        // nghttpd ignores SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
