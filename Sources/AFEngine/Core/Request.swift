/// One logical request and its whole life: every attempt, redirect and retry.
///
/// States: `initialized → resumed ⇄ suspended → cancelled | finished`; `cancelled` and
/// `finished` are final, and a transition the diagram does not allow is refused. A
/// suspended request can still end (its last attempt failed, or finished before the pause
/// took hold), so `suspended → finished` is allowed too. All mutable
/// state is one struct behind one lock. The request never decides to retry: every failure
/// goes to the session's retrier.
public final class Request: Sendable, TransferDelegate {
    /// Where a request is in its life.
    public enum State: String, Sendable {
        case initialized, resumed, suspended, cancelled, finished

        /// Whether the state diagram allows moving from this state to `next`.
        public func canTransition(to next: State) -> Bool {
            switch (self, next) {
            case (.initialized, .resumed), (.initialized, .cancelled): return true
            case (.resumed, .suspended), (.resumed, .cancelled), (.resumed, .finished): return true
            case (.suspended, .resumed), (.suspended, .cancelled), (.suspended, .finished): return true
            default: return false
            }
        }

        /// Whether the state is final.
        public var isTerminal: Bool { self == .cancelled || self == .finished }
    }

    private struct MutableState: Sendable {
        var state: State = .initialized
        /// The current hop's description, before adapters.
        var description: RequestDescription
        var hop = 0
        var attempts: [Attempt] = []
        var redirects: [RedirectRecord] = []
        var retryCount = 0
        var refreshCount = 0
        var transfer: (any AttemptHandle)?
        /// `transfer` was built while the request was suspended (during adaptation) and is
        /// held back until `resume()`.
        var transferHeld = false
        var response: Response?
        var completionHandlers: [@Sendable (Response) -> Void] = []
        /// An attempt was due while the request was suspended.
        var startPending = false
        /// Bumped to invalidate scheduled attempts.
        var generation = 0
        var cancellation: AFError.Cancellation?
        /// Times the request was sent again after an HTTP/2 connection that other requests
        /// had used failed it unanswered (`unansweredOnReusedConnection`).
        var resentOnNewConnection = 0
    }

    /// A number unique within the session, for traces.
    public let id: Int
    /// The session that made the request.
    public let session: Session
    /// The description the request was created with.
    public let originalDescription: RequestDescription
    let sink: any ResponseBodySink
    let validation: StatusValidation?
    private let createdAt = Monotonic.now()
    private let mutable: Protected<MutableState>

    init(id: Int, description: RequestDescription, session: Session, sink: any ResponseBodySink, validation: StatusValidation?) {
        self.id = id
        self.session = session
        self.sink = sink
        self.validation = validation
        originalDescription = description
        mutable = Protected(MutableState(description: description))
        emit(.created, .created(description))
    }

    // MARK: Observing

    /// Where the request is in its life.
    public var state: State { mutable.read { $0.state } }
    /// Attempts so far.
    public var attempts: [Attempt] { mutable.read { $0.attempts } }
    /// Redirects followed so far.
    public var redirects: [RedirectRecord] { mutable.read { $0.redirects } }
    /// Retries of failures made so far, across every hop (what retry limits count).
    public var retryCount: Int { mutable.read { $0.retryCount } }
    /// Attempts made again after a retrier renewed credentials (`RetryResult.retryAfterRefresh`).
    public var refreshCount: Int { mutable.read { $0.refreshCount } }
    /// The description of the current hop, before adapters.
    public var currentDescription: RequestDescription { mutable.read { $0.description } }
    /// The head of the latest response received.
    public var lastResponseHead: ResponseHead? { mutable.read { $0.attempts.last?.response } }
    /// Response body bytes the attempt under way has received so far, as they came (before a
    /// compressed body is decoded); nil when no attempt is under way. Readable from any
    /// thread, as a watchdog polls it.
    public var bodyBytesReceived: Int64? { mutable.read { $0.transfer?.bodyBytesReceived } }
    /// The outcome, once the request is cancelled or finished.
    public var response: Response? { mutable.read { $0.response } }

