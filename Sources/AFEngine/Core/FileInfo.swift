#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small wrappers over POSIX file calls used while building bodies.
enum FileInfo {
    /// The size of a regular file, or an `inputUnreadable` error naming the path.
    static func size(ofFileAt path: String) throws(AFError) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .inputUnreadable(path: path, reason: POSIXError.describe(errno))
        }
        guard (info.st_mode & S_IFMT) != S_IFDIR else {
            throw .inputUnreadable(path: path, reason: "it is a directory")
        }
        guard access(path, R_OK) == 0 else {
            throw .inputUnreadable(path: path, reason: POSIXError.describe(errno))
        }
        return Int64(info.st_size)
    }
}

/// Text for `errno` values.
public enum POSIXError {
    /// The C library's description of `code`, lower-cased at the start like the rest of af's
    /// messages.
    public static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        var message = String(cString: text)
        if let first = message.first, first.isUppercase, !message.hasPrefix("I/O") {
            message = first.lowercased() + message.dropFirst()
        }
        return message
    }
}
