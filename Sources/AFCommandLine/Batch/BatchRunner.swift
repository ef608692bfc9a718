@_spi(Locking) import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// One line's request while it is in flight. Created and finished only on the thread of the
/// lane that started it; cancelled from any.
final class LineRun: @unchecked Sendable {
    let line: Int
    let sequence: Int
    /// The lane (`BatchRunner.lanes`) whose thread runs it.
    let lane: Int
    let execution: Execution
    let planned: PlannedLine
    let flight: Execution.InFlight
    /// The connection settings of a line that runs apart from the batch's own connections.
    let apart: LinePlanner.ConnectionKey?

    init(line: Int, sequence: Int, lane: Int, execution: Execution, planned: PlannedLine, flight: Execution.InFlight, apart: LinePlanner.ConnectionKey?) {
        self.line = line
        self.sequence = sequence
        self.lane = lane
        self.execution = execution
        self.planned = planned
        self.flight = flight
        self.apart = apart
    }
}

/// A line of a batch, with its number in the input.
struct BatchLine: Sendable {
    /// What a line holds for the run.
    enum Content: Sendable {
        /// Its words, to be planned when it starts.
        case words([String])
        /// The request the check before the run planned and built, sent as it is.
        case planned(PlannedLine)
        /// Why it could not be read or split.
        case failure(CommandFailure)
    }

    let number: Int
    let content: Content
    /// The first text of the line a shell would have expanded (`$TOKEN`), sent as written.
    var expansion: String? = nil
}

/// Where the runner takes its lines from: called by one lane's thread at a time, under the
/// runner's lock.
protocol BatchLineSource: Sendable {
    /// The next request line, for `lane` to start; nil when none is ready now. `ended` says
    /// whether more can come.
    func next(lane: Int) -> (line: BatchLine?, ended: Bool)
    /// How many request lines there are, when known before the run.
    var total: Int? { get }
    /// Lanes may share the lines: some line fits any lane (`PlannedLine.fitsAnyLane`), or may.
    /// Each line is checked as it starts, and one that does not fit is handed to the first lane.
    var fitsLanes: Bool { get }
}

/// Runs the requests of `af batch`: up to `parallel` in flight on sessions that share
/// connections, started no faster than `rate`, with one retry budget, output in line order,
/// and one summary at the end.
///
/// Lines run on lanes: a lane is a session with its own thread and connections, which starts
/// its share of the lines, drives their transfers and finishes them, taking the next line
/// in order when one of its own ends. The first lane runs on the calling thread. Lines over
/// HTTP/1 run on as many lanes as af has processors for (up to four), so that a batch of
/// small requests is not held to what one processor can do; lines that could share
/// connections as HTTP/2 streams (or use connections of their own) run on the first lane,
/// which the lane that took one hands it to.
final class BatchRunner: Sendable {
    struct Options: Sendable {
        var parallel = 1
        /// How many lanes share the requests in flight (`BatchCommand.lanes`).
        var lanes = 1
        /// Seconds between two starts (`--rate`), 0 for no limit.
        var interval = 0.0
        var failFast = false
        var quiet = false
        /// How many finished outputs may wait for an earlier line in files of their own beyond
        /// the lines in flight (`BatchCommand.waitingRoom`); nil when descriptors set no bound.
        var waitingRoom: Int?
    }

    private enum LaneEnd: Sendable, Equatable {
        case working
        /// Nothing more starts and its lines have ended; the first lane has yet to learn it.
        case leaving
        case left
    }

    private enum Stop: Sendable, Equatable {
        case failure
        /// SIGINT or SIGTERM, as the cancellation it makes of what is in flight.
        case signal(AFError.Cancellation)
        case outputClosed
        /// Standard output failed (a full disk): what would be printed next is lost too.
        case outputFailed
    }

