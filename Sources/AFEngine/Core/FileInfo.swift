#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small wrappers over POSIX file calls used while building bodies.
enum FileInfo {
    /// The size of a file whose length can be known before reading it, nil for one that
    /// must be read to its end to know (a pipe, `<(…)`, a device, a `/proc` file that says
    /// it is empty but is not), or an `inputUnreadable` error naming the path.
    static func size(ofFileAt path: String) throws(AFError) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .inputUnreadable(path: path, reason: POSIXFailure(code: errno).description)
        }
        guard (info.st_mode & S_IFMT) != S_IFDIR else {
            throw .inputUnreadable(path: path, reason: "it is a directory")
        }
        guard access(path, R_OK) == 0 else {
            throw .inputUnreadable(path: path, reason: POSIXFailure(code: errno).description)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        if info.st_size == 0, hasContent(path) { return nil }
        return Int64(info.st_size)
    }

    /// Whether the file at `path` can be read again from its start: a regular file can, a
    /// pipe or a device cannot.
    static func isRereadable(_ path: String) -> Bool {
        FileIO.regularFileSize(path) != nil
    }

    /// Whether a regular file that reports size 0 yields bytes anyway (`/proc` files do).
    private static func hasContent(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var byte: UInt8 = 0
        return read(fd, &byte, 1) == 1
    }
}
