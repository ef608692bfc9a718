@_spi(Locking) import AFEngine

/// Says once on standard error when a server has taken a request and not answered for a
/// while: without `--timeout` af waits as long as the server does (as curl and HTTPie do),
/// and a CI job's log otherwise shows nothing until the job's own limit ends it. Counted
/// from when the request could go out (its connection ready): a body still going up is no
/// silence. The process's `SilenceWatch` looks at it while it waits.
final class SilenceNotice: EventMonitor, Sendable {
    private struct State: Sendable {
        /// The request while it waits, whose origin a notice names.
        var request: Request?
        /// An attempt waits for a response head; when it last sent a byte.
        var waiting = false
        var lastActivity = 0.0
        var sent: Int64 = 0
        /// That attempt's silence was told already.
        var told = false
    }

    private let seconds: Double
    private let write: @Sendable (String) -> Void
    private let watch: SilenceWatch
    private let state = Protected(State())
    let interests: RequestEvent.Interests

    /// `seconds`: how long a server may be silent before af says so
    /// (`NoticeDelays.silentServer`). `write` takes the notice's text (without `af: `).
    /// `sendsBody`: the request has a body, whose upload progress is watched (libcurl's
    /// progress callback, which a download would otherwise pay for on every piece it
    /// receives).
    init(seconds: Double, sendsBody: Bool, watch: SilenceWatch = .shared, write: @escaping @Sendable (String) -> Void) {
        self.seconds = seconds
        self.write = write
        self.watch = watch
        // Not `requestSent`: it is made only where the sent head is recorded, for -v. Every
        // attempt that connected ends with `attemptFinished`.
        let always: RequestEvent.Interests = [.connected, .responseHead, .informational, .attemptFinished]
        interests = sendsBody ? always.union(.progress) : always
    }

    func request(_ request: Request, didEmit event: RequestEvent) {
        let now = Monotonic.now()
        switch event.kind {
        case .connected:
            // The watch is told under the lock, in the order the request's turns come.
            state.write { state in
                state.request = request
                state.waiting = true
                state.lastActivity = now
                state.sent = 0
                state.told = false
                watch.watch(self, due: now + seconds)
            }
        case .progress(let progress):
            state.write { state in
                guard state.waiting, progress.sent != state.sent else { return }
                state.sent = progress.sent
                state.lastActivity = now
            }
        case .informational:
            // `100 Continue` or `103 Early Hints` is no answer yet; the silence starts anew.
            state.write { $0.lastActivity = now }
        case .responseHead, .attemptFinished:
            state.write { state in
                state.waiting = false
                state.request = nil
                watch.unwatch(self)
            }
        default:
            break
        }
    }

    /// For the watch, at `now`: tells a silence that has lasted, and leaves the watch then,
    /// as when the request waits no longer (nil); otherwise the time it may turn silent.
    func check(at now: Double) -> Double? {
        enum Next { case done, tell(Request), due(Double) }
        let next = state.write { state -> Next in
            guard state.waiting, !state.told, let request = state.request else {
                watch.unwatch(self)
                return .done
            }
            guard now - state.lastActivity >= seconds else { return .due(state.lastActivity + seconds) }
            state.told = true
            watch.unwatch(self)
            return .tell(request)
        }
        switch next {
        case .done:
            return nil
        case .due(let due):
            return due
        case .tell(let request):
            let url = request.currentDescription.url
            let origin = (try? HTTPURL(parsing: url))?.authority ?? url
            write("\(origin) has not answered for \(Format.seconds(seconds)); still waiting (--timeout=SECONDS sets a limit)")
            return nil
        }
    }
}
