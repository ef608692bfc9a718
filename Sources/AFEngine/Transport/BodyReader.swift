#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Feeds a request body to libcurl's read callback, one buffer at a time.
///
/// Files are opened when their turn comes and read straight into libcurl's buffer, so memory
/// stays flat whatever the body size. Confined to the transfer driver's thread.
///
/// A body that comes from a pipe (standard input, a FIFO, `@<(command)`) may have nothing
/// to give for a while: `readAvailable` then says which descriptor to wait on rather than
/// block the thread every transfer of the session runs on. A file that is not a regular
/// file is opened non-blocking, so that a FIFO whose writer has not come yet does not hold
/// up the open either.
final class BodyReader {
    /// What one call to `readAvailable` gave.
    enum Chunk: Equatable {
        /// This many bytes were copied; 0: the body is complete.
        case bytes(Int)
        /// Nothing now: the next bytes (or the end) come when `fd` is readable or hung up.
        case waiting(on: Int32)
    }

    private let segments: [BodySegment]
    private let stream: Int32?
    private var index = 0
    private var offset = 0
    private var fd: Int32 = -1
    /// Bytes still to read from the open file; nil: read to its end.
    private var fileRemaining: Int64? = 0

    /// Bytes handed to libcurl so far.
    private(set) var bytesRead: Int64 = 0

    init(body: RequestBody) throws(AFError) {
        switch body {
        case .empty:
            segments = []
            stream = nil
        case .bytes(let bytes):
            segments = [.bytes(bytes)]
            stream = nil
        case .file(let path):
            segments = [.file(path: path, size: try FileInfo.size(ofFileAt: path))]
            stream = nil
        case .multipart(let form):
            segments = try form.segments()
            stream = nil
        case .stream(let descriptor):
            segments = []
            stream = descriptor
        }
    }

    deinit {
        closeFile()
    }

    /// Copies up to `buffer.count` bytes into `buffer`, waiting for a pipe to give them; 0
    /// means the body is complete. For bodies read before the transfer (compression).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AFError) -> Int {
        while true {
            switch try readAvailable(into: buffer) {
            case .bytes(let count): return count
            case .waiting(let fd): try Self.awaitInput(fd)
            }
        }
    }

    /// Copies up to `buffer.count` bytes into `buffer` without waiting for a pipe.
    func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws(AFError) -> Chunk {
        if let stream { return try readStream(stream, into: buffer) }
        while index < segments.count {
            switch segments[index] {
            case .bytes(let bytes):
                let count = min(buffer.count, bytes.count - offset)
                if count > 0 {
                    bytes.withUnsafeBytes { source in
                        guard let from = source.baseAddress, let to = buffer.baseAddress else { return }
                        to.copyMemory(from: from + offset, byteCount: count)
                    }
                    offset += count
                    bytesRead += Int64(count)
                    return .bytes(count)
                }
                advance()
            case .file(let path, let size):
                if fd < 0 {
                    // Not a regular file (size unknown): a FIFO opened for reading waits in
                    // `open` for its writer unless opened non-blocking.
                    let flags = O_RDONLY | O_CLOEXEC | (size == nil ? O_NONBLOCK : 0)
                    switch FileIO.opening(path, flags: flags) {
                    case .descriptor(let opened): fd = opened
                    case .failed(let failure): throw .inputUnreadable(path: path, reason: failure.description)
                    case .interrupted(let reason): throw .cancelled(reason)
                    }
                    fileRemaining = size
                }
                if fileRemaining == 0 {
                    closeFile()
                    advance()
                    continue
                }
                // A FIFO whose writer has not come yet reads as ended; `poll` tells that
                // apart (no event until the writer writes or goes).
                if fileRemaining == nil, !Self.hasInput(fd) { return .waiting(on: fd) }
                let want = fileRemaining.map { Int(min(Int64(buffer.count), $0)) } ?? buffer.count
                let got = Glibc.read(fd, buffer.baseAddress, want)
                if got < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK { return .waiting(on: fd) }
                    if errno == EINTR {
                        // A pipe that never ends (`@<(sleep 100)`) must not outlast Ctrl-C.
                        if let reason = ProcessInterruption.pending { throw .cancelled(reason) }
                        continue
                    }
                    throw .inputUnreadable(path: path, reason: POSIXFailure(code: errno).description)
                }
                if got == 0 {
                    guard fileRemaining == nil else {
                        throw .inputUnreadable(path: path, reason: "the file shrank while it was being sent")
                    }
                    closeFile()
                    advance()
                    continue
                }
                fileRemaining = fileRemaining.map { $0 - Int64(got) }
                bytesRead += Int64(got)
                return .bytes(got)
            }
        }
        return .bytes(0)
    }

    /// A descriptor given as the body (standard input, for the command line), shared with
    /// whoever opened it, so its blocking mode is left alone: read only once `poll` says
    /// bytes or the end are there.
    private func readStream(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(AFError) -> Chunk {
        while true {
            guard Self.hasInput(descriptor) else { return .waiting(on: descriptor) }
            let got = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if got >= 0 {
                bytesRead += Int64(got)
                return .bytes(got)
            }
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK { return .waiting(on: descriptor) }
            if code == EINTR {
                if let reason = ProcessInterruption.pending { throw .cancelled(reason) }
                continue
            }
            throw .inputUnreadable(path: "standard input", reason: POSIXFailure(code: code).description)
        }
    }

    /// Whether `fd` has bytes, its end or an error to report now.
    private static func hasInput(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Waits until `fd` has bytes, its end or an error to report; Ctrl-C ends the wait.
    private static func awaitInput(_ fd: Int32) throws(AFError) {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, -1) < 0 {
            guard errno == EINTR else { return }
            if let reason = ProcessInterruption.pending { throw .cancelled(reason) }
        }
    }

    /// Starts again from the first byte; false when the body cannot be re-read.
    func rewind() -> Bool {
        guard stream == nil else { return bytesRead == 0 }
        guard bytesRead == 0 || segments.allSatisfy(\.isRereadable) else { return false }
        closeFile()
        index = 0
        offset = 0
        bytesRead = 0
        return true
    }

    private func advance() {
        index += 1
        offset = 0
    }

    private func closeFile() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }
}