    private struct State: Sendable {
        var nextSequence = 0
        var inFlight: [Int: LineRun] = [:]
        /// Lines each lane has taken and not yet recorded (in flight, or being started).
        var running: [Int]
        /// Where each lane is in leaving the batch (the first lane's entry unused).
        var laneEnds: [LaneEnd]
        /// Lanes with nothing running that wait for an earlier line to print (the window), or
        /// for room under --parallel that lines handed to the first lane hold: told when a
        /// line ends on any lane.
        var stalled: Set<Int> = []
        /// Lanes but the first that found no line ready in streamed input that goes on: they
        /// go on when lines arrive (`linesArrived`).
        var awaitingLines: Set<Int> = []
        var ended = false
        var stop: Stop?
        var started = 0
        var finished = 0
        var failed = 0
        var cancelled = 0
        /// The first failed lines, for the summary.
        var failedLines: [Int] = []
        /// The failure earliest in line order: its sequence number and exit status.
        var firstFailure: (sequence: Int, status: Int32)?
        var nextStart = 0.0
        var timerArmed = false
        /// Sessions owning the connections of lines whose connection settings differ from the
        /// batch's.
        var connectionOwners: [LinePlanner.ConnectionKey: Owner] = [:]
        /// Counts line starts, to tell which owner was used least recently.
        var ownerClock = 0
        /// `--auth-cmd` tokens by command, shared by the lines that run it.
        var tokens: [AuthCommand: SharedCommandToken] = [:]
        /// A line's unexpanded `$NAME` was warned of: the first line only, not every one of
        /// a file written that way.
        var warnedOfExpansion = false
    }

    /// A session that owns the connections (and thread) of one set of connection settings.
    private struct Owner: Sendable {
        let session: Session
        /// Lines using it now.
        var running = 0
        var lastUsed = 0
    }

    /// How many owners with no line running are kept for later lines with the same settings;
    /// older ones go, with their thread and connections, so that a file whose every line
    /// resolves its host differently does not hold a thread per line.
    var idleOwnerLimit: Int { max(8, options.parallel) }

    /// How many lines past the earliest unprinted one may start: bounds waiting outputs, each
    /// of which may hold a file, so also by the descriptors left for them.
    var window: Int {
        let window = options.parallel * 2 + 16
        return options.waitingRoom.map { min(window, options.parallel + $0) } ?? window
    }

    let options: Options
    let planner: LinePlanner
    let source: any BatchLineSource
    let output: OrderedOutput
    let stderr: OutputChannel
    let budget: RetryBudget
    let progress: BatchProgress
    /// `~/.netrc`, read once.
    let netrc: Netrc?
    /// The first lane's session: drives its transfers on the calling thread, and with them
    /// the batch's timers, signals and streamed lines.
    let primary = Session()
    /// Every lane's session, `primary` first.
    let lanes: [Session]
    /// How many lines each lane may have in flight: `parallel` shared out.
    let laneLimits: [Int]
    private let state: Protected<State>
    /// The trust configuration of the batch's own settings, for `http` and `https` URLs, made
    /// by the first line that needs it; a lock of its own, since every line asks.
    private let baseTrusts = Protected<BaseTrusts>(BaseTrusts())

    private struct BaseTrusts: Sendable {
        var plain: TrustConfiguration?
        var tls: TrustConfiguration?
    }

    init(options: Options, planner: LinePlanner, source: any BatchLineSource, output: OrderedOutput, stderr: OutputChannel, budget: RetryBudget, progress: BatchProgress, netrc: Netrc?) {
        self.netrc = netrc
        self.planner = planner
        self.source = source
        self.output = output
        self.stderr = stderr
        self.budget = budget
        self.progress = progress
        // A lane past the first is a thread: where the system refuses one (`ulimit -u`, a
        // container's limit on tasks), the lines share the lanes that started.
        var lanes = [primary]
        for _ in 1..<Self.laneLimits(options).count {
            let lane = Session()
            guard lane.startTransferThread() else { break }
            lanes.append(lane)
        }
        var options = options
        options.lanes = lanes.count
        self.options = options
        self.lanes = lanes
        laneLimits = Self.laneLimits(options)
        let count = laneLimits.count
        state = Protected(State(running: Array(repeating: 0, count: count), laneEnds: Array(repeating: .working, count: count)))
    }

