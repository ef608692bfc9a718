import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 where a connection is never set up: a listener with a full queue that
/// never accepts, so the kernel drops further SYNs and a client's `connect` waits until its own
/// timeout, as with a host that does not answer.
public final class UnansweredPort: @unchecked Sendable {
    public let port: Int
    private var descriptors: [Int32] = []

    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ServerError.socket("socket: \(errno)") }
        descriptors.append(listener)
        var address = sockaddr_in.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 0) == 0 else { throw ServerError.socket("bind: \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        // Connections that fill the accept queue (a backlog of 0 holds one; a few more to be
        // sure), left pending without being accepted.
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard filler >= 0 else { continue }
            descriptors.append(filler)
            var target = sockaddr_in.loopback(port: port)
            _ = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        // Let the handshakes of the fillers land in the queue before a test connects.
        Thread.sleep(forTimeInterval: 0.05)
    }

    deinit {
        for descriptor in descriptors { close(descriptor) }
    }

}