    /// Seconds since the request was created, on a monotonic clock.
    public var elapsed: Double {
        Monotonic.now() - createdAt
    }

    /// Calls `handler` once with the outcome (at once if the request already ended).
    public func onCompletion(_ handler: @escaping @Sendable (Response) -> Void) {
        let done = mutable.write { state -> Response? in
            if let response = state.response { return response }
            state.completionHandlers.append(handler)
            return nil
        }
        if let done { handler(done) }
    }

    /// Starts the request and drives it on the calling thread until it ends: no extra
    /// thread, for callers that would block anyway. Must not be called on the session's
    /// transfer thread or from a completion handler.
    public func run() -> Response {
        let driven = session.driver.drive(start: { resume() }, until: { mutable.read { $0.response != nil } })
        return driven ? (response ?? waitForCompletion()) : waitForCompletion()
    }

    /// Blocks the calling thread until the request ends and returns the outcome. Must not be
    /// called on the session's transfer thread before the request has ended: nothing else
    /// would run it there, so it stops the program with a message instead of waiting for
    /// ever. A request that is never resumed never ends: call `resume()` first, or use `run()`.
    public func waitForCompletion() -> Response {
        if let response { return response }
        // On the transfer thread nothing else would run the request: stop with a message
        // rather than wait for ever.
        precondition(!session.driver.isCurrentThread, "waitForCompletion() and run() cannot wait on the session's transfer thread, which runs the request; use onCompletion there")
        let latch = Latch()
        let result = Protected<Response?>(nil)
        onCompletion { response in
            result.write { $0 = response }
            latch.open()
        }
        latch.wait()
        guard let response = result.value else { preconditionFailure("a completed request has a response") }
        return response
    }

    // MARK: State transitions

    /// Starts the request, or continues it after `suspend()`.
    @discardableResult
    public func resume() -> Self {
        enum Action { case none, start, add(any AttemptHandle), unpause(any AttemptHandle) }
        if session.isShutDown, mutable.read({ $0.state == .initialized }) {
            endWithoutTransfer(.cancelled(.sessionShutDown))
            return self
        }
        let action = mutable.write { state -> Action in
            guard state.state.canTransition(to: .resumed) else { return .none }
            let from = state.state
            state.state = .resumed
            if from == .initialized { return .start }
            if let transfer = state.transfer {
                guard state.transferHeld else { return .unpause(transfer) }
                state.transferHeld = false
                return .add(transfer)
            }
            if state.startPending {
                state.startPending = false
                return .start
            }
            return .none
        }
        switch action {
        case .none: return self
        case .start:
            emit(.resumed, .resumed)
            session.async { self.startAttempt() }
        case .add(let transfer):
            emit(.resumed, .resumed)
            emit(.attemptStarted, .attemptStarted(attempt: transfer.attempt, hop: transfer.hop, method: transfer.description.method, url: transfer.description.url))
            transfer.start()
        case .unpause(let transfer):
            emit(.resumed, .resumed)
            transfer.unpause()
        }
        return self
    }

    /// Pauses the running transfer, or holds back the next attempt.
    @discardableResult
    public func suspend() -> Self {
        let transfer = mutable.write { state -> (any AttemptHandle)?? in
            guard state.state.canTransition(to: .suspended) else { return .none }
            state.state = .suspended
            return .some(state.transferHeld ? nil : state.transfer)
        }
        guard let transfer else { return self }
        emit(.suspended, .suspended)
        if let transfer { transfer.pause() }
        return self
    }

