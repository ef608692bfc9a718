@_spi(Locking) import AFEngine
internal import CSpawn
#if canImport(Glibc)
import Glibc
#endif

/// Runs a shell command and collects its output (for `--auth-cmd`).
enum Subprocess {
    struct Outcome: Sendable {
        var status: Int32
        var stdout: [UInt8]
        var stderr: [UInt8]
        /// Standard output went past its limit: the command was stopped, `stdout` holds the
        /// first bytes only.
        var overflowed = false
        /// The command ran past its time limit and was stopped.
        var timedOut = false
        /// SIGINT or SIGTERM reached af while the command ran, and it was stopped.
        var interrupted = false
    }

    /// The shells started and not yet waited for, and whether af is ending (a shell started
    /// after `stopRunning()` looked is stopped by whoever started it).
    private struct Children {
        var running: Set<pid_t> = []
        var stopping = false
    }

    private static let children = Locked(Children())

    /// Stops every command still running, with what it started: for af's exit, so that a
    /// command a signal or a failure left behind (a token fetch in flight) does not outlive
    /// af; one started later is stopped at once. A shell this stops is reaped by its own
    /// `shell` call, if that is still waiting.
    static func stopRunning() {
        let running = children.withLock { children in
            children.stopping = true
            return children.running
        }
        for pid in running { stop(pid) }
    }

    /// Stops `pid` and what it started (which may not write, and so would not end on SIGPIPE
    /// from closed pipes): held still first, so it starts nothing more while its processes
    /// are looked up. The command stays in af's process group, where a prompt on the terminal
    /// can still read.
    private static func stop(_ pid: pid_t) {
        kill(pid, SIGSTOP)
        let started = ProcessTree.descendants(of: pid)
        kill(pid, SIGKILL)
        for process in started { kill(process, SIGKILL) }
    }

    /// Runs `/bin/sh -c command` with standard input from /dev/null, default signal
    /// dispositions and an empty signal mask; why not when it cannot be started. At most
    /// `outputLimit` bytes of standard output are read: a command that prints more (`yes`)
    /// is stopped, rather than filling af's memory until it is killed. Of standard error the
    /// first `errorLimit` bytes are kept (the rest is read and dropped). With a `timeLimit`
    /// (seconds) a command still running after it is stopped. The command is done when the
    /// shell exits, whatever it left running in the background; a command that is stopped
    /// takes the processes it started with it.
    static func shell(_ command: String, environment: [String: String], outputLimit: Int, errorLimit: Int = 4096, timeLimit: Double? = nil,
                      notice: (wait: StandardInput.WaitNotice, text: String)? = nil) -> Result<Outcome, POSIXFailure> {
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0 else { return .failure(POSIXFailure(code: errno)) }
        guard pipe(&errPipe) == 0 else {
            let failure = POSIXFailure(code: errno)
            close(outPipe[0])
            close(outPipe[1])
            return .failure(failure)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        for fd in outPipe + errPipe { posix_spawn_file_actions_addclose(&actions, fd) }
        // Nothing else of af's: its sockets (a connection to the server, the transfer loop's
        // wake-up pair) and descriptors are not all close-on-exec, and a command that goes on
        // running (an agent it starts) would hold them, and a reader of af's output would
        // wait for the command's end to see af's.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGXFSZ] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let arguments: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", command].map { (text: String) in strdup(text) } + [nil]
        let variables: [UnsafeMutablePointer<CChar>?] = environment.map { (key: String, value: String) in strdup("\(key)=\(value)") } + [nil]
        defer {
            for pointer in arguments { free(pointer) }
            for pointer in variables { free(pointer) }
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, arguments, variables)
        if spawned == 0 {
            let child = pid
            if children.withLock({ children in children.running.insert(child); return children.stopping }) { stop(child) }
        }
        close(outPipe[1])
        close(errPipe[1])
        guard spawned == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            return .failure(POSIXFailure(code: spawned))
        }
        var out: [UInt8] = []
        var err: [UInt8] = []
        var open: [Int32] = [outPipe[0], errPipe[0]]
        var buffer = [UInt8](repeating: 0, count: 8192)
        var overflowed = false
        var status: Int32 = 0
        var reaped = false
        var timedOut = false
        var interrupted = false
        let deadline = timeLimit.map { Monotonic.now() + $0 }
        // When to say, once, that af still waits for the command.
        var noticeAt = notice.map { Monotonic.now() + $0.wait.seconds }
        // Reads what is ready on the open pipes (waiting up to `wait` ms for some); false
        // when nothing was.
        func readReady(wait: Int32) -> Bool {
            var descriptors = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), wait)
            if ready < 0, errno != EINTR {
                // Cannot wait on the pipes: stop reading and wait for the shell alone.
                for fd in open { close(fd) }
                open = []
            }
            guard ready > 0 else { return ready < 0 && !open.isEmpty }
            for descriptor in descriptors where descriptor.revents != 0 {
                let count = read(descriptor.fd, &buffer, buffer.count)
                if count > 0 {
                    if descriptor.fd == outPipe[0] {
                        out += buffer[0..<min(count, outputLimit + 1 - out.count)]
                        overflowed = out.count > outputLimit
                    } else if err.count < errorLimit {
                        err += buffer[0..<min(count, errorLimit - err.count)]
                    }
                } else if count == 0 || errno != EINTR {
                    close(descriptor.fd)
                    open.removeAll { $0 == descriptor.fd }
                }
            }
            return true
        }
        // With a time limit the wait goes on after both pipes are closed (a command can close
        // them and go on running); without one, a blocking wait for the shell follows.
        while !open.isEmpty || deadline != nil, !overflowed, !timedOut, !interrupted {
            // The run is ending: what the command prints can no longer be used.
            if ProcessInterruption.pending != nil {
                interrupted = true
                break
            }
            var wait: Int32 = 100
            if let deadline {
                let left = deadline - Monotonic.now()
                timedOut = left <= 0
                wait = Int32(max(0, min(100, (left * 1000).rounded(.up))))
            }
            if !timedOut { _ = readReady(wait: wait) }  // with no pipe open, a sleep
            if let at = noticeAt, let notice, Monotonic.now() >= at {
                notice.wait.write(notice.text)
                noticeAt = nil
            }
            // The command is done when the shell has exited, even if something it started in
            // the background (an agent, a cache daemon) still holds the pipes open: what the
            // shell wrote before it exited is in them already, and is read without waiting
            // (a bounded number of times, since the background may go on writing).
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = true
                var reads = 0
                while !open.isEmpty, !overflowed, reads < 32, readReady(wait: 0) { reads += 1 }
                break
            }
        }
        for fd in open { close(fd) }
        if overflowed || timedOut || interrupted, !reaped { stop(pid) }
        if !reaped {
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
        let child = pid
        _ = children.withLock { $0.running.remove(child) }
        let exited = (status & 0x7F) == 0
        let code = exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return .success(Outcome(status: code, stdout: out, stderr: err, overflowed: overflowed, timedOut: timedOut && !reaped, interrupted: interrupted && !reaped))
    }
}

