/// The body of a request.
public enum RequestBody: Sendable {
    /// No body.
    case empty
    /// A body held in memory.
    case bytes([UInt8])
    /// The contents of a file, streamed from disk on every attempt. A file whose size is not
    /// known in advance (a pipe, a device) is read to its end and sent chunked, once.
    case file(path: String)
    /// A multipart form, streamed part by part.
    case multipart(MultipartFormData)
    /// Bytes read from a file descriptor until end of file, sent chunked. It can be read once,
    /// so a request with such a body cannot be re-sent. A pipe that has nothing yet pauses
    /// only this request's sending (its timeout still counts); the descriptor's blocking
    /// mode is left as it is. A response of 300 or more that comes before the end ends the
    /// body there (with its last chunk), as libcurl stops sending on one; a 2xx leaves it to
    /// its end. Any body sent chunked ends so.
    case stream(fileDescriptor: Int32)

    /// Whether there is a body at all.
    public var isEmpty: Bool {
        if case .empty = self { return true }
        return false
    }

    /// Whether the same bytes can be produced again for another attempt.
    public var isReplayable: Bool {
        switch self {
        case .stream: return false
        case .file(let path): return FileInfo.isRereadable(path)
        case .multipart(let form): return form.isReplayable
        case .empty, .bytes: return true
        }
    }

    /// The size in bytes when it is known before sending.
    public func contentLength() throws(AFError) -> Int64? {
        switch self {
        case .empty: return 0
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let path): return try FileInfo.size(ofFileAt: path)
        case .multipart(let form): return try form.contentLength()
        case .stream: return nil
        }
    }
}