    /// Cancels the request: a state transition, not a crash. The outcome carries
    /// `AFError.cancelled(reason)` and keeps every attempt made so far.
    @discardableResult
    public func cancel(_ reason: AFError.Cancellation = .explicitly) -> Self {
        let transfer = mutable.write { state -> (any AttemptHandle)?? in
            guard state.state.canTransition(to: .cancelled) else { return .none }
            state.state = .cancelled
            state.cancellation = reason
            state.generation += 1
            if state.transferHeld {
                // Never handed to libcurl: nothing to stop, and no outcome will arrive.
                state.transferHeld = false
                state.transfer = nil
            }
            return .some(state.transfer)
        }
        guard let transfer else { return self }
        emit(.cancelled, .cancelled(reason))
        if let transfer {
            transfer.cancel(reason)
        } else {
            session.async { self.complete(error: .cancelled(reason)) }
        }
        return self
    }

    // MARK: Attempts

    /// Request logic runs on the session's transfer thread only (Alamofire's
    /// `dispatchPrecondition` discipline); debug builds check it.
    private func assertOnTransferThread(_ function: StaticString = #function) {
        assert(session.driver.isCurrentThread, "Request.\(function) must run on the session's transfer thread")
    }

    private func startAttempt() {
        assertOnTransferThread()
        let ready = mutable.write { state -> (RequestDescription, Int, Int)? in
            switch state.state {
            case .resumed:
                return (state.description, state.attempts.count + 1, state.hop)
            case .suspended, .initialized:
                state.startPending = true
                return nil
            case .cancelled, .finished:
                return nil
            }
        }
        guard let (description, number, hop) = ready else { return }
        // Without an interceptor the attempt is launched at once. The queued hop below exists
        // for adapters, which may complete on any thread, to come back to this one.
        guard let interceptor = session.configuration.interceptor else {
            return launch(description, attempt: number, hop: hop)
        }
        interceptor.adapt(description, for: self) { result in
            self.session.async {
                switch result {
                case .success(let adapted): self.launch(adapted, attempt: number, hop: hop)
                case .failure(let error): self.attemptFailedEarly(description, attempt: number, hop: hop, error: error)
                }
            }
        }
    }

    private func launch(_ description: RequestDescription, attempt number: Int, hop: Int) {
        assertOnTransferThread()
        emit(.adapted, .adapted(attempt: number, description))
        let transfer: any AttemptHandle
        do {
            let url = try description.parsedURL()
            let trust = try session.trustEvaluator(for: url)
            transfer = try session.transport.makeAttempt(description, url: url, attempt: number, hop: hop, trust: trust, session: session, delegate: self)
        } catch {
            return attemptFailedEarly(description, attempt: number, hop: hop, error: error)
        }
        enum Next { case drop, hold, add }
        let next = mutable.write { state -> Next in
            switch state.state {
            case .resumed:
                state.transfer = transfer
                return .add
            case .suspended:
                // Suspended while the adapters ran: keep the transfer until resume().
                state.transfer = transfer
                state.transferHeld = true
                return .hold
            case .initialized, .cancelled, .finished:
                return .drop
            }
        }
        guard next == .add else { return }
        emit(.attemptStarted, .attemptStarted(attempt: number, hop: hop, method: description.method, url: description.url))
        transfer.start()
    }

    private func attemptFailedEarly(_ description: RequestDescription, attempt number: Int, hop: Int, error: AFError) {
        let attempt = Attempt(
            number: number, hop: hop, method: description.method, url: description.url, request: description,
            sentHead: nil, response: nil, metrics: nil, error: error, bodyPreview: []
        )
        record(attempt)
        decide(after: error)
    }

    // MARK: TransferDelegate

    var eventInterests: RequestEvent.Interests { session.monitor.interests }

    func transfer(_ transfer: any AttemptHandle, emit event: RequestEvent.Kind) {
        emit(event.interest, event)
    }

    func transfer(_ transfer: any AttemptHandle, routeFor head: ResponseHead) -> BodyRoute {
        session.configuration.redirectPolicy.shouldFollow(head) ? .preview : .sink(sink)
    }

    func transfer(_ transfer: any AttemptHandle, didFinish outcome: TransferOutcome) {
        session.async { self.handle(outcome, of: transfer) }
    }

