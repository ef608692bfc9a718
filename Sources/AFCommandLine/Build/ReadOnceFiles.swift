@_spi(Locking) import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// The files the TLS library opens anew for every connection (`--verify`, `--cert`,
/// `--cert-key`, `--crl`, `--pin-cert`), when they can be read only once: a pipe from a
/// shell's `<(…)` or a named FIFO is read whole, once per run, into a file without a name
/// in the temporary directory (`FileIO.makeUnnamedFile`), and the library and af's own
/// checks are given that file's `/proc/self/fd/N`, which opens at its start every time.
///
/// Given as they were, a redirect's or a retry's second connection found the pipe empty
/// ("error setting certificate file", exit 7), and OpenSSL opening a named FIFO with no writer
/// tried again after Ctrl-C or SIGTERM, so af never ended. Read here, the wait for the writer
/// ends on either signal (exit 130 or 143), and what was read serves every connection and
/// every line of a batch.
enum ReadOnceFiles {
    /// The largest such file af reads: far more than a CA bundle, a key or a CRL needs.
    static let limit = FileReading.documentLimit

    /// `path` itself when it is a regular file or a directory (or cannot be looked at: the
    /// checks that follow say why); otherwise the path of its copy, made the first time.
    static func stablePath(_ path: String, item: String, environment: Environment) throws(CommandFailure) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return path }
        let type = info.st_mode & S_IFMT
        guard type != S_IFREG, type != S_IFDIR else { return path }
        if let known = copies.read({ $0[path] }) { return known }
        // Read outside the lock: a FIFO waits for its writer.
        let bytes = try FileReading.bytes(atPath: path, item: item, limit: limit) { limit in
            "it holds more than \(Format.bytes(Int64(limit))), more than such a file ever needs"
        }
        let (fd, copy) = try unnamedFile(holding: bytes, in: environment.temporaryDirectory, path: path, item: item)
        let kept = copies.write { copies in
            if let first = copies[path] { return first }
            copies[path] = copy
            return copy
        }
        // Another run in this process read it at the same time: its copy serves both.
        if kept != copy { close(fd) }
        return kept
    }

    /// The copies made in this process, by the path they were read from. Their descriptors
    /// stay open until af exits (nothing else names the files).
    private static let copies = Protected<[String: String]>([:])

    /// A new file without a name holding `bytes`: its descriptor and the path that opens it.
    private static func unnamedFile(holding bytes: [UInt8], in directory: String, path: String, item: String) throws(CommandFailure) -> (Int32, String) {
        let fd: Int32
        switch FileIO.makeUnnamedFile(in: directory, prefix: "af-read-once") {
        case .success(let made): fd = made
        case .failure(let failure):
            throw .unreadable("cannot use '\(Quote.argument(path))' (from '\(item)'): cannot keep a copy of it in '\(Quote.argument(directory))': \(failure.description); save it to a file and name that")
        }
        let code = bytes.withUnsafeBytes { FileIO.writeAll(fd, $0) }
        guard code == 0 else {
            close(fd)
            throw .unreadable("cannot use '\(Quote.argument(path))' (from '\(item)'): cannot keep a copy of it: \(POSIXFailure(code: code).description); save it to a file and name that")
        }
        return (fd, "/proc/self/fd/\(fd)")
    }
}
