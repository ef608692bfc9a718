/// A step in the life of a request, with the monotonic time it happened.
public struct RequestEvent: Sendable {
    /// Seconds since the request was created, from a monotonic clock.
    public var time: Double
    /// What happened.
    public var kind: Kind

    /// Creates an event at `time`.
    public init(time: Double, kind: Kind) {
        self.time = time
        self.kind = kind
    }

    /// What happened. The cases that carry a description, head, attempt or response keep it
    /// in a box (`indirect`): every event is copied to each monitor, and a box is one
    /// reference count where the value itself was a copy of every field.
    public enum Kind: Sendable {
        /// The request exists and holds its first description.
        indirect case created(RequestDescription)
        case resumed
        case suspended
        /// Adapters produced the description an attempt will send.
        indirect case adapted(attempt: Int, RequestDescription)
        /// A transfer began for an attempt.
        case attemptStarted(attempt: Int, hop: Int, method: HTTPMethod, url: String)
        /// The host name resolved to the address about to be connected to.
        case resolved(host: String, address: String)
        /// A connection is ready (new or reused).
        case connected(address: String, port: Int, reused: Bool)
        /// A TLS handshake completed.
        indirect case tlsEstablished(TLSReport)
        /// The request head of an attempt was written.
        case requestSent(attempt: Int, head: String)
        /// A response head arrived.
        indirect case responseHead(attempt: Int, ResponseHead)
        /// libcurl answered an authentication challenge (digest) inside the attempt: this
        /// head is an intermediate exchange, and the request goes out again with credentials.
        indirect case challengeAnswered(attempt: Int, ResponseHead)
        /// Bytes moved.
        case progress(TransferProgress)
        /// An attempt ended, well or badly.
        indirect case attemptFinished(Attempt)
        /// The retrier asked for another attempt after `delay` seconds.
        case retryScheduled(attempt: Int, reason: String, delay: Double)
        /// A redirect is being followed.
        indirect case redirected(RedirectRecord)
        /// The request ended (successfully or with `response.error`).
        indirect case finished(Response)
        /// The request was cancelled.
        case cancelled(AFError.Cancellation)
        /// A line of libcurl's own account of the transfer (its verbose trace), when
        /// `TransferOptions.logsTransport` asks for it.
        case transportLog(TransportLogKind, String)
    }

    /// Which part of libcurl's trace a `transportLog` event carries.
    public enum TransportLogKind: Sendable {
        /// libcurl's notes (connecting, TLS, reuse).
        case text
        /// Header lines sent.
        case sentHead
        /// Header lines received.
        case receivedHead
    }
}

/// Bytes moved by the current attempt so far.
public struct TransferProgress: Sendable, Equatable {
    /// Response body bytes received (before content decoding).
    public var received: Int64
    /// Expected response body size, when announced.
    public var expectedToReceive: Int64?
    /// Request body bytes sent.
    public var sent: Int64
    /// Request body size, when known.
    public var expectedToSend: Int64?
    /// Bytes the sink already held when this attempt began (a resumed download).
    public var resumedFrom: Int64

    /// Creates a progress report.
    public init(received: Int64, expectedToReceive: Int64?, sent: Int64, expectedToSend: Int64?, resumedFrom: Int64 = 0) {
        self.received = received
        self.expectedToReceive = expectedToReceive
        self.sent = sent
        self.expectedToSend = expectedToSend
        self.resumedFrom = resumedFrom
    }
}

/// Observes every lifecycle event of the requests of a session.
///
/// Monitors are called synchronously on the thread where the event happens (the transfer
/// thread, or the thread that resumed or cancelled the request), in order for any one request; they must be quick and
/// thread-safe. Traces, metrics and progress bars are monitors.
public protocol EventMonitor: Sendable {
    /// Called once for each event of `request`, in order.
    func request(_ request: Request, didEmit event: RequestEvent)
}

/// Forwards events to several monitors in order.
public struct CompositeEventMonitor: EventMonitor {
    /// The monitors, called in this order.
    public let monitors: [any EventMonitor]

    /// Forwards to `monitors`.
    public init(_ monitors: [any EventMonitor]) {
        self.monitors = monitors
    }

    public func request(_ request: Request, didEmit event: RequestEvent) {
        for monitor in monitors { monitor.request(request, didEmit: event) }
    }
}

/// A monitor made of a closure.
public struct ClosureEventMonitor: EventMonitor {
    private let handler: @Sendable (Request, RequestEvent) -> Void

    /// Calls `handler` for every event.
    public init(_ handler: @escaping @Sendable (Request, RequestEvent) -> Void) {
        self.handler = handler
    }

    public func request(_ request: Request, didEmit event: RequestEvent) {
        handler(request, event)
    }
}
