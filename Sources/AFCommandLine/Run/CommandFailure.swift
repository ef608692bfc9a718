/// A failure that ends a run with an exit status and one `af: error:` line.
public struct CommandFailure: Error, Sendable, Equatable {
    /// The text after `af: error: `: what failed and, where there is one, what to do.
    public var message: String
    public var exitCode: Int32

    public init(_ message: String, exitCode: Int32 = ExitStatus.usage) {
        self.message = message
        self.exitCode = exitCode
    }

    /// A usage error (exit 64).
    public static func usage(_ message: String) -> CommandFailure {
        CommandFailure(message, exitCode: ExitStatus.usage)
    }

    /// An input file that cannot be read (exit 66).
    public static func unreadable(_ message: String) -> CommandFailure {
        CommandFailure(message, exitCode: ExitStatus.noInput)
    }
}

/// The exit statuses of SPEC §5.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let network: Int32 = 1
    public static let timeout: Int32 = 2
    public static let redirection: Int32 = 3
    public static let clientError: Int32 = 4
    public static let serverError: Int32 = 5
    public static let tooManyRedirects: Int32 = 6
    public static let tls: Int32 = 7
    public static let pinning: Int32 = 8
    public static let output: Int32 = 9
    public static let usage: Int32 = 64
    public static let noInput: Int32 = 66
    public static let interrupted: Int32 = 130
    public static let terminated: Int32 = 143
}
