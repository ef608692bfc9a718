internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Runs every transfer of a session — and the request logic around them — on one thread,
/// with libcurl's multi interface.
///
/// Other threads never touch libcurl handles: they queue commands and wake the driver's
/// `curl_multi_poll` with `curl_multi_wakeup`, the one multi call that is thread-safe.
/// The same thread runs queued closures, timers (retry delays) and handlers for watched
/// file descriptors (a signal self-pipe), so a run needs no other thread. Several sessions
/// may use one driver (and so one connection cache); each brings its own share handle
/// (cookies, DNS cache), which only this thread uses while the driver runs.
final class TransferDriver: Sendable {
    enum Command: Sendable {
        /// Adds a transfer to the multi handle, with the share handle of its session.
        case add(Transfer, ShareHandle)
        case cancel(Transfer, AFError.Cancellation)
        case pause(Transfer)
        case unpause(Transfer)
        /// Resumes a transfer whose sending paused for body bytes it no longer waits for (an
        /// early answer ended its body), unless its request paused it.
        case resumeBody(Transfer)
        /// Runs a closure on the driver thread.
        case perform(@Sendable () -> Void)
        /// Runs a closure on the driver thread once `delay` seconds have passed.
        case schedule(delay: Double, @Sendable () -> Void)
        /// Calls `handler` on the driver thread whenever `fd` is readable; with no handler,
        /// stops calling the handlers of `fd` (and lets go of them).
        case watch(fd: Int32, handler: (@Sendable () -> Void)?)
    }

    private struct Handles: @unchecked Sendable {
        let multi: UnsafeMutableRawPointer
    }

    private struct State: Sendable {
        var commands: [Command] = []
        /// An empty queue with room, swapped in when the loop takes the commands so that the
        /// next ones are queued without growing a new array.
        var spare: [Command] = []
        var threadStarted = false
        var thread: pthread_t?
        /// Sessions using the driver; when the last one lets go the driver stops.
        var users = 0
        /// The loop exits at its next turn, and the thread with it.
        var stopped = false
        /// Opened when the thread last started has ended, having let go of the driver.
        var threadEnded: Latch?
    }

    /// What only the driving thread touches.
    private final class Loop: @unchecked Sendable {
        var active: [UnsafeMutableRawPointer: Transfer] = [:]
        /// The most transfers that have run at once, which sizes the connection cache.
        var peakActive = 0
        var timers: [(deadline: Double, work: @Sendable () -> Void)] = []
        var watched: [(fd: Int32, handler: @Sendable () -> Void)] = []
        /// Transfers that gathered small pieces of a body in this turn (`noteGathering`).
        var gathering: [Transfer] = []
        /// Transfers whose request body had nothing to give (`awaitBody`): their sending is
        /// paused until the descriptor has bytes, its end or an error.
        var bodyWaits: [(fd: Int32, transfer: Transfer)] = []
    }

    private let handles: Handles
    /// Idle easy handles (with their TLS session caches) for the transfers of this driver.
    let easyHandles = EasyHandlePool()
    private let state = Protected(State())
    /// Touched only by the thread driving the loop (the driver thread, or a caller of
    /// `drive(start:until:)`), one at a time.
    private let loop = Loop()

    init() {
        CurlRuntime.ensureInitialized()
        guard let multi = curl_multi_init() else {
            fatalError("libcurl could not allocate a multi handle")
        }
        handles = Handles(multi: multi)
    }

    deinit {
        curl_multi_cleanup(handles.multi)
    }

    /// A session starts using the driver.
    func retain() {
        state.write { $0.users += 1 }
    }

    /// A session stops using the driver; after the last one the loop ends, the thread exits
    /// and (once nothing references the driver) the multi handle is freed.
    func release() {
        let wake = state.write { state -> Bool in
            state.users -= 1
            guard state.users <= 0, !state.stopped else { return false }
            state.stopped = true
            return state.threadStarted
        }
        if wake { curl_multi_wakeup(handles.multi) }
    }

