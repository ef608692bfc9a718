import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Reading the small files that request items and af's own documents name. Everything read
/// here is held in memory, so every read has a size cap: `/dev/zero` or an endless pipe is
/// an error, not a machine out of memory.
enum FileReading {
    /// The most a value item (`name=@file`, `name:=@file`, `Name:@file`, `name==@file`) may hold.
    static let valueLimit = 16 << 20
    /// The most a config, session, netrc or trust-policy file may hold.
    static let documentLimit = 16 << 20

    /// The file's bytes (a pipe or `<(…)` too), or an exit-66 failure that names the file and
    /// the item; more than `limit` bytes is refused.
    static func bytes(atPath path: String, item: String, limit: Int = valueLimit) throws(CommandFailure) -> [UInt8] {
        let fd = try openToRead(path, item: item)
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw .unreadable("cannot read '\(path)' (from '\(item)'): it is a directory; name a file")
        }
        return try readCapped(fd, path: path, item: item, limit: limit) { limit in
            "it holds more than \(Format.bytes(Int64(limit))), and a value is held in memory; send large files as a body (@file) or a file part (name@file), which are streamed"
        }
    }

    /// One of af's own documents (config, session, netrc, trust policy): only a regular file
    /// is read (a FIFO would hang af, a device would never end), and at most `documentLimit`
    /// bytes of it.
    static func document(atPath path: String, what: String) throws(CommandFailure) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw unreadable(path, what, POSIXFailure(code: errno).description) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw .unreadable("cannot read '\(path)' (from '\(what)'): it is not a regular file; name a file")
        }
        let bytes = try readCapped(fd, path: path, item: what, limit: documentLimit) { limit in
            "it is larger than \(Format.bytes(Int64(limit))), more than such a file ever needs"
        }
        return Array(withoutByteOrderMark(bytes[...]))
    }

    /// A regular file's bytes as they are, at most `documentLimit` of them; nil when `path` is
    /// a readable file of another kind (a FIFO from `<(…)` has one reader, which must be the
    /// one that uses it; a device may never end). A path that cannot be read, or a directory,
    /// fails as `checkReadable` fails it.
    static func regularFile(atPath path: String, item: String) throws(CommandFailure) -> [UInt8]? {
        // Looked at before opening: opening a named FIFO, even without reading, lets its writer
        // write into a pipe whose bytes are dropped when af closes it again.
        var before = stat()
        guard stat(path, &before) == 0, (before.st_mode & S_IFMT) == S_IFREG else {
            try checkReadable(path, item: item)
            return nil
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw unreadable(path, item, POSIXFailure(code: errno).description) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return try readCapped(fd, path: path, item: item, limit: documentLimit) { limit in
            "it is larger than \(Format.bytes(Int64(limit))), more than such a file ever needs"
        }
    }

    /// `bytes` without the UTF-8 byte order mark an editor may put at the start of a text
    /// file: the editor's, not the text's (JSON lets a reader ignore it; in a netrc or a batch
    /// line it would be part of the first word).
    static func withoutByteOrderMark(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.starts(with: byteOrderMark) ? bytes.dropFirst(byteOrderMark.count) : bytes
    }

    /// `path` opened to read (waiting, for a FIFO, until a writer opens it, or until Ctrl-C),
    /// or an exit-66 failure that names it and `item`.
    static func openToRead(_ path: String, item: String) throws(CommandFailure) -> Int32 {
        switch FileIO.openToRead(path) {
        case .descriptor(let fd): return fd
        case .failed(let failure): throw unreadable(path, item, failure.description)
        case .interrupted(let reason): throw .interrupted(by: reason, whileReading: "'\(path)'")
        }
    }

    private static func readCapped(
        _ fd: Int32, path: String, item: String, limit: Int, tooLarge: (Int) -> String
    ) throws(CommandFailure) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR {
                    // A pipe that never ends (`a=@<(sleep 100)`) must not outlast Ctrl-C.
                    if let interrupted = CommandFailure.interrupted(whileReading: "'\(path)'") { throw interrupted }
                    continue
                }
                throw unreadable(path, item, POSIXFailure(code: errno).description)
            }
            if count == 0 { break }
            guard result.count + count <= limit else {
                throw .unreadable("cannot use '\(path)' (from '\(item)'): \(tooLarge(limit))")
            }
            result.append(contentsOf: buffer[0..<count])
        }
        return result
    }

    private static func unreadable(_ path: String, _ item: String, _ reason: String) -> CommandFailure {
        .unreadable("cannot read '\(path)' (from '\(item)'): \(reason); check the path and its permissions")
    }

    /// The value a value item (`name=@file`, `name:=@file`, `Name:@file`, `name==@file`)
    /// reads: the file's bytes without the UTF-8 byte order mark an editor may have put at
    /// its start, which is no part of the text (a JSON reader may ignore it, RFC 8259 §8.1;
    /// in a header, a query or a JSON string it would be three stray bytes).
    static func value(atPath path: String, item: String) throws(CommandFailure) -> [UInt8] {
        let bytes = try bytes(atPath: path, item: item)
        return bytes.starts(with: byteOrderMark) ? Array(withoutByteOrderMark(bytes[...])) : bytes
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The value's text with trailing newlines removed (for headers and query values).
    static func line(atPath path: String, item: String) throws(CommandFailure) -> String {
        var text = String(decoding: try value(atPath: path, item: item), as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text
    }

    /// Checks that a file exists and is readable, without reading it.
    static func checkReadable(_ path: String, item: String, directoryAllowed: Bool = false) throws(CommandFailure) {
        switch readability(path) {
        case .readable(let directory):
            if directory, !directoryAllowed {
                throw .unreadable("cannot read '\(path)' (from '\(item)'): it is a directory; name a file")
            }
        case .unreadable(let reason):
            throw unreadable(path, item, reason)
        }
    }

    enum Readability {
        case readable(directory: Bool)
        case unreadable(String)
    }

    /// Whether `path` can be read (a directory: listed and entered), and why not.
    static func readability(_ path: String) -> Readability {
        var info = stat()
        guard stat(path, &info) == 0 else { return .unreadable(POSIXFailure(code: errno).description) }
        let directory = (info.st_mode & S_IFMT) == S_IFDIR
        guard access(path, directory ? R_OK | X_OK : R_OK) == 0 else { return .unreadable(POSIXFailure(code: errno).description) }
        return .readable(directory: directory)
    }
}
