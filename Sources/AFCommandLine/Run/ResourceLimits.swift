import AFEngine
internal import CSched
#if canImport(Glibc)
import Glibc
#endif

/// The limits the shell set on af (`ulimit -n`, `ulimit -v`). Below a floor a request
/// cannot be made at all, and libdispatch (under af's timers) fails in ways no error reaches
/// the user from: it traps when it cannot make its event descriptor, and waits forever when
/// it cannot start a thread. Such a limit is named before anything is read or sent.
enum ResourceLimits {
    /// Open files a plain request holds at once (the standard streams, its socket, the
    /// transfer thread's wakeup and signal pipes, the event loop's descriptors: ten), with
    /// two to spare. A request that needs more (a session file and its lock, an `--auth-cmd`
    /// command's pipes) fails with "too many open files" where they are missing.
    static let minimumDescriptors = 12

    /// Address space (`ulimit -v`, in bytes) for af's code and libraries and its threads'
    /// stacks (8 MiB each unless `ulimit -s` says otherwise); a request needed about 45 MiB.
    static let minimumAddressSpace: UInt64 = 64 << 20

    /// The open-file limit after raising the soft limit to the hard one when it is below
    /// `floor` (`Int.max`: always, as `af batch` wants room for every request in flight); nil
    /// when there is none that matters.
    static func descriptors(raisingBelow floor: Int) -> Int? {
        raised(RLIMIT_NOFILE, below: rlim_t(clamping: floor)).map { Int(clamping: $0) }
    }

    /// Descriptors af holds by the time a batch starts that it opened itself or was always
    /// given: the standard streams and the signal pipe.
    static let ownDescriptorsAtBatchStart = 5

    /// Descriptors open now beyond `ownDescriptorsAtBatchStart`: those the program that
    /// started af left open to it (a shell's, a CI runner's), which count against the
    /// open-file limit as af's own do. 0 when `/proc/self/fd` cannot be listed.
    static func inheritedDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var open = 0
        while let entry = readdir(directory) {
            // Every entry but `.` and `..`, whose names start with a dot.
            if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { open += 1 }
        }
        // The listing's own descriptor is one of them.
        return max(0, open - 1 - ownDescriptorsAtBatchStart)
    }

    /// How many processors af may run on: those of its CPU affinity (`taskset`, a container's
    /// cpuset), 1 when that cannot be told.
    static func processors() -> Int {
        var set = cpu_set_t()
        guard sched_getaffinity(0, MemoryLayout<cpu_set_t>.size, &set) == 0 else { return 1 }
        return max(1, withUnsafeBytes(of: &set) { bytes in bytes.reduce(0) { $0 + $1.nonzeroBitCount } })
    }

    /// Raises the limits to their floors where the hard limits allow, and fails (exit 1)
    /// where they do not.
    static func ensureMinimum() throws(CommandFailure) {
        if let limit = descriptors(raisingBelow: minimumDescriptors), limit < minimumDescriptors {
            throw CommandFailure("af may have at most \(limit) files open here (ulimit -n), and a request needs \(minimumDescriptors): raise the limit (ulimit -n 1024)",
                                 exitCode: ExitStatus.network)
        }
        if let space = raised(RLIMIT_AS, below: rlim_t(minimumAddressSpace)), space < minimumAddressSpace {
            throw CommandFailure("af may use at most \(Format.bytes(Int64(space))) of memory here (ulimit -v), and needs \(Format.bytes(Int64(minimumAddressSpace))): raise the limit (ulimit -v unlimited)",
                                 exitCode: ExitStatus.network)
        }
    }

    /// `resource`'s soft limit, first raised to its hard limit when below `floor`; nil when
    /// unlimited or unknown.
    private static func raised(_ resource: __rlimit_resource, below floor: rlim_t) -> rlim_t? {
        var limit = rlimit()
        guard getrlimit(Int32(resource.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max, limit.rlim_cur < floor {
            let raised = rlimit(rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max)
            if setrlimit(Int32(resource.rawValue), [raised]) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? nil : limit.rlim_cur
    }
}