    private func handle(_ outcome: TransferOutcome, of transfer: any AttemptHandle) {
        assertOnTransferThread()
        var attempt = Attempt(
            number: transfer.attempt, hop: transfer.hop, method: transfer.description.method,
            url: transfer.url.string, request: transfer.description, sentHead: outcome.sentHead,
            response: outcome.head, metrics: outcome.metrics, error: outcome.error, bodyPreview: outcome.preview,
            trailers: outcome.trailers
        )
        let cancellation = mutable.write { state -> AFError.Cancellation? in
            state.transfer = nil
            return state.state == .cancelled ? state.cancellation : nil
        }
        if let cancellation {
            attempt.error = .cancelled(cancellation)
            record(attempt)
            return complete(error: .cancelled(cancellation))
        }
        var error = outcome.error
        if error == nil, let head = outcome.head {
            let policy = session.configuration.redirectPolicy
            if policy.shouldFollow(head) {
                do {
                    let (current, count) = mutable.read { ($0.description, $0.redirects.count) }
                    let (next, redirect) = try policy.nextHop(after: head, from: current, redirectsSoFar: count)
                    record(attempt)
                    mutable.write { state in
                        state.redirects.append(redirect)
                        state.description = next
                        state.hop += 1
                    }
                    emit(.redirected, .redirected(redirect))
                    return startAttempt()
                } catch let failure {
                    error = failure
                }
            } else if let validation, let failure = validation.validate(head) {
                error = failure
            }
            if error == nil { error = sink.bodyDidEnd() }
        }
        attempt.error = error
        record(attempt)
        if let error, resendsOnNewConnection(after: error) {
            // As libcurl does for a stream the server refused, and for a reused HTTP/1.1
            // connection that closed unanswered: at once, outside the retry policy.
            sink.rollback()
            startAttempt()
        } else if let error {
            decide(after: error)
        } else if let head = outcome.head, let interceptor = session.configuration.interceptor {
            // The retrier sees every response, not only failures.
            interceptor.retry(self, after: head) { result in
                self.session.async { self.apply(result, after: head) }
            }
        } else {
            complete(error: nil)
        }
    }

    /// How often a request is sent again because servers closing their connections did not
    /// take it: the next connection it lands on may be closing too (a server that closes
    /// after every N requests), but never without end. Which requests a closing connection
    /// leaves unanswered depends on when each was sent, so with many in flight one request
    /// can lose several times in a row: with three, one GET in about 150 batches of 50 (10
    /// in flight, a server closing after 7 streams, two busy cores beside it) lost four
    /// times and failed.
    static let resendsOnNewConnections = 5

    /// Whether `error` says the request was not taken by a server closing its connection,
    /// and the request may be sent again for that. Only an idempotent one: libcurl does not
    /// say whether the server sent `GOAWAY` or broke the connection some other way, after
    /// which a POST it had processed would be sent twice (the retriers decide that).
    private func resendsOnNewConnection(after error: AFError) -> Bool {
        guard case .transport(let failure) = error, failure.cause == .unansweredOnReusedConnection else { return false }
        return mutable.write { state in
            guard state.description.method.isIdempotent, state.resentOnNewConnection < Self.resendsOnNewConnections,
                  !state.state.isTerminal else { return false }
            state.resentOnNewConnection += 1
            return true
        }
    }

    private func record(_ attempt: Attempt) {
        mutable.write { $0.attempts.append(attempt) }
        emit(.attemptFinished, .attemptFinished(attempt))
    }

    /// The one place where every failure meets the retrier.
    private func decide(after error: AFError) {
        guard let interceptor = session.configuration.interceptor else { return complete(error: error) }
        interceptor.retry(self, dueTo: error) { result in
            self.session.async { self.apply(result, for: error) }
        }
    }

