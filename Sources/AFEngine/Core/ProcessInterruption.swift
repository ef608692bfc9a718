#if canImport(Glibc)
import Glibc
#endif

/// The SIGINT or SIGTERM a process received, for code that blocks in a read the transfer
/// loop cannot wake (a body streamed from a pipe): its signal handler calls `note(_:)`, and a
/// read that returns `EINTR` asks `pending` whether to give up.
package enum ProcessInterruption {
    /// The signal number, written by a signal handler (a plain aligned store is all a
    /// handler may do), 0 when none arrived.
    nonisolated(unsafe) private static var caught: Int32 = 0

    /// Records `signal`; async-signal-safe.
    package static func note(_ signal: Int32) {
        caught = signal
    }

    /// The cancellation a received signal asks for, or nil.
    package static var pending: AFError.Cancellation? {
        switch caught {
        case 0: return nil
        case SIGTERM: return .terminated
        default: return .interrupted
        }
    }
}