    /// How many lines each lane may have in flight: `parallel` shared out among the lanes
    /// (one at least each).
    static func laneLimits(_ options: Options) -> [Int] {
        let count = max(1, min(options.lanes, options.parallel))
        return (0..<count).map { options.parallel / count + ($0 < options.parallel % count ? 1 : 0) }
    }

    /// Runs every line and returns the exit status. `starting` runs once this thread drives
    /// the session and before the first line starts: where `af batch -` starts watching
    /// standard input on the session's loop.
    func run(starting: () -> Void = {}) -> Int32 {
        let driven = primary.drive(start: {
            SignalWatcher.install(on: primary) { [weak self] reason in self?.interrupt(reason) }
            starting()
            for lane in lanes.indices.dropFirst() { lanes[lane].async { self.pump(lane) } }
            pump(0)
        }, until: { isDone })
        precondition(driven, "a batch drives its own session")
        // Every line is recorded; the other lanes' threads end before anything is concluded.
        for session in lanes.dropFirst() { session.shutdownAndWait(timeout: Self.ownerEndTimeout) }
        output.printFinished()
        let status = conclude()
        endOwners()
        return status
    }

    /// Shuts down the sessions of lines with connection settings of their own and waits for
    /// their threads, so that af exits with nothing of theirs still running (or still holding
    /// a finished request: its completion reaches this thread before the owner's thread has
    /// let go of it).
    private func endOwners() {
        let sessions = state.write { state -> [Session] in
            defer { state.connectionOwners = [:] }
            return state.connectionOwners.values.map(\.session)
        }
        for session in sessions { session.shutdownAndWait(timeout: Self.ownerEndTimeout) }
    }

    /// How long af waits for an owner's (or a lane's) thread to end: it has nothing left to
    /// do and ends within milliseconds; the bound only keeps a mistake from hanging af at exit.
    static let ownerEndTimeout = 5.0

    /// Called on the first lane's thread whenever lines may be waiting (a streamed line arrived,
    /// or the input ended): every lane that found none goes on.
    func linesArrived() {
        let awaiting = state.write { state -> Set<Int> in
            defer { state.awaitingLines = [] }
            return state.awaitingLines
        }
        for lane in awaiting { lanes[lane].async { self.pump(lane) } }
        pump(0)
    }

    private var isDone: Bool {
        state.read { state in
            state.running.allSatisfy { $0 == 0 } && (state.stop != nil || state.ended) && state.laneEnds.dropFirst().allSatisfy { $0 == .left }
        }
    }

    // MARK: Starting

