/// The one error type of the engine.
///
/// Each case names the stage that failed and carries what is needed to explain it; the
/// command line maps it to an exit status in a single function.
public enum AFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The description could not be turned into a request (bad URL, bad header, …).
    case invalidRequest(reason: String)
    /// A file the request reads (body, multipart part) cannot be opened or read.
    case inputUnreadable(path: String, reason: String)
    /// An adapter refused the request (for example a token command failed).
    case adaptationFailed(reason: String)
    /// The exchange failed on the network or in the protocol.
    case transport(TransportFailure)
    /// The response arrived but its status is not acceptable.
    case responseValidationFailed(status: Int, reason: String)
    /// The redirect chain is longer than allowed.
    case tooManyRedirects(limit: Int)
    /// A redirect could not be followed (missing or unusable `Location`).
    case redirectFailed(reason: String)
    /// The response body could not be stored.
    case output(OutputFailure)
    /// The request was cancelled.
    case cancelled(Cancellation)
    /// A retrier gave up with an error of its own (`RetryResult.doNotRetryWithError`); the
    /// failure it was asked about is kept next to it.
    indirect case requestRetryFailed(retryError: AFError, originalError: AFError)

    /// Why a request was cancelled.
    public enum Cancellation: String, Sendable, Equatable {
        case interrupted, terminated, explicitly
        /// The session was shut down (`Session.shutdown()`) before the request ended.
        case sessionShutDown
    }

    /// What failed, as af shows it (facts only; callers add advice).
    public var description: String {
        switch self {
        case .invalidRequest(let reason): return reason
        case .inputUnreadable(let path, let reason): return "cannot read '\(path)': \(reason)"
        case .adaptationFailed(let reason): return reason
        case .transport(let failure): return failure.message
        case .responseValidationFailed(let status, let reason):
            return reason.isEmpty ? "server answered \(status)" : "server answered \(status) \(MessageQuote.capped(reason))"
        case .tooManyRedirects(let limit): return "more than \(limit) \(limit == 1 ? "redirect" : "redirects")"
        case .redirectFailed(let reason): return reason
        case .output(let failure): return failure.message
        case .cancelled(.interrupted): return "interrupted"
        case .cancelled(.terminated): return "terminated"
        case .cancelled(.explicitly): return "cancelled"
        case .cancelled(.sessionShutDown): return "cancelled: the session was shut down"
        case .requestRetryFailed(let retryError, let originalError):
            return "\(retryError.description) (while recovering from: \(originalError.description))"
        }
    }

    /// The transport failure, when this is one.
    public var transportFailure: TransportFailure? {
        if case .transport(let failure) = self { return failure }
        return nil
    }

    /// The error that decided the outcome: a retrier's own error when it gave up with one,
    /// else this error.
    public var underlyingError: AFError {
        if case .requestRetryFailed(let retryError, _) = self { return retryError.underlyingError }
        return self
    }
}

/// A failure on the network or in the protocol, classified for retry decisions and exit codes.
public struct TransportFailure: Error, Sendable, Equatable {
    /// What went wrong, as a class of failures.
    public enum Kind: Sendable, Equatable {
        case dnsFailure
        case connectionRefused
        case connectionReset
        case connectTimeout
        case timeout
        case tls
        case pinning
        case malformedResponse
        case truncatedBody
        case limitExceeded
        case sendFailed
        case proxy
        case other
    }

    /// The class of failure, for retry decisions and exit codes.
    public var kind: Kind
    /// A complete sentence fragment naming what failed.
    public var message: String
    /// The libcurl result code, when libcurl reported it.
    public var curlCode: Int
    /// The facts behind the failure that a caller needs to say what to do about it; the
    /// message itself only says what happened.
    public var cause: Cause?

