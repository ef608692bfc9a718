// The engine's async API. af's own release build leaves it out (Build/link-flags defines
// AF_NO_CONCURRENCY): the command line calls none of it, and without it the binary links
// neither Swift's concurrency runtime nor libdispatch, whose initializer runs at every start.
#if !AF_NO_CONCURRENCY

/// The body of a response as it arrives, for `for try await chunk in stream`.
///
/// The stream holds at most about `highWater` bytes the consumer has not taken yet: above it
/// the transfer is paused, and it continues once the consumer has caught up. A stream
/// cannot take back bytes it already delivered, so a retry after the first chunk ends the
/// stream with an error instead of restarting it. Ending the iteration early, or cancelling
/// the consuming task, cancels the request.
public struct ResponseStream: AsyncSequence, Sendable {
    /// A chunk of the body as it arrived.
    public typealias Element = [UInt8]

    /// The request behind the stream, for its state, attempts and metrics.
    public let request: Request
    private let sink: StreamingSink
    private let stream: AsyncThrowingStream<[UInt8], any Error>

    init(request: Request, sink: StreamingSink, stream: AsyncThrowingStream<[UInt8], any Error>) {
        self.request = request
        self.sink = sink
        self.stream = stream
    }

    /// The head of the response whose body is streamed, once it has arrived.
    public var head: ResponseHead? { sink.head }

    /// Starts reading; one iterator per stream.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), sink: sink, request: request)
    }

    /// Takes chunks from the stream and lets the transfer continue when it was held back.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
        let sink: StreamingSink
        let request: Request

        /// The next chunk, nil at the end of the body; throws what ended the request.
        public mutating func next() async throws -> [UInt8]? {
            let request = request
            var base = base
            defer { self.base = base }
            let chunk = try await withTaskCancellationHandler {
                try await base.next()
            } onCancel: {
                request.cancel(.explicitly)
            }
            if let chunk { sink.consumed(chunk.count) }
            return chunk
        }
    }
}

/// Hands body bytes to a `ResponseStream`.
final class StreamingSink: ResponseBodySink {
    private struct State: Sendable {
        var head: ResponseHead?
        var buffered = 0
        var delivered = 0
        var paused = false
        var request: Request?
    }

    static let highWater = 4 << 20
    static let lowWater = 1 << 20
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let state = Protected(State())

    init(continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation) {
        self.continuation = continuation
    }

    func attach(_ request: Request) {
        state.write { $0.request = request }
    }

    var head: ResponseHead? { state.read { $0.head } }

    func open(_ head: ResponseHead, attempt: Int) throws(AFError) {
        let delivered = state.write { state -> Int in
            state.head = head
            return state.delivered
        }
        if delivered > 0 {
            throw .output(OutputFailure(
                kind: .writeFailed,
                message: "a retry cannot restart a stream that already delivered \(delivered) bytes of an earlier attempt"
            ))
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        guard !bytes.isEmpty else { return }
        continuation.yield(Array(bytes))
        let pause = state.write { state -> Request? in
            state.buffered += bytes.count
            state.delivered += bytes.count
            guard state.buffered > Self.highWater, !state.paused else { return nil }
            state.paused = true
            return state.request
        }
        pause?.suspend()
    }

    /// The consumer took `count` bytes.
    func consumed(_ count: Int) {
        let resume = state.write { state -> Request? in
            state.buffered -= count
            guard state.paused, state.buffered < Self.lowWater else { return nil }
            state.paused = false
            return state.request
        }
        resume?.resume()
    }

    func rollback() {}

    func finish(error: AFError?) -> AFError? {
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        state.write { $0.request = nil }
        return error
    }
}

extension Session {
    /// Starts a request whose body arrives as a stream of chunks.
    ///
    /// - Parameter validation: statuses that count as success; another status ends the
    ///   stream with `AFError.responseValidationFailed` before any chunk.
    public func streamRequest(_ description: RequestDescription, validation: StatusValidation? = StatusValidation(acceptable: [200...299])) -> ResponseStream {
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        let sink = StreamingSink(continuation: continuation)
        let request = request(description, sink: sink, validation: validation)
        sink.attach(request)
        continuation.onTermination = { termination in
            if case .cancelled = termination { request.cancel(.explicitly) }
        }
        request.resume()
        return ResponseStream(request: request, sink: sink, stream: stream)
    }
}

#endif
