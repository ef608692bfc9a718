import AFEngine
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where af writes its output: a file descriptor (standard output or error), or, for a later
/// line of `af batch`, memory and then a temporary file. Safe to share between the transfer
/// thread and the main thread.
///
/// Writes to a descriptor go straight to it; a reader that has gone away (`EPIPE`) is
/// remembered so the run can end at once and quietly.
final class OutputChannel: Sendable {
    private struct State: Sendable {
        /// Keeps `error` as the first failure, and returns it.
        mutating func remember(_ error: AFError) -> AFError {
            if failure == nil { failure = error }
            return error
        }

        /// Why a write is refused before it starts: the reader went away, or a signal
        /// interrupted an earlier write.
        var refusal: AFError? {
            closed ? OutputChannel.closedError : interrupted ? OutputChannel.interruptedError : nil
        }

        /// Records how a write to the descriptor ended (0, or the `errno` that stopped it)
        /// and returns its error.
        mutating func outcome(of code: Int32) -> AFError? {
            switch code {
            case 0:
                return nil
            case EINTR:
                interrupted = true
                return OutputChannel.interruptedError
            case EPIPE:
                closed = true
                return OutputChannel.closedError
            default:
                return remember(OutputChannel.writeError(code))
            }
        }

        /// The reader has gone away.
        var closed = false
        /// A write gave up for SIGINT or SIGTERM: later ones do at once.
        var interrupted = false
        /// The descriptor's first other write failure (a full disk).
        var failure: AFError?
        /// A held channel's output.
        var held: HeldOutput?
    }

    let isTerminal: Bool
    /// Rewrites each message written as text (`af batch` names the line in it).
    let rewrite: (@Sendable (String) -> String)?
    /// The descriptor written to; nil for a held channel (`State.held`).
    private let fd: Int32?
    /// Whether `copy` may let the kernel copy (`sendfile`): only into a regular file, where
    /// the bytes are copied when the call returns. Into a pipe (or socket) `sendfile` hands
    /// over references to the source file's cached pages, which the reader reads later: a
    /// batch reuses its spool log's stretches as soon as they are printed, so a reader behind
    /// by a few outputs got a later line's output in place of an earlier one's.
    private let copiesInKernel: Bool
    /// Runs before each write to the descriptor (a batch erases its progress line from the
    /// terminal both share).
    private let beforeWriting: (@Sendable () -> Void)?
    /// `writeNotice` writes nothing (`-qq`): only errors reach the descriptor.
    private let mutesNotices: Bool
    private let state: Mutex<State>
    /// Held by a write to the descriptor for as long as it takes, so that threads writing
    /// through the channel never interleave their bytes. `state` is held only to look at and
    /// record how writes end: a batch lane that asks after standard output's health after
    /// each line does not wait behind another lane's write to a slow reader.
    private let writing = Mutex(())

    convenience init(fd: Int32, isTerminal: Bool, rewrite: (@Sendable (String) -> String)? = nil) {
        var info = stat()
        let regularFile = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        self.init(fd: fd, isTerminal: isTerminal, rewrite: rewrite, copiesInKernel: regularFile)
    }

    private init(
        fd: Int32, isTerminal: Bool, rewrite: (@Sendable (String) -> String)?, copiesInKernel: Bool, beforeWriting: (@Sendable () -> Void)? = nil,
        mutesNotices: Bool = false
    ) {
        self.fd = fd
        self.copiesInKernel = copiesInKernel
        self.beforeWriting = beforeWriting
        self.mutesNotices = mutesNotices
        state = Mutex(State())
        self.isTerminal = isTerminal
        self.rewrite = rewrite
    }

    /// A channel that keeps up to `limit` bytes in memory and moves everything to the
    /// temporary file `spill` gives once more is written.
    init(holdingUpTo limit: Int, isTerminal: Bool, spill: @escaping @Sendable () -> Result<SpoolRegion, AFError>) {
        fd = nil
        copiesInKernel = false
        beforeWriting = nil
        mutesNotices = false
        state = Mutex(State(held: HeldOutput(limit: limit, takeFile: spill)))
        self.isTerminal = isTerminal
        rewrite = nil
    }

