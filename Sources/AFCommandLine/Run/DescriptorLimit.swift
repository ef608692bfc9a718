#if canImport(Glibc)
import Glibc
#endif

/// How many files af may hold open (`ulimit -n`). Below a floor a request cannot be made at
/// all, and one of the libraries under af (libdispatch, for its timers) traps when it cannot
/// make its event descriptor: such a limit is named before anything is read or sent.
enum DescriptorLimit {
    /// What a plain request holds at once (the standard streams, its socket, the transfer
    /// thread's wakeup and signal pipes, the event loop's descriptors: ten), with two to
    /// spare. A request that needs more (a session file and its lock, an `--auth-cmd`
    /// command's pipes) fails with "too many open files" where they are missing.
    static let minimum = 12

    /// The limit after raising the soft limit to the hard one when it is below `floor`
    /// (`Int.max`: always, as `af batch` wants room for every request in flight); nil when
    /// there is none that matters.
    static func raised(below floor: Int) -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max, limit.rlim_cur < rlim_t(clamping: floor) {
            let raised = rlimit(rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), [raised]) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? nil : Int(limit.rlim_cur)
    }

    /// Raises the limit to `minimum` where the hard limit allows, and fails (exit 1) where it
    /// does not.
    static func ensureMinimum() throws(CommandFailure) {
        try check(raised(below: minimum))
    }

    /// Fails (exit 1) when `limit` is below `minimum`.
    static func check(_ limit: Int?) throws(CommandFailure) {
        guard let limit, limit < minimum else { return }
        throw CommandFailure("af may have at most \(limit) files open here (ulimit -n), and a request needs \(minimum): raise the limit (ulimit -n 1024)",
                             exitCode: ExitStatus.network)
    }
}
