import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// File-system queries for the command line (the engine's `FileIO` does the work).
enum FileSystem {
    static func exists(_ path: String) -> Bool { FileIO.exists(path) }
    static func size(_ path: String) -> Int64? { FileIO.size(path) }

    /// Whether descriptor `fd` is open and was inherited from the process that started af:
    /// one af opens itself is close-on-exec, and exec closes every such one it is given.
    static func isInherited(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFD)
        return flags >= 0 && flags & FD_CLOEXEC == 0
    }

    /// Whether descriptor `fd` is open only for reading.
    static func isReadOnly(_ fd: Int32) -> Bool { accessMode(fd) == O_RDONLY }

    /// Whether descriptor `fd` is open only for writing: how af holds a standard input it was
    /// started without (CStartup), and never a descriptor anything can be read from.
    static func isWriteOnly(_ fd: Int32) -> Bool { accessMode(fd) == O_WRONLY }

    /// `O_RDONLY`, `O_WRONLY` or `O_RDWR`; nil when `fd` is not open.
    private static func accessMode(_ fd: Int32) -> Int32? {
        let flags = fcntl(fd, F_GETFL)
        return flags >= 0 ? flags & O_ACCMODE : nil
    }

    static func remove(_ path: String) {
        _ = unlink(path)
    }
}

extension POSIXFailure {
    /// What to do when af has as many files open as it may (a socket or a file refused with
    /// EMFILE or ENFILE).
    static let descriptorRemedy = "raise the limit (ulimit -n), or in af batch lower --parallel"

    /// The message for a temporary file that could not be made in `directory` (`purpose`
    /// says what for, as in "to keep a copy of 'x'"), with what to do.
    func temporaryFileMessage(in directory: String, _ purpose: String = "") -> String {
        "cannot create a temporary file in '\(Quote.argument(directory))'\(purpose.isEmpty ? "" : " " + purpose): \(description); \(temporaryFileAdvice)"
    }

    /// What to do when a temporary file could not be made: another directory, unless the
    /// process (or the system) has as many files open as it may, which no directory fixes.
    var temporaryFileAdvice: String {
        descriptorShortageAdvice ?? "set TMPDIR to a writable directory"
    }

    /// What to do when the failure is the process (or the system) having as many files open
    /// as it may (EMFILE, ENFILE), whatever file was wanted; nil for another failure.
    var descriptorShortageAdvice: String? {
        code == EMFILE || code == ENFILE ? "af has as many files open as it may: \(Self.descriptorRemedy)" : nil
    }
}