    /// Queues a command for the driver thread, starting the thread on first use. The driving
    /// thread itself needs no wakeup: it looks at the queue before it waits.
    func submit(_ command: Command) {
        let self_ = pthread_self()
        let (start, onLoop) = state.write { state -> (Bool, Bool) in
            state.commands.append(command)
            if state.threadStarted || state.stopped { return (false, state.thread.map { pthread_equal($0, self_) != 0 } ?? false) }
            state.threadStarted = true
            return (true, false)
        }
        if start { startThread() }
        if !onLoop { curl_multi_wakeup(handles.multi) }
    }

    /// Calls `handler` whenever `fd` is readable, or stops calling the handlers of `fd` when
    /// `handler` is nil. On the thread driving the loop this takes effect at once: it is the
    /// loop's own bookkeeping, and left queued it would count as work still to do when a
    /// caller stops driving (whose loop would then go on in a thread of its own).
    ///
    /// From another thread, watching is queued and a running loop is woken to take it up
    /// (no thread is started for it; a loop that runs later takes it up before it waits).
    /// Stopping waits until a running loop has applied it, so once it returns the handler is
    /// never called again and the caller may close the descriptor; with no loop running it
    /// is queued, behind any watching queued before it, and applied before the loop waits.
    func watch(_ fd: Int32, handler: (@Sendable () -> Void)?) {
        if isCurrentThread {
            setWatch(fd, handler: handler, loop)
            return
        }
        enum Next { case nothing, wake, stopOnLoop }
        // Queued under the same lock that says whether a loop runs, so that a loop starting
        // meanwhile finds the command before its first wait.
        let next = state.write { state -> Next in
            if state.stopped { return .nothing }
            if handler == nil, state.threadStarted { return .stopOnLoop }
            state.commands.append(.watch(fd: fd, handler: handler))
            return state.thread == nil ? .nothing : .wake
        }
        switch next {
        case .nothing: return
        case .wake: curl_multi_wakeup(handles.multi)
        case .stopOnLoop: runOnLoop { [loop] in self.setWatch(fd, handler: nil, loop) }
        }
    }

    private func setWatch(_ fd: Int32, handler: (@Sendable () -> Void)?, _ loop: Loop) {
        if let handler {
            loop.watched.append((fd, handler))
        } else {
            loop.watched.removeAll { $0.fd == fd }
        }
    }

    /// Runs `body` on the driver thread when it runs (waiting for it), or right here when
    /// nothing drives the loop (also when the loop ends before taking it), so share handles
    /// are never used by two threads at once.
    func runExclusively(_ body: @escaping @Sendable () -> Void) {
        if !state.read({ $0.threadStarted }) || isCurrentThread {
            body()
            return
        }
        runOnLoop(body)
    }

    /// Runs `body` on the loop's thread and waits for it. A loop that ends first (its last
    /// session let go) drops queued commands unrun: once no thread drives it any more,
    /// `body` runs here instead (exactly once, whichever side takes it first).
    private func runOnLoop(_ body: @escaping @Sendable () -> Void) {
        let ran = Latch()
        let taken = Protected(false)
        let take: @Sendable () -> Bool = {
            taken.write { wasTaken in
                defer { wasTaken = true }
                return !wasTaken
            }
        }
        submit(.perform {
            guard take() else { return }
            body()
            ran.open()
        })
        while !ran.wait(seconds: 0.1) {
            guard state.read({ $0.stopped && $0.thread == nil }) else { continue }
            if take() {
                body()
            } else {
                ran.wait()
            }
            return
        }
    }

    /// Whether a thread runs the loop now (the driver thread, or a caller of `drive`).
    var loopIsRunning: Bool {
        state.read { $0.thread != nil }
    }

