import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Reading the small files that request items name.
enum FileReading {
    /// The whole file, or an exit-66 failure that names the file and the item.
    static func bytes(atPath path: String, item: String) throws(CommandFailure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .unreadable("cannot read '\(path)' (from '\(item)'): \(POSIXError.describe(errno)); check the path and its permissions")
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw .unreadable("cannot read '\(path)' (from '\(item)'): it is a directory; name a file")
        }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable("cannot read '\(path)' (from '\(item)'): \(POSIXError.describe(errno)); check the path and its permissions")
            }
            if count == 0 { break }
            result.append(contentsOf: buffer[0..<count])
        }
        return result
    }

    /// The file's text with trailing newlines removed (for headers and query values).
    static func line(atPath path: String, item: String) throws(CommandFailure) -> String {
        var text = String(decoding: try bytes(atPath: path, item: item), as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text
    }

    /// Checks that a file exists and is readable, without reading it.
    static func checkReadable(_ path: String, item: String) throws(CommandFailure) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .unreadable("cannot read '\(path)' (from '\(item)'): \(POSIXError.describe(errno)); check the path and its permissions")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw .unreadable("cannot read '\(path)' (from '\(item)'): it is a directory; name a file")
        }
        guard access(path, R_OK) == 0 else {
            throw .unreadable("cannot read '\(path)' (from '\(item)'): \(POSIXError.describe(errno)); check the path and its permissions")
        }
    }
}
