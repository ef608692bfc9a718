import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT and SIGTERM into a cancellation of the running request.
///
/// `arm()` runs first thing, so a signal during any phase (reading standard input, the
/// transfer) ends af with 130 or 143 rather than killing it. The handler records the signal
/// (`ProcessInterruption`) and writes its number to a pipe (the things a handler may safely
/// do); without `SA_RESTART`, a read blocked on a pipe returns `EINTR` and gives up, and the
/// session's transfer thread watches the pipe and cancels the request there.
enum SignalWatcher {
    /// The ends of the pipe; the C signal handler writes to `writeEnd`.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1
    nonisolated(unsafe) private static var readEnd: Int32 = -1

    /// Installs the handler for SIGINT and SIGTERM (once per process, however many runs
    /// share it: af's tests run the command in-process, in parallel).
    static func arm() {
        _ = installed
        unblock([SIGINT, SIGTERM])
    }

    /// Runs once, the first time it is read (Swift initialises a static `let` exactly once).
    private static let installed: Bool = {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return false }
        for end in ends {
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            ProcessInterruption.note(number)
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(SignalWatcher.writeEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        return true
    }()

    /// Cancels the session's request when a signal arrives (or already arrived).
    static func install(on session: Session, _ cancel: @escaping @Sendable (AFError.Cancellation) -> Void) {
        arm()
        let readEnd = readEnd
        guard readEnd >= 0 else { return }
        if let pending = ProcessInterruption.pending { cancel(pending) }
        session.watch(fileDescriptor: readEnd) {
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) == 1 {
                cancel(Int32(byte) == SIGTERM ? .terminated : .interrupted)
            }
        }
    }

    /// Unblocks `signals` for this thread. A parent may have started af with them blocked (a
    /// thread pool's mask is inherited through spawn); af relies on them.
    static func unblock(_ signals: [Int32]) {
        var wanted = sigset_t()
        sigemptyset(&wanted)
        for number in signals { sigaddset(&wanted, number) }
        pthread_sigmask(SIG_UNBLOCK, &wanted, nil)
    }
}