    /// Whether the caller is the driver thread.
    var isCurrentThread: Bool {
        guard let thread = state.read({ $0.thread }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Starts the driver thread now rather than on first use, unless a thread already
    /// drives the loop; false when the system refuses another thread (`RLIMIT_NPROC`, a
    /// container's limit on tasks), and then the loop waits for a caller to drive it.
    func startThreadNow() -> Bool {
        let start = state.write { state -> Bool in
            if state.threadStarted || state.stopped { return false }
            state.threadStarted = true
            return true
        }
        guard start else { return true }
        guard launchThread() == 0 else {
            state.write { $0.threadStarted = false }
            return false
        }
        return true
    }

    /// Starts the driver thread for work given to it (`submit`), or left behind by a caller
    /// that drove the loop. The work has no other thread to run on, so a refusal ends the
    /// process, after a few tries: the limits that refuse one are shared with other
    /// programs, whose threads come and go.
    private func startThread() {
        var created = launchThread()
        var tries = 1
        while created == EAGAIN, tries < Self.threadStartTries {
            usleep(20_000 << UInt32(tries))
            created = launchThread()
            tries += 1
        }
        if created != 0 {
            fatalError("cannot start a thread for the transfers: \(POSIXFailure(code: created).description) (the limit on processes and threads, ulimit -u, or a container's)")
        }
    }

    /// How often `startThread` tries to start the thread (about 0.6 s in all).
    private static let threadStartTries = 5

    /// Starts the thread that runs the loop; pthread_create's result.
    private func launchThread() -> Int32 {
        let ended = Latch()
        state.write { $0.threadEnded = ended }
        let start = Unmanaged.passRetained(ThreadStart(driver: self, ended: ended))
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            TransferDriver.runThread(argument).open()
            return nil
        }, start.toOpaque())
        guard created == 0 else {
            start.release()
            state.write { $0.threadEnded = nil }
            return created
        }
        pthread_detach(thread)
        return 0
    }

    /// What a new driver thread is handed.
    private final class ThreadStart: Sendable {
        let driver: TransferDriver
        let ended: Latch

        init(driver: TransferDriver, ended: Latch) {
            self.driver = driver
            self.ended = ended
        }
    }

    /// The driver thread's body; returns its latch once nothing of the thread holds the
    /// driver any more.
    private static func runThread(_ argument: UnsafeMutableRawPointer) -> Latch {
        let start = Unmanaged<ThreadStart>.fromOpaque(argument).takeRetainedValue()
        start.driver.state.write { $0.thread = pthread_self() }
        start.driver.run()
        return start.ended
    }

    /// Waits until the driver thread has ended, which it does once its last session lets go
    /// (`release()`), or for at most `timeout` seconds; returns whether it has ended (true at
    /// once when no thread was started, false when called on it).
    func waitForThread(timeout: Double?) -> Bool {
        guard !isCurrentThread else { return false }
        guard let ended = state.read({ $0.threadEnded }) else { return true }
        guard let timeout else {
            ended.wait()
            return true
        }
        return ended.wait(seconds: timeout)
    }

    private func run() {
        let stopped = { self.state.read { $0.stopped } }
        while !stopped() { iterate(until: stopped) }
        // Every session let go: whatever is still attached (a request abandoned mid-flight)
        // is detached so that the multi handle can be freed.
        for transfer in loop.active.values { detach(transfer) }
        loop.active.removeAll()
        loop.timers.removeAll()
        loop.watched.removeAll()
        loop.bodyWaits.removeAll()
        state.write { state in
            state.commands.removeAll()
            state.thread = nil
        }
    }

    /// Drives the loop on the calling thread until `done()` — no thread of its own, for a
    /// caller that would only block waiting anyway (the command line). Falls back to
    /// `false` when the driver thread is already running; the caller must then wait.
    func drive(start: () -> Void, until done: () -> Bool) -> Bool {
        let pumping = state.write { state -> Bool in
            guard !state.threadStarted else { return false }
            state.threadStarted = true
            state.thread = pthread_self()
            return true
        }
        start()
        guard pumping else { return false }
        while !done() { iterate(until: done) }
        let leftover = state.write { state -> Bool in
            state.threadStarted = false
            state.thread = nil
            return !state.commands.isEmpty
        }
        if leftover || !loop.active.isEmpty || !loop.timers.isEmpty {
            let start = state.write { state -> Bool in
                if state.threadStarted || state.stopped { return false }
                state.threadStarted = true
                return true
            }
            if start { startThread() }
        }
        return true
    }

