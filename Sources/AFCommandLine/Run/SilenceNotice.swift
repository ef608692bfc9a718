@_spi(Locking) import AFEngine

/// Says once on standard error when a server has taken a request and not answered for a
/// while, or has sent part of a body and then nothing for a while: without `--timeout` af
/// waits as long as the server does (as curl and HTTPie do), and a CI job's log otherwise
/// shows nothing until the job's own limit ends it. The wait for an answer counts from when
/// the request could go out (its connection ready): a body still going up is no silence.
/// The process's `SilenceWatch` looks at it while it waits.
final class SilenceNotice: EventMonitor, Sendable {
    /// What the current attempt waits for.
    private enum Phase: Sendable {
        case idle
        /// A response head.
        case answer
        /// More of the body of `head`, `received` bytes of which had come at `lastActivity`.
        case body(ResponseHead, received: Int64)
    }

    private struct State: Sendable {
        /// The request while it waits, whose origin a notice names.
        var request: Request?
        var phase = Phase.idle
        /// When the server last answered, or the request last sent a byte.
        var lastActivity = 0.0
        var sent: Int64 = 0
        /// The request body's size, while part of it is still to go (nil once it has gone, or
        /// when the request has none).
        var unsent: Int64?
        /// The body's pipe has nothing to give (`TransferProgress.awaitingBody`): the wait is
        /// for af's own input, not for the server.
        var awaitingBody = false
        /// That attempt's silence was told already.
        var told = false
    }

    private let seconds: Double
    private let watchesBody: Bool
    private let write: @Sendable (String) -> Void
    private let watch: SilenceWatch
    private let state = Protected(State())
    let interests: RequestEvent.Interests

    /// `seconds`: how long a server may be silent before af says so
    /// (`NoticeDelays.silentServer`). `write` takes the notice's text (without `af: `).
    /// `sendsBody`: the request has a body, whose upload progress is watched (libcurl's
    /// progress callback, which a download would otherwise pay for on every piece it
    /// receives). `watchesBody`: a response body that stops coming is told too (not where
    /// silence is the stream's way, `--stream`, nor under a progress bar, which shows it).
    init(seconds: Double, sendsBody: Bool, watchesBody: Bool = true, watch: SilenceWatch = .shared, write: @escaping @Sendable (String) -> Void) {
        self.seconds = seconds
        self.watchesBody = watchesBody
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
                state.phase = .answer
                state.lastActivity = now
                state.sent = 0
                state.unsent = nil
                state.awaitingBody = false
                state.told = false
                watch.watch(self, due: now + seconds)
            }
        case .progress(let progress):
            state.write { state in
                guard case .answer = state.phase else { return }
                if progress.awaitingBody != state.awaitingBody {
                    state.awaitingBody = progress.awaitingBody
                    // Bytes came again: the server's silence counts from now.
                    if !progress.awaitingBody { state.lastActivity = now }
                }
                guard progress.sent != state.sent else { return }
                state.sent = progress.sent
                state.unsent = progress.expectedToSend.flatMap { $0 > progress.sent ? $0 : nil }
                state.lastActivity = now
            }
        case .informational:
            // `100 Continue` or `103 Early Hints` is no answer yet; the silence starts anew.
            state.write { $0.lastActivity = now }
        case .responseHead(_, let head):
            // The body's silence counts from here.
            state.write { state in
                guard watchesBody else { return stop(&state) }
                state.phase = .body(head, received: 0)
                state.lastActivity = now
            }
        case .attemptFinished:
            state.write { stop(&$0) }
        default:
            break
        }
    }

    /// The attempt waits no longer.
    private func stop(_ state: inout State) {
        state.phase = .idle
        state.request = nil
        watch.unwatch(self)
    }

    /// For the watch, at `now`: tells a silence that has lasted, and leaves the watch then,
    /// as when the request waits no longer (nil); otherwise the time it may turn silent.
    func check(at now: Double) -> Double? {
        let next = state.write { state -> Next in
            let next = decide(&state, at: now)
            // Told, or no longer waiting: out of the watch, under the lock, as every turn is.
            if case .due = next {} else { watch.unwatch(self) }
            return next
        }
        switch next {
        case .done:
            return nil
        case .due(let due):
            return due
        case .tell(let request, let silence):
            let url = request.currentDescription.url
            let origin = (try? HTTPURL(parsing: url))?.authority ?? url
            let what: String
            switch silence {
            case .answer: what = "has not answered for \(Format.seconds(seconds))"
            case .input(let sent):
                write("the request body's pipe has given nothing for \(Format.seconds(seconds)) (\(Format.bytes(sent)) sent to \(origin) so far); still waiting (--timeout=SECONDS sets a limit)")
                return nil
            case .upload(let sent, let size):
                what = "has taken no more of the request body for \(Format.seconds(seconds)) (\(Format.bytes(sent)) of \(Format.bytes(size)) sent)"
            case .body(let received):
                what = "has sent nothing more for \(Format.seconds(seconds)) (\(Format.bytes(received)) of the body so far)"
            }
            write("\(origin) \(what); still waiting (--timeout=SECONDS sets a limit)")
            return nil
        }
    }

    private enum Next { case done, tell(Request, Silence), due(Double) }
    private enum Silence { case answer, input(sent: Int64), upload(sent: Int64, of: Int64), body(received: Int64) }

    /// What `check` does at `now`: tell a silence that has lasted (and mark it told), stop
    /// when the request waits no longer, or wait until the silence may have lasted.
    private func decide(_ state: inout State, at now: Double) -> Next {
        guard !state.told, let request = state.request else { return .done }
        var silence = Silence.answer
        switch state.phase {
        case .idle:
            return .done
        case .answer:
            // A server that stopped taking the body has not been asked anything yet, nor has
            // one waiting for the rest of a body af has not had from its pipe.
            if state.awaitingBody {
                silence = .input(sent: state.sent)
            } else if let size = state.unsent {
                silence = .upload(sent: state.sent, of: size)
            }
        case .body(let head, let before):
            // An event stream's silences are its way (looked at here, where few requests
            // get, not for every head).
            if MediaType.essence(head.headers.value(for: .contentType)) == "text/event-stream" { return .done }
            // Body bytes are counted by the transfer, not told one by one. None counted: the
            // attempt has just ended (its end is on its way).
            guard let count = request.bodyBytesReceived else { return .due(now + seconds) }
            if count != before {
                state.phase = .body(head, received: count)
                state.lastActivity = now
            }
            // The last byte came at some time since the check before, which is all a look
            // can tell: looked at a quarter of the time apart while the body comes, a body
            // that stops is told at most a quarter late, not a whole period.
            if now - state.lastActivity < seconds { return .due(min(state.lastActivity + seconds, now + seconds / 4)) }
            silence = .body(received: count)
        }
        guard now - state.lastActivity >= seconds else { return .due(state.lastActivity + seconds) }
        state.told = true
        return .tell(request, silence)
    }
}
