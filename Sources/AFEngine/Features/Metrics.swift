/// Timings and sizes of one attempt, read from libcurl after it ends.
///
/// Times are seconds from the start of the attempt, cumulative as libcurl reports them: the
/// TLS handshake ends at `tlsDone`, the first response byte arrives at `firstByte`, and so on.
public struct TransferMetrics: Sendable, Equatable {
    /// The protocol used: `HTTP/1.1`, `HTTP/2`, …
    public var httpVersion: String?
    /// The address connected to.
    public var remoteAddress: String?
    /// The port connected to.
    public var remotePort: Int?
    /// The local address of the connection.
    public var localAddress: String?
    /// The local port of the connection.
    public var localPort: Int?
    /// When the name was resolved.
    public var nameLookup: Double = 0
    /// When the TCP connection was established.
    public var connect: Double = 0
    /// When the TLS handshake ended (0 without TLS).
    public var tlsDone: Double = 0
    /// When the request was about to be sent.
    public var pretransfer: Double = 0
    /// When the first response byte arrived.
    public var firstByte: Double = 0
    /// When the attempt ended.
    public var total: Double = 0
    /// Request bytes written: head and body.
    public var bytesSent: Int64 = 0
    /// Response bytes read: head and body (before content decoding).
    public var bytesReceived: Int64 = 0
    /// Body bytes per second, both directions.
    public var uploadSpeed: Double = 0
    /// Response body bytes per second.
    public var downloadSpeed: Double = 0
    /// Connections opened for this attempt (0 when an existing one was reused).
    public var newConnections: Int = 0
    /// What the TLS handshake established, when there was one.
    public var tls: TLSReport?

    /// Empty metrics.
    public init() {}

    /// Seconds spent resolving the host name.
    public var dnsDuration: Double { nameLookup }
    /// Seconds spent opening the TCP connection.
    public var connectDuration: Double { max(0, connect - nameLookup) }
    /// Seconds spent in the TLS handshake.
    public var tlsDuration: Double { tlsDone > 0 ? max(0, tlsDone - connect) : 0 }
}

/// The outcome of a TLS handshake.
public struct TLSReport: Sendable, Equatable {
    /// `TLSv1.3`, `TLSv1.2`, …
    public var protocolVersion: String
    /// The negotiated cipher suite.
    public var cipher: String
    /// A sentence about pin evaluation (`matched sha256//…`), nil when nothing was pinned.
    public var pinResult: String?
    /// Whether the chain was verified against trusted roots (for a resumed session: when the
    /// session was first negotiated, under the same settings).
    public var verified: Bool
    /// Whether the connection resumed an earlier TLS session instead of a full handshake.
    public var resumed: Bool

    /// Creates a report.
    public init(protocolVersion: String, cipher: String, pinResult: String?, verified: Bool, resumed: Bool = false) {
        self.protocolVersion = protocolVersion
        self.cipher = cipher
        self.pinResult = pinResult
        self.verified = verified
        self.resumed = resumed
    }
}