    /// One turn: queued commands, due timers, socket work, finished transfers, then a wait
    /// unless `done()` already holds.
    private func iterate(until done: () -> Bool) {
        let multi = handles.multi
        var running: Int32 = 0
        runQueuedCommands()
        runDueTimers(loop)
        curl_multi_perform(multi, &running)
        // Small pieces of bodies gathered in this turn go to their sinks before anything
        // waits (and before a finished transfer concludes).
        if !loop.gathering.isEmpty {
            for transfer in loop.gathering { transfer.flushGatheredBody() }
            loop.gathering.removeAll(keepingCapacity: true)
        }
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            if let transfer = loop.active.removeValue(forKey: easy) {
                detach(transfer)
                transfer.finish(code: code)
            }
        }
        if state.read({ !$0.commands.isEmpty }) || done() { return }
        wait(loop)
    }

    /// Runs the commands queued so far. The batch is released before the loop waits, so
    /// that closures in it (and the requests they hold) do not outlive their turn.
    private func runQueuedCommands() {
        var commands = state.write { state -> [Command] in
            var taken: [Command] = []
            swap(&taken, &state.spare)
            swap(&taken, &state.commands)
            return taken
        }
        for command in commands { execute(command, loop) }
        commands.removeAll(keepingCapacity: true)
        state.write { $0.spare = commands }
    }

    /// Called from a transfer's write callback (on the driving thread, inside libcurl's
    /// work): `transfer` began to gather small pieces of its body, which the turn hands on.
    func noteGathering(_ transfer: Transfer) {
        loop.gathering.append(transfer)
    }

    /// Called from a transfer's read callback (on the driving thread), which then pauses its
    /// sending: the body's next bytes come when `fd` is readable.
    func awaitBody(on fd: Int32, for transfer: Transfer) {
        guard !loop.bodyWaits.contains(where: { $0.transfer === transfer }) else { return }
        loop.bodyWaits.append((fd, transfer))
    }

    /// Sleeps in `curl_multi_poll` until a socket, a watched descriptor, a wakeup or the next
    /// timer needs attention.
    private func wait(_ loop: Loop) {
        var timeout: Int32 = loop.active.isEmpty ? 60_000 : 1000
        if let next = loop.timers.map(\.deadline).min() {
            timeout = Int32(min(Int(timeout), Saturating.milliseconds((next - Monotonic.now()) + 0.0005)))
        }
        var descriptors = loop.watched.map { curl_waitfd(fd: $0.fd, events: Int16(CURL_WAIT_POLLIN), revents: 0) }
        if !loop.bodyWaits.isEmpty {
            descriptors += loop.bodyWaits.map { curl_waitfd(fd: $0.fd, events: Int16(CURL_WAIT_POLLIN), revents: 0) }
        }
        descriptors.withUnsafeMutableBufferPointer { buffer in
            _ = curl_multi_poll(handles.multi, buffer.baseAddress, UInt32(buffer.count), Int32(timeout), nil)
        }
        if !loop.bodyWaits.isEmpty { resumeReadyBodies(loop) }
        // The handlers are taken first: one may start or stop watching, which changes the
        // list; a descriptor one of them stopped watching is not handled after that.
        let ready = zip(descriptors, loop.watched).filter { $0.0.revents != 0 }.map(\.1)
        for (fd, handler) in ready where loop.watched.contains(where: { $0.fd == fd }) { handler() }
    }

    /// Resumes sending for the transfers whose body descriptor has bytes, its end or an
    /// error. Asked with `poll` itself: `curl_multi_poll` reports only `POLLIN` of the
    /// descriptors it is given, and a pipe whose writer has gone is only `POLLHUP`.
    private func resumeReadyBodies(_ loop: Loop) {
        var descriptors = loop.bodyWaits.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        guard poll(&descriptors, nfds_t(descriptors.count), 0) > 0 else { return }
        let ready = zip(descriptors, loop.bodyWaits).filter { $0.0.revents != 0 }.map(\.1.transfer)
        loop.bodyWaits.removeAll { waiting in ready.contains { $0 === waiting.transfer } }
        for transfer in ready { resumeSending(transfer, loop) }
    }

    /// Lets libcurl ask `transfer` for its body again, unless its request suspended it (the
    /// request resumes it then).
    private func resumeSending(_ transfer: Transfer, _ loop: Loop) {
        if loop.active[transfer.easy.raw] != nil, !transfer.isSuspended { curl_easy_pause(transfer.easy.raw, afcurl_pause_cont()) }
    }

    /// Stops waiting on `transfer`'s body descriptor.
    private func forgetBodyWait(of transfer: Transfer, _ loop: Loop) {
        if !loop.bodyWaits.isEmpty { loop.bodyWaits.removeAll { $0.transfer === transfer } }
    }

    /// Sizes libcurl's connection cache for the most transfers that have run at once (four
    /// connections each, libcurl's own rule). Left to itself, libcurl sizes it by the
    /// transfers added at the moment a connection is returned: when several finish in one
    /// turn and are taken out before the next start, the last to finish finds the cache
    /// "full" and closes idle connections the next requests would have reused.
    private func keepConnections(for loop: Loop) {
        guard loop.active.count > loop.peakActive else { return }
        loop.peakActive = loop.active.count
        _ = afcurl_multi_setopt_long(handles.multi, CURLMOPT_MAXCONNECTS, loop.peakActive * 4)
    }

    private func runDueTimers(_ loop: Loop) {
        let now = Monotonic.now()
        let due = loop.timers.filter { $0.deadline <= now }
        guard !due.isEmpty else { return }
        loop.timers.removeAll { $0.deadline <= now }
        for timer in due { timer.work() }
    }

    private func execute(_ command: Command, _ loop: Loop) {
        switch command {
        case .add(let transfer, let share):
            let easy = transfer.easy.raw
            _ = afcurl_easy_setopt_ptr(easy, CURLOPT_SHARE, share.raw)
            let code = curl_multi_add_handle(handles.multi, easy)
            if code == CURLM_OK {
                loop.active[easy] = transfer
                keepConnections(for: loop)
            } else {
                _ = afcurl_easy_setopt_ptr(easy, CURLOPT_SHARE, nil)
                transfer.fail(.transport(TransportFailure(kind: .other, message: "libcurl refused the transfer: \(String(cString: curl_multi_strerror(code)))")))
                transfer.finish(code: CURLE_FAILED_INIT)
            }
        case .cancel(let transfer, let reason):
            guard loop.active.removeValue(forKey: transfer.easy.raw) != nil else { return }
            transfer.cancellation = reason
            detach(transfer)
            transfer.finish(code: CURLE_ABORTED_BY_CALLBACK)
        case .pause(let transfer):
            transfer.isSuspended = true
            if loop.active[transfer.easy.raw] != nil { curl_easy_pause(transfer.easy.raw, afcurl_pause_all()) }
        case .unpause(let transfer):
            transfer.isSuspended = false
            if loop.active[transfer.easy.raw] != nil { curl_easy_pause(transfer.easy.raw, afcurl_pause_cont()) }
        case .resumeBody(let transfer):
            forgetBodyWait(of: transfer, loop)
            resumeSending(transfer, loop)
        case .perform(let work):
            work()
        case .schedule(let delay, let work):
            loop.timers.append((Monotonic.now() + max(0, delay), work))
        case .watch(let fd, let handler):
            setWatch(fd, handler: handler, loop)
        }
    }

    /// Takes a finished handle out of the multi and the share, on this thread, so that its
    /// later cleanup (wherever the last reference drops) touches neither.
    private func detach(_ transfer: Transfer) {
        forgetBodyWait(of: transfer, loop)
        curl_multi_remove_handle(handles.multi, transfer.easy.raw)
        _ = afcurl_easy_setopt_ptr(transfer.easy.raw, CURLOPT_SHARE, nil)
    }
}
