import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT and SIGTERM into a cancellation of the running request.
///
/// The signal handler only writes the signal number to a pipe (the one thing a handler may
/// safely do); the session's transfer thread watches the pipe and cancels the request there.
enum SignalWatcher {
    /// The write end of the pipe, read by the C signal handler.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    static func install(on session: Session, _ cancel: @escaping @Sendable (AFError.Cancellation) -> Void) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        writeEnd = ends[1]
        let readEnd = ends[0]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(SignalWatcher.writeEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        unblock([SIGINT, SIGTERM])
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