    /// The same descriptor, not taken for a terminal, with each message rewritten by
    /// `rewrite`. Nil for a held channel.
    func rewriting(_ rewrite: @escaping @Sendable (String) -> String) -> OutputChannel? {
        fd.map { OutputChannel(fd: $0, isTerminal: false, rewrite: rewrite, copiesInKernel: copiesInKernel, mutesNotices: mutesNotices) }
    }

    /// The same channel with its notices left out (`-qq`): `writeNotice` writes nothing, and
    /// only errors are written. Itself when it mutes them already, or is a held channel.
    func mutingNotices() -> OutputChannel {
        guard !mutesNotices, let fd else { return self }
        return OutputChannel(fd: fd, isTerminal: isTerminal, rewrite: rewrite, copiesInKernel: copiesInKernel, beforeWriting: beforeWriting, mutesNotices: true)
    }

    /// The same descriptor, as much a terminal as this one, running `prelude` before each
    /// write. Nil for a held channel.
    func preceding(eachWriteWith prelude: @escaping @Sendable () -> Void) -> OutputChannel? {
        fd.map { OutputChannel(fd: $0, isTerminal: isTerminal, rewrite: rewrite, copiesInKernel: copiesInKernel, beforeWriting: prelude, mutesNotices: mutesNotices) }
    }

    /// The width of the terminal this channel writes to, read now (a terminal can be resized
    /// while af runs); `fallback` when it is not a terminal or does not say.
    func columns(fallback: Int) -> Int {
        guard isTerminal, let fd else { return fallback }
        return Environment.columns(of: fd) ?? fallback
    }

    /// Whether the reader has gone away.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// The first failure writing to the descriptor other than a reader gone away (a full
    /// disk): what was written after it may be lost.
    var writeFailure: AFError? { state.withLock { $0.failure } }

    /// Whether the reader has gone away, and the first other write failure, read together
    /// (a batch asks after every line).
    var writeHealth: (closed: Bool, failure: AFError?) { state.withLock { ($0.closed, $0.failure) } }

