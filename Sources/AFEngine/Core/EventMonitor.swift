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
        /// An informational (1xx) response arrived, ahead of the final one (`103 Early Hints`).
        indirect case informational(attempt: Int, ResponseHead)
        /// libcurl answered an authentication challenge (digest) inside the attempt: this
        /// head is an intermediate exchange, and the request goes out again with credentials.
        /// Sent as that request is about to go; a challenge libcurl cannot answer (no nonce)
        /// is no such exchange but the response, reported as `.responseHead`.
        indirect case challengeAnswered(attempt: Int, ResponseHead)
        /// Bytes moved.
        case progress(TransferProgress)
        /// An attempt ended, well or badly.
        indirect case attemptFinished(Attempt)
        /// The retrier asked for another attempt after `delay` seconds; `refreshed` when it
        /// renewed credentials for it (`RetryResult.retryAfterRefresh`) rather than retrying
        /// a failure.
        case retryScheduled(attempt: Int, reason: String, delay: Double, refreshed: Bool)
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

extension RequestEvent {
    /// A set of kinds of event: what a monitor wants (`EventMonitor.interests`). A session
    /// builds only the events some monitor of it wants.
    public struct Interests: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32

        /// Creates a set from its bits.
        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        public static let created = Interests(rawValue: 1 << 0)
        public static let resumed = Interests(rawValue: 1 << 1)
        public static let suspended = Interests(rawValue: 1 << 2)
        public static let adapted = Interests(rawValue: 1 << 3)
        public static let attemptStarted = Interests(rawValue: 1 << 4)
        public static let resolved = Interests(rawValue: 1 << 5)
        public static let connected = Interests(rawValue: 1 << 6)
        public static let tlsEstablished = Interests(rawValue: 1 << 7)
        public static let requestSent = Interests(rawValue: 1 << 8)
        public static let responseHead = Interests(rawValue: 1 << 9)
        public static let challengeAnswered = Interests(rawValue: 1 << 10)
        public static let progress = Interests(rawValue: 1 << 11)
        public static let attemptFinished = Interests(rawValue: 1 << 12)
        public static let retryScheduled = Interests(rawValue: 1 << 13)
        public static let redirected = Interests(rawValue: 1 << 14)
        public static let finished = Interests(rawValue: 1 << 15)
        public static let cancelled = Interests(rawValue: 1 << 16)
        public static let transportLog = Interests(rawValue: 1 << 17)
        public static let informational = Interests(rawValue: 1 << 18)
        /// Every kind of event.
        public static let all = Interests(rawValue: (1 << 19) - 1)
    }
}

extension RequestEvent.Kind {
    /// The one kind of event this is, as a set.
    public var interest: RequestEvent.Interests {
        switch self {
        case .created: .created
        case .resumed: .resumed
        case .suspended: .suspended
        case .adapted: .adapted
        case .attemptStarted: .attemptStarted
        case .resolved: .resolved
        case .connected: .connected
        case .tlsEstablished: .tlsEstablished
        case .requestSent: .requestSent
        case .responseHead: .responseHead
        case .challengeAnswered: .challengeAnswered
        case .progress: .progress
        case .attemptFinished: .attemptFinished
        case .retryScheduled: .retryScheduled
        case .redirected: .redirected
        case .finished: .finished
        case .cancelled: .cancelled
        case .transportLog: .transportLog
        case .informational: .informational
        }
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
    /// The request body's source (a pipe) has nothing to give yet: sending waits for it, not
    /// for the server. Reported as the wait begins, and cleared by the next report after it.
    public var awaitingBody: Bool

    /// Creates a progress report.
    public init(received: Int64, expectedToReceive: Int64?, sent: Int64, expectedToSend: Int64?, resumedFrom: Int64 = 0, awaitingBody: Bool = false) {
        self.received = received
        self.expectedToReceive = expectedToReceive
        self.sent = sent
        self.expectedToSend = expectedToSend
        self.resumedFrom = resumedFrom
        self.awaitingBody = awaitingBody
    }
}

/// Observes every lifecycle event of the requests of a session.
///
/// Monitors are called synchronously on the thread where the event happens (the transfer
/// thread, or the thread that resumed or cancelled the request), in order for any one request; they must be quick and
/// thread-safe. Traces, metrics and progress bars are monitors.
///
/// A monitor that names its `interests` is called only for those kinds of event, and a
/// session builds no event that none of its monitors wants (a batch of small requests spent
/// a twentieth of its time building events nobody read).
public protocol EventMonitor: Sendable {
    /// The kinds of event this monitor wants; asked once, when a session is made. All of
    /// them unless a monitor says otherwise.
    var interests: RequestEvent.Interests { get }

    /// Called once for each event of `request` that the monitor is interested in, in order.
    func request(_ request: Request, didEmit event: RequestEvent)
}

extension EventMonitor {
    public var interests: RequestEvent.Interests { .all }
}

/// Forwards events to several monitors in order, each only the kinds it wants.
public struct CompositeEventMonitor: EventMonitor {
    /// The monitors, called in this order.
    public let monitors: [any EventMonitor]
    /// What any of the monitors wants.
    public let interests: RequestEvent.Interests
    private let wants: [RequestEvent.Interests]

    /// Forwards to `monitors`.
    public init(_ monitors: [any EventMonitor]) {
        self.monitors = monitors
        wants = monitors.map(\.interests)
        interests = wants.reduce(into: []) { $0.formUnion($1) }
    }

    public func request(_ request: Request, didEmit event: RequestEvent) {
        let interest = event.kind.interest
        // By index, each monitor called where it lies: iterating `zip(monitors, wants)` copied
        // every monitor out of the array (a reference count and a release each) before asking
        // whether it wanted the event, and a batch line's events mostly concern one monitor.
        for index in wants.indices where wants[index].contains(interest) {
            monitors[index].request(request, didEmit: event)
        }
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
