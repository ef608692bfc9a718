/// Where the body of the response that ends a request goes: standard output, a spool file,
/// a download destination, memory.
///
/// The engine calls `open` when a response head arrives whose body belongs to the caller
/// (redirects the engine follows never reach the sink), `write` for each decoded chunk,
/// `rollback` when that attempt is retried, and `finish` exactly once when the request ends.
/// Calls come from the session's transfer thread, one at a time.
public protocol ResponseBodySink: AnyObject, Sendable {
    /// A response whose body is for this sink has arrived. Throwing fails the attempt.
    func open(_ head: ResponseHead, attempt: Int) throws(AFError)
    /// The next decoded bytes of the body. Throwing fails the attempt.
    func write(_ bytes: UnsafeRawBufferPointer) throws(AFError)
    /// The attempt's body ended where the transport's framing said it would. Returning an
    /// error fails the attempt as a transport failure would (the retrier decides about it):
    /// a body that is complete by its framing yet not what its head promised. A sink that
    /// hands the body on to another asks that one.
    func bodyDidEnd() -> AFError?
    /// The attempt whose body was being written failed and will be retried.
    func rollback()
    /// The request has ended; `error` is what ended it, if anything. Returns the error to
    /// report, which may be a new one (a checksum mismatch, a failed rename).
    func finish(error: AFError?) -> AFError?
}

extension ResponseBodySink {
    /// Nothing more to check: the framing decides.
    public func bodyDidEnd() -> AFError? { nil }
}

/// A sink that keeps the body in memory, for callers that want the bytes (tests, reports).
public final class MemorySink: ResponseBodySink {
    private let state = Protected<[UInt8]>([])
    private let limit: Int

    /// Keeps at most `limit` bytes; more fails the attempt with a limit error.
    public init(limit: Int = .max) {
        self.limit = limit
    }

    /// The bytes received so far.
    public var bytes: [UInt8] { state.value }

    public func open(_ head: ResponseHead, attempt: Int) throws(AFError) {
        state.write { $0.removeAll() }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        let ok = state.write { buffer -> Bool in
            guard buffer.count + bytes.count <= limit else { return false }
            buffer.append(contentsOf: bytes)
            return true
        }
        if !ok {
            throw .transport(TransportFailure(kind: .limitExceeded, message: "response body larger than \(limit) bytes held in memory"))
        }
    }

    public func rollback() {
        state.write { $0.removeAll() }
    }

    public func finish(error: AFError?) -> AFError? { error }
}