/// An `--auth-cmd` command and the time it may take (`--timeout`, which bounds each attempt,
/// the token's fetch included); what a batch's lines that share a token have in common.
struct AuthCommand: Hashable, Sendable {
    var command: String
    var timeLimit: Double?
}

/// `--auth-cmd`: the bearer token is what the command prints.
struct CommandTokenProvider: TokenProvider {
    let command: AuthCommand
    let environment: [String: String]
    /// Says on standard error when the command has run for a while (a script would
    /// otherwise wait without a word); nil says nothing (`-q`).
    var notice: StandardInput.WaitNotice?

    func token(completion: @escaping @Sendable (Result<String, AFError>) -> Void) {
        let command = command
        let environment = environment
        let notice = notice
        BackgroundWork.run {
            completion(Self.fetch(command, environment: environment, notice: notice))
        }
    }

    /// The most a token command may print: far more than any token (a large JWT is a few
    /// kilobytes), far less than what would strain memory or a server's header limits.
    static let tokenLimit = 64 << 10

    static func fetch(_ authCommand: AuthCommand, environment: [String: String], notice: StandardInput.WaitNotice? = nil) -> Result<String, AFError> {
        let command = authCommand.command
        let waiting = notice.map { wait in
            let limit = authCommand.timeLimit == nil ? "give --timeout to limit it" : "--timeout limits it"
            return (wait, "--auth-cmd '\(command)' has not finished in \(Format.seconds(wait.seconds)); af waits for its token (\(limit))")
        }
        let outcome: Subprocess.Outcome
        switch Subprocess.shell(command, environment: environment, outputLimit: tokenLimit, timeLimit: authCommand.timeLimit, notice: waiting) {
        case .success(let finished): outcome = finished
        case .failure(let failure):
            return .failure(.adaptationFailed(reason: "cannot run --auth-cmd '\(command)' with /bin/sh: \(failure.description)"))
        }
        if outcome.interrupted {
            return .failure(.cancelled(ProcessInterruption.pending ?? .interrupted))
        }
        if outcome.timedOut, let limit = authCommand.timeLimit {
            return .failure(.adaptationFailed(reason: "--auth-cmd '\(command)' did not finish within \(Format.seconds(limit)) (--timeout) and was stopped; run it yourself to see where it waits"))
        }
        guard !outcome.overflowed else {
            return .failure(.adaptationFailed(reason: "--auth-cmd '\(command)' printed more than \(Format.bytes(Int64(tokenLimit))) and was stopped; it should print one line, the token"))
        }
        let token = String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: " \t\r\n")
        guard outcome.status == 0 else {
            // The first line, split on the LF byte (a CRLF is one character) and without a CR.
            let detail = String(decoding: outcome.stderr, as: UTF8.self).split(byte: 10).first
                .map { ": " + $0.trimmingCharacters(in: "\r") } ?? ""
            return .failure(.adaptationFailed(reason: "--auth-cmd '\(command)' exited with status \(outcome.status)\(detail); run it yourself to see why"))
        }
        // Bytes, not characters: "\r\n" is one character, which contains neither "\r" nor "\n".
        guard !token.isEmpty, !token.containsByte(10), !token.containsByte(13) else {
            return .failure(.adaptationFailed(reason: token.isEmpty
                ? "--auth-cmd '\(command)' printed no token; it should print the token on standard output"
                : "--auth-cmd '\(command)' printed more than one line; it should print one line, the token"))
        }
        return .success(token)
    }
}
