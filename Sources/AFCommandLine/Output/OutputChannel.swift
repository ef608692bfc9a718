import AFEngine
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A file descriptor that af writes to (standard output or error), safe to share between the
/// transfer thread and the main thread.
///
/// Writes go straight to the descriptor; a reader that has gone away (`EPIPE`) is remembered
/// so the run can end at once and quietly.
final class OutputChannel: Sendable {
    let fd: Int32
    let isTerminal: Bool
    /// Rewrites each message written as text (`af batch` names the line in it).
    let rewrite: (@Sendable (String) -> String)?
    private let state = Mutex(false)

    init(fd: Int32, isTerminal: Bool, rewrite: (@Sendable (String) -> String)? = nil) {
        self.fd = fd
        self.isTerminal = isTerminal
        self.rewrite = rewrite
    }

    /// Whether the reader has gone away.
    var isClosed: Bool { state.withLock { $0 } }

    /// Writes all bytes; throws `.output` when the descriptor fails (a closed pipe included).
    func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        guard !bytes.isEmpty else { return }
        let failure: AFError? = state.withLock { closed in
            if closed { return Self.closedError }
            let code = FileIO.writeAll(fd, bytes)
            if code == 0 { return nil }
            if code == EPIPE {
                closed = true
                return Self.closedError
            }
            return AFError.output(OutputFailure(kind: .writeFailed, message: "cannot write the output: \(POSIXFailure(code: code).description)"))
        }
        if let failure { throw failure }
    }

    /// Copies `count` bytes of the file `source` from `offset` on, in the kernel where it can
    /// (`sendfile`), else through `buffer`.
    func copy(from source: Int32, offset: Int64, count: Int64, buffer: UnsafeMutableRawBufferPointer) throws(AFError) {
        let failure: AFError? = state.withLock { closed in
            if closed { return Self.closedError }
            var position = off_t(offset)
            let end = off_t(offset + count)
            var kernelCopies = true
            while position < end {
                let wanted = Int(min(end - position, off_t(buffer.count)))
                var moved: Int
                if kernelCopies {
                    moved = sendfile(fd, source, &position, wanted)
                    if moved < 0, errno == EINVAL || errno == ENOSYS {
                        kernelCopies = false
                        continue
                    }
                } else {
                    moved = pread(source, buffer.baseAddress, wanted, position)
                    if moved > 0 {
                        let code = FileIO.writeAll(fd, UnsafeRawBufferPointer(rebasing: buffer[..<moved]))
                        if code != 0 {
                            errno = code
                            moved = -1
                        } else {
                            position += off_t(moved)
                        }
                    }
                }
                if moved < 0 {
                    let code = errno
                    if code == EINTR || code == EAGAIN { continue }
                    if code == EPIPE {
                        closed = true
                        return Self.closedError
                    }
                    return AFError.output(OutputFailure(kind: .writeFailed, message: "cannot write the output: \(POSIXFailure(code: code).description)"))
                }
                if moved == 0 { break }
            }
            return nil
        }
        if let failure { throw failure }
    }

    func write(_ bytes: [UInt8]) throws(AFError) {
        try bytes.withBytes { buffer throws(AFError) in try write(buffer) }
    }

    func write(_ text: String) throws(AFError) {
        try write(Array((rewrite?(text) ?? text).utf8))
    }

    /// Writes, ignoring failures (for standard error messages).
    func writeQuietly(_ text: String) {
        try? write(text)
    }

    static let closedError = AFError.output(OutputFailure(kind: .writeFailed, message: "standard output was closed"))
}