    /// Starts lines on `lane` while the limits allow; called on its thread.
    private func pump(_ lane: Int) {
        while true {
            enum Next { case wait, leave, timer(Double), take(BatchLine, Int) }
            let now = Monotonic.now()
            let nextToPrint = output.nextToPrint
            // A line is taken and numbered under the lock, so that lanes take them in order.
            let next = state.write { state -> Next in
                // Lines handed to the first lane (`start`) count there, past its share: the
                // batch as a whole stays within --parallel.
                if state.stop == nil, !state.ended, state.running[lane] < laneLimits[lane] {
                    guard state.running.reduce(0, +) < options.parallel else {
                        // The lines handed to the first lane fill --parallel: with none of its
                        // own running, this lane starts again when a line ends on another
                        // (it would otherwise never be told, nor leave, and the batch not end).
                        if state.running[lane] == 0 { state.stalled.insert(lane) }
                        return .wait
                    }
                    if !output.inCompletionOrder, state.nextSequence >= nextToPrint + window {
                        // Held back by an earlier line running on another lane: with none of
                        // its own running, this lane starts again when a line ends there.
                        if state.running[lane] == 0 { state.stalled.insert(lane) }
                        return .wait
                    }
                    if options.interval > 0, now < state.nextStart {
                        if state.timerArmed { return .wait }
                        state.timerArmed = true
                        return .timer(state.nextStart - now)
                    }
                    let (line, ended) = source.next(lane: lane)
                    if let line {
                        let sequence = state.nextSequence
                        state.nextSequence = sequence + 1
                        state.started += 1
                        state.running[lane] += 1
                        state.nextStart = max(now, state.nextStart) + options.interval
                        return .take(line, sequence)
                    }
                    guard ended else {
                        if lane != 0 { state.awaitingLines.insert(lane) }
                        return .wait
                    }
                    state.ended = true
                }
                // A lane but the first leaves once nothing more starts and its own lines have
                // ended; the first lane's thread learns it, and may then end the batch.
                guard lane != 0, state.stop != nil || state.ended, state.running[lane] == 0, state.laneEnds[lane] == .working else { return .wait }
                state.laneEnds[lane] = .leaving
                return .leave
            }
            switch next {
            case .wait:
                return
            case .leave:
                // Learnt on the first lane's thread, whose loop then sees the batch done with
                // nothing left in its queue.
                primary.async { [self] in state.write { $0.laneEnds[lane] = .left } }
                return
            case .timer(let delay):
                lanes[lane].asyncAfter(delay) { [self] in
                    state.write { $0.timerArmed = false }
                    pump(lane)
                }
                return
            case .take(let line, let sequence):
                budget.noteStarted()
                start(line, sequence: sequence, lane: lane)
            }
        }
    }

    private func start(_ line: BatchLine, sequence: Int, lane: Int) {
        let messages = lineErrors(line.number)
        // Warned of once: the first line to ask sets the mark, under one lock.
        if let expansion = line.expansion, state.write({ state in defer { state.warnedOfExpansion = true }; return !state.warnedOfExpansion }) {
            messages.writeNotice("warning: '\(expansion)' is sent as written: af batch runs each line without a shell, which would have expanded it; "
                + "write the value into the file (envsubst makes such a file from a template), or put it in single quotes to mean it as written")
        }
        let planned: PlannedLine
        do throws(CommandFailure) {
            switch line.content {
            case .planned(let kept): planned = kept
            case .words(let words): planned = try planner.prepare(words)
            case .failure(let failure): throw failure
            }
        } catch {
            fail(line, sequence: sequence, lane: lane, messages: messages, error: error)
            return
        }
        guard lane == 0 || planned.fitsAnyLane else {
            // A line that may share an HTTP/2 connection with others, or uses connections of
            // its own, runs on the first lane with every such line.
            state.write { state in
                state.running[lane] -= 1
                state.running[0] += 1
            }
            primary.async {
                self.launch(line, planned: planned, sequence: sequence, lane: 0, messages: messages)
                self.pump(0)
            }
            return
        }
        launch(line, planned: planned, sequence: sequence, lane: lane, messages: messages)
    }

    /// Starts a planned line on `lane`'s thread.
    private func launch(_ line: BatchLine, planned: PlannedLine, sequence: Int, lane: Int, messages: OutputChannel) {
        do throws(CommandFailure) {
            let channel = output.channel(for: sequence)
            let execution: Execution
            do {
                let trust = try baseTrust(for: planned)
                execution = try Execution(settings: planned.settings, built: planned.built, environment: planner.environment, stdout: channel, stderr: messages, batchLine: line.number, loadedNetrc: .some(netrc),
                                          trust: trust, plan: planner.outputPlan(for: planned.settings),
                                          tokens: { command in self.sharedToken(for: command).provider() })
            } catch {
                planned.built.body.removeTemporaryFiles()
                throw error
            }
            let connections: Session, apart: LinePlanner.ConnectionKey?
            do {
                (connections, apart) = try connectionOwner(for: planned.connections, lane: lane)
            } catch {
                planned.built.body.removeTemporaryFiles()
                throw error
            }
            let context = Execution.BatchContext(connections: connections, budget: budget)
            switch execution.start(batch: context) {
            case .finished(let status):
                releaseOwner(apart)
                planned.built.body.removeTemporaryFiles()
                output.finish(sequence)
                record(line: line.number, sequence: sequence, status: status)
                checkOutput()
                lineEnded(on: lane)
            case .inFlight(let flight):
                let run = LineRun(line: line.number, sequence: sequence, lane: lane, execution: execution, planned: planned, flight: flight, apart: apart)
                // A stop another lane made since this line was taken found it not yet in
                // flight: it is cancelled here instead.
                let stopped = state.write { state -> Stop? in
                    state.inFlight[sequence] = run
                    return state.stop
                }
                flight.request.onCompletion { [self] response in
                    lanes[lane].async { self.completed(sequence, response: response) }
                }
                if let stopped { flight.request.cancel(Self.cancellation(for: stopped)) }
            }
        } catch {
            fail(line, sequence: sequence, lane: lane, messages: messages, error: error)
        }
    }

