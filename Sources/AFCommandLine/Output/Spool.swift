import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// A temporary file that holds a response body until the request ends, so that a retried
/// attempt can be thrown away and memory stays flat. The file has no name; only the
/// descriptor keeps it.
final class Spool {
    private let fd: Int32
    private(set) var size = 0
    /// Keeps the file from filling its file system.
    private var room = TemporaryRoom()

    init(directory: String) throws(AFError) {
        fd = try FileIO.makeUnnamedFile(in: directory, prefix: "af-spool").mapError { failure in
            AFError.output(OutputFailure(kind: .writeFailed, message: failure.temporaryFileMessage(in: directory)))
        }.get()
    }

    deinit {
        close(fd)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        let code = FileIO.writeAll(fd, bytes, keeping: &room)
        guard code == 0 else {
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot write to a temporary file: \(POSIXFailure(code: code).description)"))
        }
        size += bytes.count
    }

    /// Forgets everything written.
    func reset() {
        _ = ftruncate(fd, 0)
        _ = lseek(fd, 0, SEEK_SET)
        size = 0
    }

    /// The first bytes written, up to `count`.
    func prefix(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: min(count, size))
        var filled = 0
        while filled < bytes.count {
            let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress.map { $0 + filled }, $0.count - filled, off_t(filled)) }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { break }
            filled += read
        }
        return Array(bytes.prefix(filled))
    }

    /// Reads the contents back in chunks.
    func replay(_ body: (UnsafeRawBufferPointer) throws(AFError) -> Void) throws(AFError) {
        try replay { chunk throws(AFError) in
            try body(chunk)
            return true
        }
    }

    /// Reads the contents back in chunks while `body` returns true.
    func replay(while body: (UnsafeRawBufferPointer) throws(AFError) -> Bool) throws(AFError) {
        _ = lseek(fd, 0, SEEK_SET)
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            let more = try buffer.withBytes { raw throws(AFError) in try body(UnsafeRawBufferPointer(rebasing: raw[0..<count])) }
            if !more { return }
        }
    }
}
