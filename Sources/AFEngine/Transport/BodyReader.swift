#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Feeds a request body to libcurl's read callback, one buffer at a time.
///
/// Files are opened when their turn comes and read straight into libcurl's buffer, so memory
/// stays flat whatever the body size. Confined to the transfer driver's thread.
final class BodyReader {
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

    /// Copies up to `buffer.count` bytes into `buffer`; 0 means the body is complete.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AFError) -> Int {
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
                    return count
                }
                advance()
            case .file(let path, let size):
                if fd < 0 {
                    switch FileIO.openToRead(path) {
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
                let want = fileRemaining.map { Int(min(Int64(buffer.count), $0)) } ?? buffer.count
                let got = Glibc.read(fd, buffer.baseAddress, want)
                if got < 0 {
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
                return got
            }
        }
        return 0
    }

    private func readStream(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(AFError) -> Int {
        while true {
            let got = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if got >= 0 {
                bytesRead += Int64(got)
                return got
            }
            guard let code = FileIO.failure(errno, of: descriptor, awaiting: POLLIN) else { continue }
            if code == EINTR {
                if let reason = ProcessInterruption.pending { throw .cancelled(reason) }
                continue
            }
            throw .inputUnreadable(path: "standard input", reason: POSIXFailure(code: code).description)
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
