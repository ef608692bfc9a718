import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A byte stream to a client: a plain socket or a TLS session over one.
protocol Channel: AnyObject {
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Wakes a blocked read or write from another thread without releasing anything, so that
    /// the descriptor cannot be reused under the thread that owns it.
    func interrupt()
    /// Releases the connection; only the thread that serves it calls this.
    func close()
}

/// A plain TCP or Unix socket.
final class SocketChannel: Channel {
    let fd: Int32
    private var closed = false

    init(fd: Int32) {
        self.fd = fd
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            return count
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }

    func interrupt() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    func close() {
        guard !closed else { return }
        closed = true
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}