    /// A line that could not start: its error, and nothing printed in its place.
    private func fail(_ line: BatchLine, sequence: Int, lane: Int, messages: OutputChannel, error: CommandFailure) {
        messages.writeError(error.message)
        output.skip(sequence)
        record(line: line.number, sequence: sequence, status: error.exitCode)
        lineEnded(on: lane)
    }

    /// For a line without options of its own, the trust configuration of the batch's settings,
    /// made once (with its checks and reads of `--verify`, `--pin-cert`, `--trust-policy` and
    /// the other files) instead of for every line; nil for other lines, which make their own.
    /// A configuration that fails to be made is not kept: each line reports the failure.
    private func baseTrust(for planned: PlannedLine) throws(CommandFailure) -> TrustConfiguration? {
        guard planned.settings.isUnchangedCopy(of: planner.base) else { return nil }
        let usesTLS = planned.built.url.scheme == "https"
        if let known = baseTrusts.read({ usesTLS ? $0.tls : $0.plain }) { return known }
        let made = try TrustConfiguration.make(settings: planned.settings, environment: planner.environment, usesTLS: usesTLS)
        baseTrusts.write { trusts in
            if usesTLS { trusts.tls = made } else { trusts.plain = made }
        }
        return made
    }

    /// The `--auth-cmd` token the lines running `command` (with the same time limit) share.
    private func sharedToken(for command: AuthCommand) -> SharedCommandToken {
        state.write { state in
            if let shared = state.tokens[command] { return shared }
            let notice = StandardInput.waitNotice(on: stderr, quiet: options.quiet, delays: planner.environment.noticeDelays)
            let shared = SharedCommandToken(command: command, environment: planner.environment.variables, notice: notice)
            state.tokens[command] = shared
            return shared
        }
    }

    /// The session whose connections a line may use: its lane's, or one per other set of
    /// connection settings, so that no connection verified one way, or made to an address
    /// another line chose, serves a line that asks otherwise.
    /// Returns the session and, for one apart from the lane's, its key (give it back with
    /// `releaseOwner` when the line ends).
    /// Such a session is a thread: where the system refuses one, the line fails.
    private func connectionOwner(for key: LinePlanner.ConnectionKey?, lane: Int) throws(CommandFailure) -> (Session, LinePlanner.ConnectionKey?) {
        guard let key else { return (lanes[lane], nil) }
        let session = state.write { state -> Session? in
            state.ownerClock += 1
            var owner: Owner
            if let known = state.connectionOwners[key] {
                owner = known
            } else {
                let session = Session()
                guard session.startTransferThread() else { return nil }
                owner = Owner(session: session)
            }
            owner.running += 1
            owner.lastUsed = state.ownerClock
            state.connectionOwners[key] = owner
            return owner.session
        }
        guard let session else {
            throw CommandFailure("cannot start a thread for this line's own connections (its --verify, --pin, --proxy, --resolve or the like keep them apart from other lines'): the system refuses more threads (ulimit -u, or a container's limit on tasks); give such options to the whole batch, or run the line on its own", exitCode: ExitStatus.network)
        }
        return (session, key)
    }

