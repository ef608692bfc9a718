import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// A response body held until the request ends, so that a retried attempt can be thrown away
/// (`--retry`) or the body printed after it (`--report=json`): in memory while it is small,
/// in a temporary file once it outgrows `memoryLimit`, so memory stays flat whatever the
/// body's size, and a small body needs no file (nor a writable `TMPDIR`). The file has no
/// name; only the descriptor keeps it.
final class Spool {
    /// What a body may hold in memory before it moves to a file.
    static let memoryLimit = 1 << 20

    private let directory: String
    /// The body while it fits in memory.
    private var bytes: [UInt8] = []
    /// The file the body moved to, or -1.
    private var fd: Int32 = -1
    private(set) var size = 0
    /// Keeps the file from filling its file system.
    private var room = TemporaryRoom()

    /// A spool whose file, when it needs one, is made in `directory`.
    init(directory: String) {
        self.directory = directory
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    func write(_ more: UnsafeRawBufferPointer) throws(AFError) {
        if fd < 0, size + more.count <= Self.memoryLimit {
            bytes.append(contentsOf: more)
            size += more.count
            return
        }
        if fd < 0 { try moveToFile() }
        try writeToFile(more)
        size += more.count
    }

    /// Forgets everything written.
    func reset() {
        bytes = []
        if fd >= 0 {
            _ = ftruncate(fd, 0)
            _ = lseek(fd, 0, SEEK_SET)
        }
        size = 0
    }

    /// The first bytes written, up to `count`.
    func prefix(_ count: Int) -> [UInt8] {
        guard fd >= 0 else { return Array(bytes.prefix(count)) }
        var prefix = [UInt8](repeating: 0, count: min(count, size))
        var filled = 0
        while filled < prefix.count {
            let read = prefix.withUnsafeMutableBytes { pread(fd, $0.baseAddress.map { $0 + filled }, $0.count - filled, off_t(filled)) }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { break }
            filled += read
        }
        return Array(prefix.prefix(filled))
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
        guard fd >= 0 else {
            if !bytes.isEmpty { _ = try bytes.withBytes { held throws(AFError) in try body(held) } }
            return
        }
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

    /// Makes the file and writes what memory held to it.
    private func moveToFile() throws(AFError) {
        let directory = directory
        fd = try FileIO.makeUnnamedFile(in: directory, prefix: "af-spool").mapError { failure in
            AFError.output(OutputFailure(kind: .writeFailed, message: failure.temporaryFileMessage(in: directory)))
        }.get()
        let held = bytes
        bytes = []
        try held.withBytes { raw throws(AFError) in try writeToFile(raw) }
    }

    private func writeToFile(_ more: UnsafeRawBufferPointer) throws(AFError) {
        // A local, not the property, is what is handed on inout (ThreadSanitizer's
        // instrumentation of captured inout parameters faults in Swift 6.3.1).
        var room = self.room
        let code = FileIO.writeAll(fd, more, keeping: &room)
        self.room = room
        guard code == 0 else {
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot write to a temporary file: \(POSIXFailure(code: code).description)"))
        }
    }
}
