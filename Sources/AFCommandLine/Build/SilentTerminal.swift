#if canImport(Glibc)
import Glibc
#endif

/// Turns a terminal's echo off for a password prompt and puts it back however the prompt
/// ends: normally, or by SIGINT, SIGTERM or SIGHUP, whose default action would otherwise leave
/// the user's shell without echo. Ctrl-Z (SIGTSTP) puts echo back while af is stopped and
/// turns it off again when `fg` continues it, as `sudo` and `ssh` do: a shell restores its
/// own terminal settings when a job stops, not the job's when it continues, so the rest of
/// the password was echoed.
///
/// Echo goes off before the prompt is shown, so nothing typed after the prompt appears is
/// echoed or discarded.
enum SilentTerminal {
    // Read by the C signal handler, which can capture nothing; set before the handler is
    // installed and cleared after it is removed.
    nonisolated(unsafe) private static var descriptor: Int32 = -1
    /// The settings to restore. On the heap, not in a global `termios`: the compiler emits
    /// such a global 3 bytes short of the 60 that copying the struct writes (AddressSanitizer
    /// caught the overflow), so a global would let the copy spill into its neighbour.
    nonisolated(unsafe) private static let original: UnsafeMutablePointer<termios> = {
        let pointer = UnsafeMutablePointer<termios>.allocate(capacity: 1)
        pointer.initialize(to: termios())
        return pointer
    }()
    /// The SIGTSTP action, installed again after each stop (its handler stops af with the
    /// default action, which it sets for that).
    nonisolated(unsafe) private static let stopAction: UnsafeMutablePointer<sigaction> = {
        let pointer = UnsafeMutablePointer<sigaction>.allocate(capacity: 1)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            _ = tcsetattr(SilentTerminal.descriptor, TCSANOW, SilentTerminal.original)
            signal(number, SIG_DFL)
            var stop = sigset_t()
            sigemptyset(&stop)
            sigaddset(&stop, number)
            pthread_sigmask(SIG_UNBLOCK, &stop, nil)
            // Stopped here until SIGCONT; the prompt is still reading when it returns.
            raise(number)
            var silent = SilentTerminal.original.pointee
            silent.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(SilentTerminal.descriptor, TCSANOW, &silent)
            sigaction(number, SilentTerminal.stopAction, nil)
        }
        sigemptyset(&action.sa_mask)
        // The prompt's read of the terminal goes on after a stop rather than ending the
        // password there.
        action.sa_flags = SA_RESTART
        pointer.initialize(to: action)
        return pointer
    }()
    nonisolated(unsafe) private static var previous: [(signal: Int32, action: sigaction)] = []

    private static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Silences `fd` and runs `body`; returns what `body` returns. Without a terminal on
    /// `fd`, just runs `body`.
    static func withEchoOff<Result>(on fd: Int32, _ body: () -> Result) -> Result {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { return body() }
        original.pointee = settings
        descriptor = fd
        previous = signals.map { number in
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                _ = tcsetattr(SilentTerminal.descriptor, TCSANOW, SilentTerminal.original)
                signal(number, SIG_DFL)
                raise(number)
            }
            sigemptyset(&action.sa_mask)
            var old = sigaction()
            sigaction(number, &action, &old)
            return (number, old)
        }
        SignalWatcher.unblock(signals)
        var silent = settings
        silent.c_lflag &= ~tcflag_t(ECHO)
        var stopped = sigaction()
        sigaction(SIGTSTP, stopAction, &stopped)
        previous.append((SIGTSTP, stopped))
        // TCSAFLUSH drops only what was typed before the prompt, which the user never saw.
        _ = tcsetattr(fd, TCSAFLUSH, &silent)
        defer {
            _ = tcsetattr(fd, TCSANOW, &settings)
            for (number, action) in previous {
                var action = action
                sigaction(number, &action, nil)
            }
            previous = []
            descriptor = -1
        }
        return body()
    }
}