    /// Facts behind a failure, for advice that depends on how the engine was configured.
    public enum Cause: Sendable, Equatable {
        /// The server's chain did not verify; `code` is OpenSSL's `X509_V_ERR_*` value.
        case untrustedCertificate(code: Int32, problem: TrustProblem)
        /// The HTTPS proxy's chain did not verify (against the default trust's CA bundle).
        case untrustedProxyCertificate(code: Int32, problem: TrustProblem)
        /// The TLS handshake failed for another reason (versions, ciphers, client certificate).
        case handshakeFailed
        /// The server ended the handshake with the alert `unrecognized_name`: it serves no
        /// site by the name the client sent (SNI), such as a CDN's address reached under a
        /// name it does not host.
        case nameNotServed
        /// The server and the client share no TLS version: the server's alert, or OpenSSL's
        /// refusal of the version the server chose; `requiredTLS13`: the transfer asked for
        /// TLS 1.3 at least (`TLSOptions.minimumVersion`); `cappedAtTLS12`: it offered TLS 1.2
        /// at most (`TLSOptions.maximumVersion`).
        case noCommonTLSVersion(requiredTLS13: Bool, cappedAtTLS12: Bool)
        /// The server refused the client certificate, or asked for one and got none
        /// (`given`: the transfer had one, `TLSOptions.clientCertificate`).
        case clientCertificateRefused(given: Bool)
        /// A file of the TLS configuration could not be used before the handshake: the CA
        /// bundle, the CRL, or the client certificate or its key is not what OpenSSL can load.
        case unusableTrustFile(TrustFile)
        /// No connection within the connect timeout, or within the total timeout when that
        /// was the shorter (`total`).
        case connectTimedOut(limit: Double?, total: Bool)
        /// The host's name (or the proxy's) did not resolve within the connect timeout, or
        /// the total timeout when that was the shorter (`total`): no address was tried.
        case resolveTimedOut(limit: Double?, total: Bool)
        /// The host did not resolve, and the addresses given for it
        /// (`TransferOptions.resolve`) are for another port (`given`) than the `needed`
        /// HOST:PORT.
        case addressForAnotherPort(given: Int, needed: String)
        /// The proxy took the connection but did not answer the `CONNECT` for a tunnel within
        /// the connect timeout, or the total timeout when that was the shorter (`total`).
        case tunnelTimedOut(limit: Double?, total: Bool)
        /// The connection was made but its TLS handshake did not finish within the connect
        /// timeout, or the total timeout when that was the shorter (`total`): the server
        /// answered nothing, as a plain HTTP server does while it waits for a request line
        /// that never comes.
        case handshakeTimedOut(limit: Double?, total: Bool)
        /// The server (or, through a proxy, the tunnel) closed or reset the connection in the
        /// middle of the TLS handshake, without a TLS alert to say why: a server restarting or
        /// overloaded does so, and so does one that refuses the client's offer without a
        /// word. No request byte was sent, so it is a reset to retry, not a TLS refusal.
        case closedDuringHandshake
        /// No complete response within the total timeout.
        case responseTimedOut(limit: Double?)
        /// More header lines (or trailer lines) than `TransferOptions.maxHeaders`.
        case tooManyHeaderLines(limit: Int)
        /// A body larger than `TransferOptions.maxFileSize`.
        case bodyTooLarge(limit: Int64?)
        /// A compressed body that inflated to more than `ratio` times its size on the wire
        /// once past `TransferOptions.decompressionAllowance`, as a decompression bomb does.
        case inflatedTooFar(ratio: Int64)
        /// The proxy answered the CONNECT for a tunnel with `status` (407: it wants
        /// credentials; 0 when libcurl did not say).
        case tunnelRefused(status: Int)
        /// An HTTP/2 connection that earlier requests had used failed this one before any of
        /// its response arrived: the server was closing it (`GOAWAY`), and a stream it did not
        /// take was not processed, so the request may be sent again on a new connection.
        case unansweredOnReusedConnection
        /// The server took none of `attempts` tries at the request in a row: each time it
        /// closed the connection, or refused the HTTP/2 stream (`REFUSED_STREAM`), before
        /// answering, as a server does that takes no new requests for now.
        case refusedRepeatedly(attempts: Int)
        /// A cleartext request got bytes that are not an HTTP/1 response: the port may serve
        /// TLS, or a server that speaks only HTTP/2 (with prior knowledge), or not HTTP at all.
        case notAnHTTP1Answer
        /// The TLS handshake got bytes that are not TLS: the port serves plain HTTP, or
        /// something else.
        case notATLSAnswer
        /// No socket could be opened: the process (or the system) has as many files open as
        /// it may; `limit` is the process's limit when that was the one reached.
        case outOfDescriptors(limit: Int?)
        /// No socket could be bound to `TransferOptions.interface`: no interface of that
        /// name, or an address that is not this machine's.
        case unusableInterface(String)
    }

    /// The files of a trust configuration.
    public enum TrustFile: Sendable, Equatable {
        /// `DefaultTrustEvaluator.caBundle`: PEM certificates, or a directory of hashed ones.
        case caBundle
        /// `RevocationTrustEvaluator.crlFile`: a PEM certificate revocation list.
        case crl
        /// `TLSOptions.clientCertificate` and `clientKey`: PEM files, an encrypted key opened
        /// by `clientKeyPassword`.
        case clientIdentity
    }

    /// Why a certificate chain did not verify, in classes that call for different actions.
    public enum TrustProblem: Sendable, Equatable {
        /// No trusted issuer: a private CA or a self-signed certificate.
        case unknownIssuer
        /// No trusted issuer, and the server sent its certificate alone: its issuer may be a
        /// public CA's intermediate that the server failed to send, or a private CA.
        case issuerNotSent
        /// Expired or not yet valid.
        case validityDates
        case revoked
        case other
    }

    /// Creates a failure; `curlCode` is 0 when libcurl did not report one.
    public init(kind: Kind, message: String, curlCode: Int = 0, cause: Cause? = nil) {
        self.kind = kind
        self.message = message
        self.curlCode = curlCode
        self.cause = cause
    }
}

/// A failure to store a response body.
public struct OutputFailure: Error, Sendable, Equatable {
    /// What kept the body from being stored.
    public enum Kind: Sendable, Equatable {
        /// The file to write exists (and neither replacing nor resuming was asked for).
        case fileExists
        /// The directory to write into does not exist.
        case directoryMissing
        /// The destination cannot be used: a directory, no free name, taken meanwhile.
        case destinationExists
        /// Another download of this process is writing the same file.
        case inUse
        case writeFailed
        case checksumMismatch
        case resumeRefused
    }

    /// The class of failure.
    public var kind: Kind
    /// A sentence fragment naming the file and what went wrong.
    public var message: String

    /// Creates a failure.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }
}