    /// Writes all bytes; throws `.output` when the descriptor fails (a closed pipe included).
    func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        guard !bytes.isEmpty else { return }
        beforeWriting?()
        guard let fd else {
            let failure: AFError? = state.withLock { state in state.refusal ?? state.held?.write(bytes) }
            if let failure { throw failure }
            return
        }
        let failure: AFError? = writing.withLock { _ in
            if let refusal = state.withLock({ $0.refusal }) { return refusal }
            let code = FileIO.writeAllUnlessInterrupted(fd, bytes)
            return state.withLock { $0.outcome(of: code) }
        }
        if let failure { throw failure }
    }

    /// For a held channel: ends it (see `HeldOutput.release`).
    func release() -> (file: SpoolRegion?, bytes: [UInt8], lost: Bool) {
        state.withLock { $0.held?.release() } ?? (nil, [], false)
    }

    /// A write SIGINT or SIGTERM interrupted: the run ends as that signal asks.
    private static var interruptedError: AFError {
        .cancelled(ProcessInterruption.pending ?? .interrupted)
    }

    private static func writeError(_ code: Int32) -> AFError {
        // A descriptor af was started without is held open read-only (CStartup), so writing
        // to it fails this way: say what the shell did.
        let reason = code == EBADF
            ? "its descriptor was closed when af started (as >&- does); send it to /dev/null instead, or give -q to print nothing"
            : POSIXFailure(code: code).description
        return .output(OutputFailure(kind: .writeFailed, message: "cannot write the output: \(reason)"))
    }

    /// Copies `count` bytes of the file `source` from `offset` on: in the kernel (`sendfile`)
    /// into a regular file, else through `buffer`, so that the bytes are copied once the call
    /// returns and `source` may be written again.
    func copy(from source: Int32, offset: Int64, count: Int64, buffer: UnsafeMutableRawBufferPointer) throws(AFError) {
        guard let fd else {
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot copy a file into held output"))
        }
        if count > 0 { beforeWriting?() }
        let failure: AFError? = writing.withLock { _ in
            if let refusal = state.withLock({ $0.refusal }) { return refusal }
            var position = off_t(offset)
            let end = off_t(offset + count)
            var kernelCopies = copiesInKernel
            while position < end {
                let wanted = Int(min(end - position, off_t(buffer.count)))
                var moved: Int
                if kernelCopies {
                    moved = sendfile(fd, source, &position, wanted)
                    if moved < 0, errno == EINVAL || errno == ENOSYS {
                        kernelCopies = false
                        continue
                    }
                } else {
                    moved = pread(source, buffer.baseAddress, wanted, position)
                    if moved > 0 {
                        let code = FileIO.writeAllUnlessInterrupted(fd, UnsafeRawBufferPointer(rebasing: buffer[..<moved]))
                        if code != 0 {
                            errno = code
                            moved = -1
                        } else {
                            position += off_t(moved)
                        }
                    }
                }
                if moved < 0 {
                    // A non-blocking descriptor that takes nothing now is waited on.
                    guard let code = FileIO.failure(errno, of: fd, awaiting: POLLOUT) else { continue }
                    if code == EINTR, ProcessInterruption.pending == nil { continue }
                    return state.withLock { $0.outcome(of: code) }
                }
                if moved == 0 { break }
            }
            return nil
        }
        if let failure { throw failure }
    }

    func write(_ bytes: [UInt8]) throws(AFError) {
        try bytes.withBytes { buffer throws(AFError) in try write(buffer) }
    }

    func write(_ text: String) throws(AFError) {
        try write(Array((rewrite?(text) ?? text).utf8))
    }

    /// Writes `text` as what the run prints (help, a curl command line, pins) and returns
    /// the exit status: 0, also when the reader has gone away (`af --help | head`); on any
    /// other failure (a full disk) 9, with the error line on `errors`.
    func writeResult(_ text: String, errors: OutputChannel) -> Int32 {
        do throws(AFError) {
            try write(text)
            return ExitStatus.success
        } catch {
            return status(after: error, errors: errors)
        }
    }

    /// The exit status after `error` writing here: 0 when the reader has gone away (the run
    /// ends quietly), else the error's (9), with its line on `errors` (`attempts`: the
    /// request's tries, when the output followed one).
    func status(after error: AFError, errors: OutputChannel, attempts: Int = 1) -> Int32 {
        if isClosed { return ExitStatus.success }
        errors.writeError(ExitMapping.message(for: error, attempts: attempts))
        return ExitMapping.status(for: error, checkStatus: false)
    }

    /// Writes, ignoring failures (for standard error messages).
    func writeQuietly(_ text: String) {
        try? write(text)
    }

    /// Writes an error line, `af: error: MESSAGE`, ignoring failures. The message's control
    /// characters are shown, not written (`Quote.controls`): it may quote a server's words.
    func writeError(_ message: String) {
        writeLine("error: \(message)")
    }

    /// Writes one line of af's own on standard error, `af: MESSAGE` (a warning, a retry or
    /// a saved file), ignoring failures; nothing on a channel that mutes notices (`-qq`).
    func writeNotice(_ message: String) {
        guard !mutesNotices else { return }
        writeLine(message)
    }

    /// Writes `af: MESSAGE` and a line break. Control characters are shown, not written
    /// (`Quote.controls`): messages quote file names, URLs and servers' words.
    private func writeLine(_ message: String) {
        writeQuietly("af: \(Quote.controls(message))\n")
    }

    static let closedError = AFError.output(OutputFailure(kind: .writeFailed, message: "standard output was closed"))
}