    /// Acts on a retrier's answer about a response that passed validation.
    private func apply(_ result: RetryResult, after head: ResponseHead) {
        switch result {
        case .doNotRetry:
            complete(error: nil)
        case .doNotRetryWithError(let error):
            complete(error: error)
        case .retry, .retryWithDelay, .retryAfterRefresh:
            apply(result, for: .responseValidationFailed(status: head.status, reason: head.displayReason))
        }
    }

    private func apply(_ result: RetryResult, for error: AFError) {
        assertOnTransferThread()
        switch result {
        case .retry, .retryWithDelay, .retryAfterRefresh:
            let delay = result.delay ?? 0
            let refreshed = result == .retryAfterRefresh
            let scheduled = mutable.write { state -> (Int, Int)? in
                guard !state.state.isTerminal else { return nil }
                if refreshed { state.refreshCount += 1 } else { state.retryCount += 1 }
                if !state.attempts.isEmpty {
                    state.attempts[state.attempts.count - 1].retryDelay = delay
                    state.attempts[state.attempts.count - 1].refreshed = refreshed
                }
                return (state.generation, state.attempts.count + 1)
            }
            guard let (generation, next) = scheduled else { return }
            sink.rollback()
            emit(.retryScheduled, .retryScheduled(attempt: next, reason: error.description, delay: delay, refreshed: refreshed))
            // Without a delay, at once: a turn of the loop would let transfers queued since
            // (new requests of a batch) take the next connection's first places before it,
            // and a server that closes connections after a few streams (GOAWAY) could refuse
            // the retry every time.
            guard delay > 0 else { return startAttempt() }
            session.asyncAfter(delay) {
                guard self.mutable.read({ $0.generation == generation }) else { return }
                self.startAttempt()
            }
        case .doNotRetry:
            complete(error: error)
        case .doNotRetryWithError(let replacement):
            complete(error: .requestRetryFailed(retryError: replacement, originalError: error))
        }
    }

    /// Ends the request: the sink learns the outcome, the state becomes final, and every
    /// completion handler runs once.
    private func complete(error: AFError?) {
        assertOnTransferThread()
        guard mutable.read({ $0.response == nil }) else { return }
        let finalError = sink.finish(error: error)
        let (response, handlers) = mutable.write { state -> (Response, [@Sendable (Response) -> Void]) in
            if state.state.canTransition(to: .finished) { state.state = .finished }
            let last = state.attempts.last
            let response = Response(
                head: last?.response,
                attempts: state.attempts,
                redirects: state.redirects,
                error: finalError,
                finalURL: last?.url ?? state.description.url,
                finalRequest: last?.request ?? state.description
            )
            state.response = response
            defer { state.completionHandlers.removeAll() }
            return (response, state.completionHandlers)
        }
        emit(.finished, .finished(response))
        for handler in handlers { handler(response) }
        session.requestEnded(id)
    }

    /// Ends a request that never reached the transfer thread (its session was shut down).
    private func endWithoutTransfer(_ error: AFError) {
        let finalError = sink.finish(error: error)
        let ended = mutable.write { state -> (Response, [@Sendable (Response) -> Void])? in
            guard state.response == nil, state.state.canTransition(to: .cancelled) else { return nil }
            state.state = .cancelled
            let response = Response(
                head: nil, attempts: [], redirects: [], error: finalError,
                finalURL: state.description.url, finalRequest: state.description
            )
            state.response = response
            defer { state.completionHandlers.removeAll() }
            return (response, state.completionHandlers)
        }
        guard let (response, handlers) = ended else { return }
        emit(.finished, .finished(response))
        for handler in handlers { handler(response) }
        session.requestEnded(id)
    }

    // MARK: Events

    /// Tells the monitors that want `interest`; `kind` is built only then.
    func emit(_ interest: RequestEvent.Interests, _ kind: @autoclosure () -> RequestEvent.Kind) {
        guard session.monitor.interests.contains(interest) else { return }
        let kind = kind()
        assert(kind.interest == interest, "\(interest) announced for another kind of event")
        session.monitor.request(self, didEmit: RequestEvent(time: elapsed, kind: kind))
    }
}