    /// A line that ran apart has ended: its owner may go once enough others are idle.
    private func releaseOwner(_ key: LinePlanner.ConnectionKey?) {
        guard let key else { return }
        let released = state.write { state -> [Session] in
            state.connectionOwners[key]?.running -= 1
            // Only an owner that has just gone idle can take the idle ones past the limit.
            guard state.connectionOwners[key]?.running == 0 else { return [] }
            var idle = state.connectionOwners.filter { $0.value.running == 0 }
            var gone: [Session] = []
            while idle.count > idleOwnerLimit, let oldest = idle.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                idle[oldest.key] = nil
                state.connectionOwners[oldest.key] = nil
                gone.append(oldest.value.session)
            }
            return gone
        }
        // Let go of them outside the lock, and wait for their threads to end (quickly: they
        // have nothing left to do), so that none is still running when af exits.
        for session in released { session.shutdownAndWait(timeout: Self.ownerEndTimeout) }
    }

    /// Standard error for one line: every message names it, and clears the progress line.
    private func lineErrors(_ number: Int) -> OutputChannel {
        let erase = progress.enabled ? BatchProgress.erase : ""
        return stderr.rewriting { text in
            guard text.hasPrefix("af: ") else { return erase + text }
            return "\(erase)af: line \(number): \(text.dropFirst(4))"
        } ?? stderr
    }

    // MARK: Finishing

    /// A line's request has ended: on the thread of its lane, which then starts what it may.
    private func completed(_ sequence: Int, response: Response) {
        let taken = state.write { state -> (LineRun, stopping: Bool)? in
            state.inFlight.removeValue(forKey: sequence).map { ($0, state.stop != nil) }
        }
        guard let (run, stopping) = taken else { return }
        if stopping, case .cancelled = response.error {
            run.execution.cleanUp()
            output.skip(sequence)
            state.write { $0.cancelled += 1 }
        } else {
            let status = run.execution.finish(run.flight, response: response)
            output.finish(sequence)
            record(line: run.line, sequence: sequence, status: status)
        }
        run.planned.built.body.removeTemporaryFiles()
        releaseOwner(run.apart)
        checkOutput()
        lineEnded(on: run.lane)
        pump(run.lane)
    }

    /// A line `lane` ran is recorded: only now may the batch count as done (its summary needs
    /// the line). Stalled lanes (behind it, or for room under --parallel) go on (this lane
    /// goes on by itself), told before this lane may leave, so that the first lane's queue
    /// holds nothing once it learns that the last lane has left.
    private func lineEnded(on lane: Int) {
        let stalled = state.write { state -> Set<Int> in
            state.running[lane] -= 1
            defer { state.stalled = [] }
            return state.stalled.subtracting([lane])
        }
        for other in stalled { lanes[other].async { self.pump(other) } }
    }

    /// Stops the batch when standard output cannot take more: its reader went away, or
    /// writing failed.
    private func checkOutput() {
        let health = output.stdout.writeHealth
        if health.closed {
            stop(.outputClosed)
        } else if health.failure != nil {
            stop(.outputFailed)
        }
    }

    private func record(line: Int, sequence: Int, status: Int32) {
        let (done, failed, stopNow) = state.write { state -> (Int, Int, Bool) in
            state.finished += 1
            if status != ExitStatus.success {
                state.failed += 1
                // The ten earliest failed lines, whatever order they finished in.
                state.failedLines.insert(line, at: state.failedLines.firstIndex { $0 > line } ?? state.failedLines.count)
                if state.failedLines.count > 10 { state.failedLines.removeLast() }
                if state.firstFailure.map({ sequence < $0.sequence }) ?? true { state.firstFailure = (sequence, status) }
            }
            return (state.finished, state.failed, status != ExitStatus.success && options.failFast)
        }
        progress.draw(done: done, total: source.total, failed: failed)
        if stopNow { stop(.failure) }
    }

    /// Starts nothing more and cancels what is in flight.
    private func stop(_ reason: Stop) {
        let (runs, awaiting) = state.write { state -> ([LineRun], Set<Int>) in
            if state.stop == nil {
                state.stop = reason
            } else if case .signal = reason {
                state.stop = reason
            }
            defer { state.awaitingLines = [] }
            return (Array(state.inFlight.values), state.awaitingLines)
        }
        // Each lane leaves as its cancelled lines end; one with none running is stalled
        // behind a line that is running, or for room such lines hold (and is told when a line
        // ends), or waits for streamed lines that may never come: it is told now.
        for run in runs { run.flight.request.cancel(Self.cancellation(for: reason)) }
        for lane in awaiting { lanes[lane].async { self.pump(lane) } }
    }

    /// What the requests a stop cancels are told.
    private static func cancellation(for reason: Stop) -> AFError.Cancellation {
        if case .signal(let signalled) = reason { return signalled }
        return .explicitly
    }

    private func interrupt(_ reason: AFError.Cancellation) {
        stop(.signal(reason))
    }

    /// How far a batch that stopped early got: "7 of 10 requests had finished (2 failed), 3
    /// cancelled". The failed ones count as finished, and are said: a run stopped by a signal
    /// or a failed output has no summary of failed lines after it.
    private static func tally(_ final: State) -> String {
        let failed = final.failed > 0 ? " (\(final.failed) failed)" : ""
        return "\(final.finished) of \(final.started) requests had finished\(failed), \(final.cancelled) cancelled"
    }

    /// The summary line and the exit status.
    private func conclude() -> Int32 {
        let final = state.read { $0 }
        progress.draw(done: final.finished, total: source.total, failed: final.failed, force: true)
        if final.failed == 0, final.stop == nil, output.stdout.writeFailure == nil {
            progress.keep()
        } else {
            progress.eraseIfShown()
        }
        if case .signal(let cause) = final.stop {
            // The words and status a single run ends with: "interrupted", 130; "terminated", 143.
            let what = ExitMapping.message(for: .cancelled(cause), attempts: 1)
            // `af batch -` waiting for its first line has nothing to count.
            stderr.writeError(final.started == 0 ? "\(what) before any request had started"
                : "\(what); \(Self.tally(final))")
            return ExitMapping.status(for: .cancelled(cause), checkStatus: false)
        }
        if let failure = output.stdout.writeFailure {
            // Whatever the requests did, outputs from the failure on are lost: the run failed.
            stderr.writeError("\(ExitMapping.message(for: failure, attempts: 1)); \(Self.tally(final))")
            return ExitMapping.status(for: failure, checkStatus: false)
        }
        let usage = budget.usage
        guard final.failed > 0 else {
            // An empty endpoints file is more often a broken step before af than a batch
            // meant to do nothing: exit 0, but not without a word.
            if final.started == 0, !options.quiet {
                stderr.writeNotice("the batch had no requests to send (its input holds only blank lines and comments)")
            }
            if usage.refused > 0, !options.quiet {
                stderr.writeNotice("the retry budget (\(budget.percent) % of requests + \(RetryBudget.floor)) ran out after \(usage.spent) retries; \(usage.refused) response\(usage.refused == 1 ? " was" : "s were") not retried")
            }
            return ExitStatus.success
        }
        var lines = final.failedLines.map(String.init).joined(separator: ", ")
        if final.failed > final.failedLines.count { lines += ", …" }
        var message = "\(final.failed) of \(final.started) requests failed (line\(final.failed == 1 ? "" : "s") \(lines))"
        if final.stop == .failure, options.failFast {
            message += "; --fail-fast started no more"
            if final.cancelled > 0 { message += " and cancelled \(final.cancelled)" }
        }
        if usage.refused > 0 {
            message += "; the retry budget (\(budget.percent) % of requests + \(RetryBudget.floor)) ran out after \(usage.spent) retries, so \(usage.refused) failure\(usage.refused == 1 ? " was" : "s were") not retried"
        }
        stderr.writeError(message)
        return final.firstFailure?.status ?? ExitStatus.network
    }
}
