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
    /// `tooLarge` gives the reason a file of more than `limit` bytes is refused. A pipe that
    /// gives nothing for a while is said to through `notice`.
    static func bytes(
        atPath path: String, item: String, limit: Int = valueLimit, notice: StandardInput.WaitNotice? = nil,
        tooLarge: (Int) -> String = { limit in
            "it holds more than \(Format.bytes(Int64(limit))), and a value is held in memory; send large files as a body (@file) or a file part (name@file), which are streamed"
        }
    ) throws(CommandFailure) -> [UInt8] {
        let fd = try openToRead(path, item: item, notice: notice)
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw .unreadable("cannot read '\(path)' (from '\(item)'): it is a directory; name a file")
        }
        return try readCapped(fd, path: path, item: item, limit: limit, tooLarge: tooLarge)
    }

    /// One of af's own documents (config, session, netrc, trust policy): only a regular file
    /// is read (a FIFO would hang af, a device would never end), and at most `documentLimit`
    /// bytes of it.
    static func document(atPath path: String, what: String) throws(CommandFailure) -> [UInt8] {
        // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw unreadable(path, what, POSIXFailure(code: errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw .unreadable("cannot read '\(path)' (from '\(what)'): it is not a regular file; name a file")
        }
        let bytes = try readCapped(fd, path: path, item: what, limit: documentLimit) { limit in
            "it is larger than \(Format.bytes(Int64(limit))), more than such a file ever needs"
        }
        if let problem = TextProblem(bytes[...]) {
            throw .unreadable("cannot read '\(path)' (from '\(what)') as text: it is \(problem.what); \(problem.advice)")
        }
        return Array(withoutByteOrderMark(bytes[...]))
    }

    /// Why bytes that should be UTF-8 text are not: a file saved as UTF-16 or UTF-32 (as
    /// Windows editors and PowerShell's `>` save text), or a byte that is not UTF-8. Read
    /// anyway, each such byte would become U+FFFD, and a UTF-16 file a NUL between letters.
    struct TextProblem: Sendable, Equatable {
        /// "UTF-16" or "UTF-32" when a byte order mark says the text is that; nil otherwise.
        let encoding: String?
        /// The first byte that is not UTF-8, and where it is (from 0); for a byte order mark,
        /// its first byte, at 0.
        let byte: UInt8
        let offset: Int

        /// The problem of `bytes`, or nil when they are UTF-8 text.
        init?(_ bytes: ArraySlice<UInt8>) {
            if bytes.starts(with: [0xFF, 0xFE, 0, 0]) || bytes.starts(with: [0, 0, 0xFE, 0xFF]) {
                (encoding, byte, offset) = ("UTF-32", bytes[bytes.startIndex], 0)
                return
            }
            if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
                (encoding, byte, offset) = ("UTF-16", bytes[bytes.startIndex], 0)
                return
            }
            let ascii = bytes.withContiguousStorageIfAvailable { UnsafeRawBufferPointer($0).allBytes(below: 0x80) } ?? false
            if ascii { return nil }
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = bytes.makeIterator()
            var offset = 0
            while true {
                switch parser.parseScalar(from: &iterator) {
                case .valid(let encoded):
                    offset += encoded.count
                case .error:
                    (encoding, byte, self.offset) = (nil, bytes[bytes.startIndex + offset], offset)
                    return
                case .emptyInput:
                    return nil
                }
            }
        }

        /// What the text is instead of UTF-8, after "it is".
        var what: String {
            if let encoding { return "\(encoding) text (it starts with \(encoding)'s byte order mark)" }
            return "not UTF-8 (byte 0x\(String(byte, radix: 16, uppercase: true)) at offset \(offset))"
        }

        /// What to do: save it as UTF-8, with the command that converts it when the encoding
        /// is known.
        var advice: String {
            "save it as UTF-8" + (encoding.map { ", for example with iconv -f \($0) -t UTF-8" } ?? "")
        }
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
        guard fd >= 0 else { throw unreadable(path, item, POSIXFailure(code: errno)) }
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
        case .failed(let failure): throw unreadable(path, item, failure)
        case .interrupted(let reason): throw .interrupted(by: reason, whileReading: "'\(path)'")
        }
    }

    /// `path` opened to read for `item`: a pipe (a FIFO, `<(…)`, standard input) without
    /// waiting in `open` for its writer, then until it has bytes or its end, said through
    /// `notice` when it is silent for a while; standard input that is a socket likewise.
    private static func openToRead(_ path: String, item: String, notice: StandardInput.WaitNotice?) throws(CommandFailure) -> Int32 {
        var info = stat()
        guard stat(path, &info) == 0, case let type = info.st_mode & S_IFMT, type == S_IFIFO || type == S_IFSOCK else {
            return try openToRead(path, item: item)
        }
        var notice = notice
        notice?.meanwhile = "af reads it to its end as the value of '\(item)'"
        guard type == S_IFSOCK else { return try StandardInput.openFIFO(path, item: item, notice: notice, source: source(path, item: item)) }
        let fd = try openToRead(path, item: item)
        do throws(CommandFailure) {
            try StandardInput.awaitInput(on: fd, path: path, item: item, notice: notice, source: source(path, item: item))
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// How messages name the file `item` reads: standard input as such, not as the
    /// `/proc/self/fd/0` af reads it by.
    static func source(_ path: String, item: String) -> String {
        StandardInputItems.itemEndings.contains(where: item.hasSuffix) ? "standard input" : "'\(path)'"
    }

    private static func readCapped(
        _ fd: Int32, path: String, item: String, limit: Int, tooLarge: (Int) -> String
    ) throws(CommandFailure) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                // A socket shared with a parent that made it non-blocking is waited on.
                guard let code = FileIO.failure(errno, of: fd, awaiting: POLLIN) else { continue }
                if code == EINTR {
                    // A pipe that never ends (`a=@<(sleep 100)`) must not outlast Ctrl-C.
                    if let interrupted = CommandFailure.interrupted(whileReading: source(path, item: item)) { throw interrupted }
                    continue
                }
                throw unreadable(path, item, POSIXFailure(code: code))
            }
            if count == 0 { break }
            guard result.count + count <= limit else {
                throw .unreadable("cannot use '\(path)' (from '\(item)'): \(tooLarge(limit))")
            }
            result.append(contentsOf: buffer[0..<count])
        }
        return result
    }

    static func unreadable(_ path: String, _ item: String, _ failure: POSIXFailure) -> CommandFailure {
        // Out of descriptors, no path or permission is wrong.
        unreadable(path, item, failure.description, advice: failure.descriptorShortageAdvice)
    }

    private static func unreadable(_ path: String, _ item: String, _ reason: String, advice: String? = nil) -> CommandFailure {
        .unreadable("cannot read '\(path)' (from '\(item)'): \(reason); \(advice ?? "check the path and its permissions")")
    }

    /// The value a value item (`name=@file`, `name:=@file`, `Name:@file`, `name==@file`)
    /// reads: the file's bytes without the UTF-8 byte order mark an editor may have put at
    /// its start, which is no part of the text (a JSON reader may ignore it, RFC 8259 §8.1;
    /// in a header, a query or a JSON string it would be three stray bytes).
    static func value(atPath path: String, item: String, notice: StandardInput.WaitNotice? = nil) throws(CommandFailure) -> [UInt8] {
        let bytes = try bytes(atPath: path, item: item, notice: notice)
        return bytes.starts(with: byteOrderMark) ? Array(withoutByteOrderMark(bytes[...])) : bytes
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The text of a value item's file outside a multipart form (a JSON string, a form or
    /// query value, a header), which is UTF-8 text (SPEC: "the file's text"), without the
    /// byte order mark `value` leaves out; any other file is an exit-66 failure that says
    /// what it is, where decoding it would have sent U+FFFD in place of its bytes.
    static func text(atPath path: String, item: String, notice: StandardInput.WaitNotice? = nil) throws(CommandFailure) -> String {
        let bytes = try bytes(atPath: path, item: item, notice: notice)
        if let problem = TextProblem(bytes[...]) {
            let advice = problem.encoding == nil
                ? "send a file of other bytes as the body (@FILE) or as a file part (name@FILE), which carry any bytes"
                : problem.advice
            throw .unreadable("cannot read \(source(path, item: item)) (from '\(item)') as text: it is \(problem.what); \(advice)")
        }
        return String(decoding: withoutByteOrderMark(bytes[...]), as: UTF8.self)
    }

    /// The value's text with trailing newlines removed (for headers and query values).
    static func line(atPath path: String, item: String, notice: StandardInput.WaitNotice? = nil) throws(CommandFailure) -> String {
        var text = try text(atPath: path, item: item, notice: notice)
        // By scalar: "\r\n" is one Character, which neither hasSuffix("\n") nor "\r" matched.
        while let last = text.unicodeScalars.last, last == "\n" || last == "\r" { text.unicodeScalars.removeLast() }
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
