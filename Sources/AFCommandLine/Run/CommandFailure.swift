import AFEngine

/// A failure that ends a run with an exit status and one `af: error:` line.
public struct CommandFailure: Error, Sendable, Equatable {
    /// The text after `af: error: `: what failed and, where there is one, what to do.
    public var message: String
    /// The exit status the run ends with.
    public var exitCode: Int32

    /// A failure with `message`; usage errors (64) unless told otherwise.
    public init(_ message: String, exitCode: Int32 = ExitStatus.usage) {
        self.message = message
        self.exitCode = exitCode
    }

    /// A usage error (exit 64).
    public static func usage(_ message: String) -> CommandFailure {
        CommandFailure(message, exitCode: ExitStatus.usage)
    }

    /// The failure for a signal that arrived while reading `source` (130 or 143), or nil when
    /// none did: what a read that returned `EINTR` asks before trying again.
    public static func interrupted(whileReading source: String) -> CommandFailure? {
        ProcessInterruption.pending.map { interrupted(by: $0, whileReading: source) }
    }

    /// The failure for the signal `reason` names (130 or 143), which arrived while reading
    /// `source`.
    static func interrupted(by reason: AFError.Cancellation, whileReading source: String) -> CommandFailure {
        reason == .terminated
            ? CommandFailure("terminated while reading \(source)", exitCode: ExitStatus.terminated)
            : CommandFailure("interrupted while reading \(source)", exitCode: ExitStatus.interrupted)
    }

    /// An input file that cannot be read (exit 66).
    public static func unreadable(_ message: String) -> CommandFailure {
        CommandFailure(message, exitCode: ExitStatus.noInput)
    }
}

/// The exit statuses of SPEC §5.
public enum ExitStatus {
    /// The exchange completed (any status unless `--check-status`).
    public static let success: Int32 = 0
    /// A network or protocol failure after retries: DNS, refused, reset, malformed response.
    public static let network: Int32 = 1
    /// A timeout.
    public static let timeout: Int32 = 2
    /// `--check-status` and a final 3xx (not followed).
    public static let redirection: Int32 = 3
    /// `--check-status` and a 4xx final response.
    public static let clientError: Int32 = 4
    /// `--check-status` and a 5xx final response.
    public static let serverError: Int32 = 5
    /// More redirects than `--max-redirects`.
    public static let tooManyRedirects: Int32 = 6
    /// TLS failure: handshake, certificate verification, revocation.
    public static let tls: Int32 = 7
    /// A pinned key or certificate was not in the chain.
    public static let pinning: Int32 = 8
    /// The response could not be written: destination exists, write error, checksum mismatch, resume refused.
    public static let output: Int32 = 9
    /// Bad option, request item or JSON; nothing was sent.
    public static let usage: Int32 = 64
    /// An input file named on the command line cannot be read.
    public static let noInput: Int32 = 66
    /// Interrupted by SIGINT.
    public static let interrupted: Int32 = 130
    /// Terminated by SIGTERM.
    public static let terminated: Int32 = 143

    /// One row of the exit-status table that `--help`, the man page and the README show.
    public struct Entry: Sendable {
        /// The codes the row covers.
        public let codes: [Int32]
        /// A few words, for `--help`.
        public let brief: String
        /// The whole meaning, for the man page and the README.
        public let meaning: String
    }

    /// Every exit status af uses, in order.
    public static let table: [Entry] = [
        Entry(codes: [success], brief: "success", meaning: "The exchange completed (any HTTP status unless --check-status)."),
        Entry(codes: [network], brief: "network or protocol failure",
              meaning: "Network or protocol failure: DNS, refused, reset (during the TLS handshake too), malformed response, a limit exceeded (after retries)."),
        Entry(codes: [timeout], brief: "timeout", meaning: "Timeout (connect or total)."),
        Entry(codes: [redirection, clientError, serverError], brief: "3xx/4xx/5xx with --check-status",
              meaning: "With --check-status (and for downloads): the final status was 3xx (not followed), 4xx or 5xx."),
        Entry(codes: [tooManyRedirects], brief: "too many redirects", meaning: "Too many redirects."),
        Entry(codes: [tls], brief: "TLS failure", meaning: "TLS failure: handshake, certificate verification, revocation."),
        Entry(codes: [pinning], brief: "pinning failure", meaning: "Pinning failure: no pinned key or certificate in the server's chain."),
        Entry(codes: [output], brief: "output or download failure",
              meaning: "Output or download failure: destination exists, write error, checksum mismatch, resume refused."),
        Entry(codes: [usage], brief: "usage error", meaning: "Usage error: bad option, bad request item, bad JSON, bad batch line."),
        Entry(codes: [noInput], brief: "unreadable input file", meaning: "An input file cannot be read."),
        Entry(codes: [interrupted, terminated], brief: "interrupted/terminated", meaning: "Interrupted (SIGINT) or terminated (SIGTERM)."),
    ]
}
