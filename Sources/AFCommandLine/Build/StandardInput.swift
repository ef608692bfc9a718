import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Standard input as a request body (SPEC §3): read only when it is a pipe or a regular
/// file with at least one byte; a terminal or a character device such as `/dev/null` is
/// never read.
enum StandardInput {
    /// A regular file counts from where its reading stands: the shell, or a `read` in a
    /// loop, may have read its start, which is then not af's to send (a file read to its end
    /// is `none`). A directory (`af post URL < DIR`) cannot be read at all.
    enum Kind { case none, pipe, regularFile, directory }

    /// What standard input is.
    static func kind(of fd: Int32, isTerminal: Bool) -> Kind {
        guard !isTerminal else { return .none }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .none }
        switch info.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK: return .pipe
        case S_IFREG:
            let offset = max(0, Int64(lseek(fd, 0, SEEK_CUR)))
            return Int64(info.st_size) > offset ? .regularFile : .none
        case S_IFDIR: return .directory
        default: return .none
        }
    }

    /// A path from which what is left of standard input reads, for a body or an item that
    /// reads it by path, and standard input taken as read, as curl and HTTPie leave it (a
    /// `while read` loop over the same file ends instead of sending its lines again). The
    /// path `/proc/self/fd/N` opens the file anew, at its start: a regular file read past
    /// its start is copied from where its reading stands to a file without a name.
    static func remainderPath(_ fd: Int32, temporaryDirectory: String) throws(CommandFailure) -> String {
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return "/proc/self/fd/\(fd)" }
        guard lseek(fd, 0, SEEK_CUR) > 0 else {
            _ = lseek(fd, 0, SEEK_END)
            return "/proc/self/fd/\(fd)"
        }
        let copy = try FileIO.makeUnnamedFile(in: temporaryDirectory, prefix: "af-stdin").mapError { failure in
            CommandFailure(failure.temporaryFileMessage(in: temporaryDirectory), exitCode: ExitStatus.output)
        }.get()
        _ = try copyRest(of: fd, to: copy, source: "standard input", copying: "copy standard input to a temporary file")
        // The copy lives as long as af: its descriptor is its only name.
        return "/proc/self/fd/\(copy)"
    }

    /// What to say when a regular file on standard input was read past its start before af
    /// ran, as a `while read` loop over it leaves it: its other lines become the body (and
    /// the loop ends), which the user of such a loop rarely meant. Nil for a file at its
    /// start (`af post URL < body.json`).
    static func readPastStartNotice(_ fd: Int32) -> String? {
        var info = stat()
        let offset = lseek(fd, 0, SEEK_CUR)
        guard offset > 0, fstat(fd, &info) == 0, Int64(info.st_size) > Int64(offset) else { return nil }
        let name = FileIO.resolvedPath("/proc/self/fd/\(fd)").map { "'\(Quote.argument($0))'" } ?? "a file"
        return "standard input is \(name), already read to byte \(offset) (by a `while read` loop?): "
            + "its other \(Int64(info.st_size) - Int64(offset)) bytes are sent as the body; -I (--ignore-stdin) leaves them unread"
    }

    /// Copies what is left to read of `fd` (`source`, for errors) to `out`, leaving the
    /// file system's last room free; the bytes copied. `copying` says what the copy is for,
    /// in an error: "cannot COPYING: REASON; set TMPDIR to a roomier directory".
    private static func copyRest(of fd: Int32, to out: Int32, source: String, copying: String) throws(CommandFailure) -> Int64 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        var room = TemporaryRoom()
        while true {
            let count = try readSome(fd, into: buffer, source: source)
            if count == 0 { return total }
            let code = FileIO.writeAll(out, UnsafeRawBufferPointer(rebasing: buffer[0..<count]), keeping: &room)
            if code != 0 {
                throw CommandFailure("cannot \(copying): \(POSIXFailure(code: code).description); set TMPDIR to a roomier directory", exitCode: ExitStatus.output)
            }
            total += Int64(count)
        }
    }

    /// Whether input is waiting right now, without blocking (used when the command line
    /// already gives a body, to refuse an ambiguous second one).
    static func hasPendingData(_ fd: Int32, kind: Kind) -> Bool {
        switch kind {
        case .none, .directory: return false
        case .regularFile: return true
        case .pipe:
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) == 1 else { return false }
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 1 || (read(fd, &byte, 1) == 1)
        }
    }

    /// How long a pipe may stay silent before af says what it is waiting for
    /// (`NoticeDelays.silentInput`), and how.
    struct WaitNotice: Sendable {
        var seconds: Double
        var write: @Sendable (String) -> Void
        /// What af does meanwhile, and what to do about it, after "nothing has come on X in N s; ".
        var meanwhile = "af waits for it to end as the request body (give -I, --ignore-stdin, when it is not the body)"
    }

    /// The notice of input that gives nothing (`delays.silentInput`), written on `channel` as
    /// a line of af's own (`af: TEXT`); none with -q.
    static func waitNotice(on channel: OutputChannel, quiet: Bool, delays: NoticeDelays) -> WaitNotice? {
        quiet ? nil : WaitNotice(seconds: delays.silentInput) { text in channel.writeNotice(text) }
    }

    /// The notice for standard input in a script, written on the descriptor `stderr` before
    /// there is an output channel: a pipe nobody writes to or closes (a CI step's open stdin)
    /// would hold af without a word, as HTTPie would be held. None with -q.
    static func waitNotice(stderr: Int32, quiet: Bool, delays: NoticeDelays) -> WaitNotice? {
        quiet ? nil : WaitNotice(seconds: delays.silentInput) { text in writeNotice(text, stderr: stderr) }
    }

    /// Writes `af: TEXT` as one line on `stderr`, before there is an output channel.
    static func writeNotice(_ text: String, stderr: Int32) {
        let line = "af: \(text)\n"
        _ = Array(line.utf8).withUnsafeBytes { FileIO.writeAll(stderr, $0) }
    }

    /// A pipe read whole, so that the body has a length and can be sent again: its bytes
    /// while they fit in `Spool.memoryLimit`, so that a small body needs no file (nor a
    /// writable `TMPDIR`), else the temporary file they were copied to (memory stays flat).
    enum Held: Sendable {
        case bytes([UInt8])
        case file(path: String)

        /// The request body that sends it.
        var body: RequestBody {
            switch self {
            case .bytes(let bytes): .bytes(bytes)
            case .file(let path): .file(path: path)
            }
        }

        /// The multipart part's content that sends it.
        var partContent: MultipartFormData.Part.Content {
            switch self {
            case .bytes(let bytes): .bytes(bytes)
            case .file(let path): .file(path: path)
            }
        }
    }

    /// Reads `fd` to its end and holds what it gave (`Held`), in memory up to
    /// `Spool.memoryLimit` bytes; nil when it gave no bytes. With `notice`, a pipe that gives
    /// nothing, not even its end, for `notice.seconds` gets one line saying af waits for it.
    static func hold(_ fd: Int32, temporaryDirectory: String, source: String = "standard input", notice: WaitNotice? = nil) throws(CommandFailure) -> Held? {
        if let notice { try wait(for: fd, source: source, notice: notice) }
        var start: [UInt8] = []
        if try readStart(of: fd, into: &start, limit: Spool.memoryLimit, source: source) {
            return start.isEmpty ? nil : .bytes(start)
        }
        let (out, path) = try FileIO.makeTemporaryFile(in: temporaryDirectory, prefix: "af-stdin").mapError { failure in
            CommandFailure(failure.temporaryFileMessage(in: temporaryDirectory), exitCode: ExitStatus.output)
        }.get()
        defer { close(out) }
        let copying = "spool \(source) to \(path)"
        do throws(CommandFailure) {
            var room = TemporaryRoom()
            let code = start.withUnsafeBytes { FileIO.writeAll(out, $0, keeping: &room) }
            if code != 0 {
                throw CommandFailure("cannot \(copying): \(POSIXFailure(code: code).description); set TMPDIR to a roomier directory", exitCode: ExitStatus.output)
            }
            _ = try copyRest(of: fd, to: out, source: source, copying: copying)
        } catch {
            unlink(path)
            throw error
        }
        return .file(path: path)
    }

    /// Opens the FIFO at `path` (`item`'s) to read without waiting in `open` for its writer,
    /// where nothing could be said while it waited, then waits for the writer's first bytes or
    /// its end, saying so through `notice` once it has been silent for `notice.seconds`: Linux
    /// reads a FIFO that has never had a writer as ended, so reading starts only once `poll`
    /// sees bytes or a writer gone. `source` names it in messages.
    static func openFIFO(_ path: String, item: String, notice: WaitNotice?, source: String? = nil) throws(CommandFailure) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw FileReading.unreadable(path, item, POSIXFailure(code: errno)) }
        do throws(CommandFailure) {
            try awaitInput(on: fd, path: path, item: item, notice: notice, source: source)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Waits until `fd` (`path`, read for `item`) has bytes or its end, saying so through
    /// `notice` once it has been silent for `notice.seconds`; Ctrl-C ends the wait.
    static func awaitInput(on fd: Int32, path: String, item: String, notice: WaitNotice?, source: String? = nil) throws(CommandFailure) {
        let source = source ?? "'\(path)'"
        if let notice { try wait(for: fd, source: source, notice: notice) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, -1) < 0 {
            guard errno == EINTR else { throw FileReading.unreadable(path, item, POSIXFailure(code: errno)) }
            if let interrupted = CommandFailure.interrupted(whileReading: source) { throw interrupted }
        }
    }

    /// Waits for `fd` to have something to read (or its end), saying so through `notice`
    /// once it has been silent for `notice.seconds`.
    private static func wait(for fd: Int32, source: String, notice: WaitNotice) throws(CommandFailure) {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var ready = poll(&descriptor, 1, Int32(notice.seconds * 1000))
        while ready < 0, errno == EINTR {
            if let interrupted = CommandFailure.interrupted(whileReading: source) { throw interrupted }
            ready = poll(&descriptor, 1, Int32(notice.seconds * 1000))
        }
        if ready == 0 {
            notice.write("nothing has come on \(source) in \(Format.seconds(notice.seconds)); \(notice.meanwhile)")
        }
    }

    /// Reads `fd` into `bytes` until its end (true) or until `bytes` holds more than
    /// `limit` (false: the rest is still to read).
    private static func readStart(of fd: Int32, into bytes: inout [UInt8], limit: Int, source: String) throws(CommandFailure) -> Bool {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        while bytes.count <= limit {
            let count = try readSome(fd, into: buffer, source: source)
            if count == 0 { return true }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return false
    }

    /// One `read` of `fd` (`source`, for errors) into `buffer`: the bytes read, 0 at its end.
    /// A signal that interrupts it reads again, unless it ends the run.
    private static func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, source: String) throws(CommandFailure) -> Int {
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            guard let code = FileIO.failure(errno, of: fd, awaiting: POLLIN) else { continue }
            if code == EINTR {
                guard let interrupted = CommandFailure.interrupted(whileReading: source) else { continue }
                throw interrupted
            }
            throw .unreadable("cannot read \(source): \(POSIXFailure(code: code).description)")
        }
    }
}
