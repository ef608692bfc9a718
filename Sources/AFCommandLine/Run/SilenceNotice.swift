@_spi(Locking) import AFEngine
import Dispatch

/// Says once on standard error when a server has taken a request and not answered for a
/// while: without `--timeout` af waits as long as the server does (as curl and HTTPie do),
/// and a CI job's log otherwise shows nothing until the job's own limit ends it. Counted
/// from when the request could go out (its connection ready): a body still going up is no
/// silence.
final class SilenceNotice: EventMonitor, Sendable {
    /// How long a server may be silent before af says so.
    static let seconds = 30.0

    private struct State: Sendable {
        /// The URL of the current attempt, whose origin a notice names.
        var url = ""
        /// An attempt waits for a response head; when it last sent a byte.
        var waiting = false
        var lastActivity = 0.0
        var sent: Int64 = 0
        /// That attempt's silence was told already.
        var told = false
        /// A check is scheduled.
        var checking = false
    }

    private let seconds: Double
    private let write: @Sendable (String) -> Void
    private let state = Protected(State())
    let interests: RequestEvent.Interests

    /// `write` takes the notice's text (without `af: `). `sendsBody`: the request has a body,
    /// whose upload progress is watched (libcurl's progress callback, which a download
    /// would otherwise pay for on every piece it receives).
    init(seconds: Double = SilenceNotice.seconds, sendsBody: Bool, write: @escaping @Sendable (String) -> Void) {
        self.seconds = seconds
        self.write = write
        // Not `requestSent`: it is made only where the sent head is recorded, for -v.
        let always: RequestEvent.Interests = [.attemptStarted, .connected, .responseHead, .informational, .attemptFinished, .finished]
        interests = sendsBody ? always.union(.progress) : always
    }

    func request(_ request: Request, didEmit event: RequestEvent) {
        let now = Monotonic.now()
        switch event.kind {
        case .attemptStarted(_, _, _, let url):
            state.write { $0.url = url }
        case .connected:
            let schedule = state.write { state -> Bool in
                state.waiting = true
                state.lastActivity = now
                state.sent = 0
                state.told = false
                defer { state.checking = true }
                return !state.checking
            }
            if schedule { check(after: seconds) }
        case .progress(let progress):
            state.write { state in
                guard state.waiting, progress.sent != state.sent else { return }
                state.sent = progress.sent
                state.lastActivity = now
            }
        case .informational:
            // `100 Continue` or `103 Early Hints` is no answer yet; the silence starts anew.
            state.write { $0.lastActivity = now }
        case .responseHead, .attemptFinished, .finished:
            state.write { $0.waiting = false }
        default:
            break
        }
    }

    /// Looks again in `delay` seconds: tells a silence that has lasted, or waits for the rest
    /// of one that has not yet.
    private func check(after delay: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in
            let now = Monotonic.now()
            enum Next { case stop, tell(String), wait(Double) }
            let next = state.write { state -> Next in
                guard state.waiting, !state.told else {
                    state.checking = false
                    return .stop
                }
                let silent = now - state.lastActivity
                guard silent >= seconds else { return .wait(seconds - silent) }
                state.told = true
                state.checking = false
                return .tell(state.url)
            }
            switch next {
            case .stop: break
            case .wait(let rest): check(after: rest)
            case .tell(let url):
                let origin = (try? HTTPURL(parsing: url))?.authority ?? url
                write("\(origin) has not answered for \(Format.seconds(seconds)); still waiting (--timeout=SECONDS sets a limit)")
            }
        }
    }
}
