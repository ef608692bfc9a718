#if canImport(Glibc)
import Glibc
#endif

/// File-descriptor helpers shared by everything that writes files.
package enum FileIO {
    /// Writes every byte, retrying short writes and `EINTR`; returns 0 or the `errno` that
    /// stopped it.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        writeAll(fd, bytes, givingUpOnSignals: false)
    }

    /// `writeAll`, except that it gives up, returning `EINTR`, once SIGINT or SIGTERM has
    /// arrived (`ProcessInterruption`) and the descriptor takes nothing for a second: a write
    /// blocked on a pipe whose reader does not read would otherwise hold the process past
    /// Ctrl-C, or past the SIGTERM of a job's time limit, for as long as that reader waits.
    /// A reader that reads still gets everything, the last words of the run included.
    package static func writeAllUnlessInterrupted(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        writeAll(fd, bytes, givingUpOnSignals: true)
    }

    /// How long a write waits for a descriptor that takes nothing, once a signal has asked
    /// the process to end.
    static let lastWordsWait: Int32 = 1000

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, givingUpOnSignals: Bool) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            if givingUpOnSignals, ProcessInterruption.pending != nil {
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&descriptor, 1, lastWordsWait) == 0 { return EINTR }
            }
            let count = write(fd, base + offset, bytes.count - offset)
            if count < 0 {
                guard let code = failure(errno, of: fd, awaiting: POLLOUT) else { continue }
                if code == EINTR {
                    if givingUpOnSignals, ProcessInterruption.pending != nil { return EINTR }
                    continue
                }
                return code
            }
            offset += count
        }
        return 0
    }

    /// What a read or write of `fd` that failed with `code` failed of, once a refusal to wait
    /// has been waited out: nil when `fd` is ready now (call again), `EINTR` when a signal
    /// interrupted the wait, else `code`. A descriptor af inherited may be non-blocking (a
    /// pipe whose other holder, a Node.js parent or a CI runner, set `O_NONBLOCK` on the open
    /// file they share): a read or write that cannot go on at once fails with `EAGAIN`
    /// instead of waiting, and the input or output would be cut short. `events`: `POLLIN`
    /// for a read, `POLLOUT` for a write; an error or hang-up is the next call's to report.
    package static func failure(_ code: Int32, of fd: Int32, awaiting events: Int32) -> Int32? {
        guard code == EAGAIN || code == EWOULDBLOCK else { return code }
        var descriptor = pollfd(fd: fd, events: Int16(events), revents: 0)
        return poll(&descriptor, 1, -1) >= 0 || errno != EINTR ? nil : EINTR
    }

    /// Writes every byte at `offset` (`pwrite`), leaving the descriptor's position alone;
    /// returns 0 or the `errno` that stopped it.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var written = 0
        while written < bytes.count {
            let count = pwrite(fd, base + written, bytes.count - written, off_t(offset) + off_t(written))
            if count < 0 {
                if errno == EINTR { continue }
                return errno
            }
            written += count
        }
        return 0
    }

    /// What opening a file came to.
    package enum Opened {
        /// The descriptor.
        case descriptor(Int32)
        /// The `errno` that stopped it.
        case failed(POSIXFailure)
        /// SIGINT or SIGTERM arrived while the open waited (a FIFO waits for its other end).
        case interrupted(AFError.Cancellation)
    }

    /// Opens `path` to read (`O_CLOEXEC`), waiting, for a FIFO, until a writer opens it
    /// (`opening(_:flags:)`).
    package static func openToRead(_ path: String) -> Opened {
        opening(path, flags: O_RDONLY | O_CLOEXEC)
    }

    /// Opens `path` with `flags` (no `O_CREAT`), trying again when a signal interrupts the
    /// open, unless that signal was SIGINT or SIGTERM (`ProcessInterruption`): opening a FIFO
    /// blocks until its other end is opened, and must not outlast Ctrl-C. A socket of this
    /// process named to read (`duplicatingSocket`) is duplicated; `flags` then do not apply.
    package static func opening(_ path: String, flags: Int32) -> Opened {
        if flags & O_ACCMODE == O_RDONLY, let socket = duplicatingSocket(path) { return .descriptor(socket) }
        while true {
            let fd = open(path, flags)
            if fd >= 0 { return .descriptor(fd) }
            let code = errno
            guard code == EINTR else { return .failed(POSIXFailure(code: code)) }
            if let reason = ProcessInterruption.pending { return .interrupted(reason) }
        }
    }

    /// A duplicate of the descriptor of this process that `path` names (`/dev/stdin`,
    /// `/dev/fd/N`, `/proc/self/fd/N`) when that is a socket, which Linux does not open again
    /// through its link (ENXIO): standard input that a parent made one end of a socket pair
    /// (Node.js's child processes, a systemd socket unit) could not be read by its name. The
    /// duplicate shares the socket's position and blocking mode.
    private static func duplicatingSocket(_ path: String) -> Int32? {
        var number: Int32?
        if path == "/dev/stdin" {
            number = 0
        } else {
            for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
                number = Int32(path.dropFirst(prefix.count))
            }
        }
        guard let number, number >= 0 else { return nil }
        var info = stat()
        guard fstat(number, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        let copy = fcntl(number, F_DUPFD_CLOEXEC, 0)
        return copy >= 0 ? copy : nil
    }

    /// Whether something exists at `path` (a dangling symbolic link counts).
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Whether `path` is a symbolic link itself (whatever it points to, if anything).
    package static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// `path` with its symbolic links, `.` and `..` resolved (`realpath`); nil when it cannot
    /// be resolved (it does not exist).
    package static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` resolved, or `path` itself when it cannot be.
    package static func canonicalPath(_ path: String) -> String {
        resolvedPath(path) ?? path
    }

    /// Creates `path` and the directories above it that are missing, each with `mode`;
    /// on failure, the directory that could not be made and why. Split at `/` bytes: a slash
    /// followed by a combining mark is one Character with it, but still a separator.
    package static func makeDirectories(_ path: String, mode: mode_t) -> Result<Void, MakeDirectoryFailure> {
        var built = path.utf8.first == UInt8(ascii: "/") ? "" : "."
        for component in path.split(byte: UInt8(ascii: "/")) {
            built += "/" + component
            if mkdir(built, mode) != 0, errno != EEXIST {
                return .failure(MakeDirectoryFailure(path: built, reason: POSIXFailure(code: errno)))
            }
        }
        return .success(())
    }

    /// A directory `makeDirectories` could not make.
    package struct MakeDirectoryFailure: Error {
        package let path: String
        package let reason: POSIXFailure
    }

    /// The directory part of `path`: what comes before its last `/` (`/` for a name at the
    /// root, `.` for a bare name). Bytes, not Characters: a `/` followed by a combining mark
    /// is one Character, but still a separator to the file system.
    package static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of `path`: what comes after its last `/` (bytes, as `directory(of:)`).
    package static func name(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// Whether `path` is a directory (following symbolic links).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether `path` names directories of hashed certificates for OpenSSL: a directory, or
    /// a list of them separated by `:` (as `SSL_CERT_DIR` and OpenSSL's CA path take them)
    /// of which at least one exists.
    package static func isCertificateDirectory(_ path: String) -> Bool {
        if isDirectory(path) { return true }
        guard path.utf8.contains(UInt8(ascii: ":")) else { return false }
        return path.split(separator: ":").contains { isDirectory(String($0)) }
    }

    /// The size of the regular file at `path` (following symbolic links); nil for anything
    /// else — a pipe, a device, a directory — which can be read only once, or not at all.
    package static func regularFileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// Whether `path` is a device, FIFO or socket (following symbolic links, so
    /// `/dev/stdout` counts): something written in place, never replaced.
    package static func isSpecial(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let kind = info.st_mode & S_IFMT
        return kind == S_IFCHR || kind == S_IFBLK || kind == S_IFIFO || kind == S_IFSOCK
    }

    /// Whether `path` (or, with `path` nil, the open descriptor `fd`) is the null device,
    /// which keeps nothing written to it.
    package static func isNullDevice(path: String?, fd: Int32 = -1) -> Bool {
        var info = stat()
        var null = stat()
        guard (path.map { stat($0, &info) } ?? fstat(fd, &info)) == 0, stat("/dev/null", &null) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFCHR && null.st_mode & S_IFMT == S_IFCHR && info.st_rdev == null.st_rdev
    }

    /// The size of the file at `path`.
    package static func size(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    /// Creates a file in `directory` that has no name (mode 0600): only the descriptor
    /// reaches it, and it goes when that is closed. Linux's `O_TMPFILE` where the file
    /// system offers it; elsewhere a `makeTemporaryFile` unlinked at once.
    package static func makeUnnamedFile(in directory: String, prefix: String) -> Result<Int32, POSIXFailure> {
        // O_TMPFILE is __O_TMPFILE | O_DIRECTORY, a macro Swift does not import.
        let fd = open(directory, O_RDWR | O_CLOEXEC | O_DIRECTORY | 0o20000000, 0o600)
        if fd >= 0 { return .success(fd) }
        return makeTemporaryFile(in: directory, prefix: prefix).map { file in
            unlink(file.path)
            return file.fd
        }
    }

    /// Creates a new file with a unique name `directory/prefix-XXXXXX` (mode 0600) and
    /// returns its descriptor and path, or the `errno` of the failure.
    package static func makeTemporaryFile(in directory: String, prefix: String) -> Result<(fd: Int32, path: String), POSIXFailure> {
        var template = Array("\(directory)/\(prefix)-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard fd >= 0 else { return .failure(POSIXFailure(code: errno)) }
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return .success((fd, path))
    }
}

/// An `errno` value as an error.
package struct POSIXFailure: Error, Sendable, Equatable {
    /// The `errno` value.
    package var code: Int32

    /// Wraps an `errno` value.
    package init(code: Int32) {
        self.code = code
    }

    /// The C library's description (`strerror`), lower-cased at the start like the rest of
    /// af's messages.
    package var description: String {
        if code == FileIO.reserveReached {
            return "its file system is nearly full (af leaves 1 % of it free, up to 256 MiB)"
        }
        guard let text = strerror(code) else { return "error \(code)" }
        var message = String(cString: text)
        if let first = message.first, first.isUppercase, !message.hasPrefix("I/O") {
            message = first.lowercased() + message.dropFirst()
        }
        return message
    }
}
