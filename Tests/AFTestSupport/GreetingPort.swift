import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 that writes fixed bytes to every connection as soon as it is made, and
/// closes it: what a client meets at a port that speaks another protocol first (an SSH
/// banner), or a plain HTTP server answering a TLS handshake with "400 Bad Request". With
/// `readsRequest` false it reads nothing and closes `holding` seconds (one) after writing, so
/// the kernel resets a connection whose client was still sending (a server answering an
/// upload early, or one that stopped taking it). With `delay`, the bytes are written that
/// many seconds after the connection is made (an answer that comes after the request head,
/// while the client waits to send more of its body).
public final class GreetingPort: @unchecked Sendable {
    public let port: Int
    private let listener: Int32

    public init(greeting: [UInt8], readsRequest: Bool = true, holding: Double = 1, delay: Double = 0) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ServerError.socket("socket: \(errno)") }
        var address = sockaddr_in.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw ServerError.socket("bind: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        let accepting = listener
        Thread.detachNewThread {
            while true {
                let connection = accept(accepting, nil, nil)
                guard connection >= 0 else {
                    // Closed here, not in deinit: this thread may be holding a connection
                    // when the port goes, and would then accept on the closed descriptor's
                    // number, which another socket of the process (a test's server) may
                    // have been given, and answer its requests.
                    close(accepting)
                    return
                }
                if delay > 0 { Thread.sleep(forTimeInterval: delay) }
                _ = greeting.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard readsRequest else {
                    Thread.sleep(forTimeInterval: holding)
                    close(connection)
                    continue
                }
                // Let the client's bytes be read and dropped, so closing sends no reset.
                var scratch = [UInt8](repeating: 0, count: 4096)
                shutdown(connection, Int32(SHUT_WR))
                var timeout = timeval(tv_sec: 1, tv_usec: 0)
                setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                while recv(connection, &scratch, scratch.count, 0) > 0 {}
                close(connection)
            }
        }
    }

    deinit {
        // Ends the accept loop, which closes the listener.
        shutdown(listener, Int32(SHUT_RDWR))
    }
}

extension sockaddr_in {
    /// 127.0.0.1:`port`.
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
