import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// `af batch [OPTIONS] FILE|-`: one request per line, many in flight, output in line order.
enum BatchCommand {
    static func run(positionals: [Positional], settings: Settings, environment: Environment, stdout: OutputChannel, stderr: OutputChannel) throws(CommandFailure) -> Int32 {
        guard positionals.count == 1, let name = positionals.first?.text else {
            throw .usage(positionals.isEmpty
                ? "af batch needs a FILE with one af command line per line, or - to read the lines from standard input"
                : "af batch takes one FILE (or -); '\(Quote.argument(positionals[1].text))' is one too many: put requests in the file")
        }
        if settings.offline, settings.report { try AFCommand.checkCombinations(settings) }
        // The lines are standard input's; a file option given it (`--verify=/dev/stdin`) would
        // read them as its file, or find them gone.
        if let option = settings.standardInputOption, StandardInputItems.names.contains(name) {
            throw .usage("\(option.text) reads standard input, which af batch \(Quote.argument(name)) reads its lines from; name a file")
        }
        try InputIsOutput.checkBatchLines(name, environment: environment)
        // OpenSSL's and libcurl's setup (about a millisecond) runs on the second processor
        // while the file is read and every line checked, which needs neither: a batch's
        // first request went out that much sooner. (A single request has too little to do
        // before it needs libcurl for the thread to pay.)
        if !settings.offline { CurlRuntime.prepareInBackground() }
        var parallel = settings.parallel
        // As many descriptors as the system allows: each request in flight needs a socket,
        // and each finished output waiting for an earlier one a file. (`AFCommand` refused a
        // limit below a single request's floor already.) Descriptors af was started with
        // count too: 20 left open by a parent under `ulimit -n 48` failed lines at 10 in flight.
        let limit = ResourceLimits.descriptors(raisingBelow: Int.max)
        let inherited = limit == nil ? 0 : ResourceLimits.inheritedDescriptors()
        if let limit, case let fitting = parallelFitting(descriptors: limit, inherited: inherited), fitting < parallel {
            // More in flight would fail the lines past the limit at once, each with its own
            // "too many open files".
            let held = inherited > 0 ? ", \(inherited) of them held open by the program that started it" : ""
            stderr.writeNotice("warning: --parallel=\(parallel) lowered to \(fitting): af may have at most \(limit) files open here (ulimit -n)\(held)")
            parallel = fitting
        }
        let planner = LinePlanner(base: settings, environment: environment)
        var options = BatchRunner.Options(
            parallel: parallel,
            interval: settings.rate.map { $0.period / Double($0.count) } ?? 0,
            failFast: settings.failFast,
            quiet: settings.quiet
        )
        options.waitingRoom = limit.map { waitingRoom(descriptors: $0, inherited: inherited, parallel: parallel) }
        let progress = BatchProgress(stderr: stderr, enabled: environment.drawsProgress && !settings.quiet, columns: environment.terminalWidth)
        // Outputs printed to the terminal the progress line is on erase it first: they were
        // written on after it ("af: 1/2 done, …/sHTTP/1.1 200 OK").
        let sharesScreen = progress.enabled && stdout.isTerminal
        let screen = sharesScreen ? stdout.preceding(eachWriteWith: { progress.eraseIfShown() }) ?? stdout : stdout
        let output = OrderedOutput(stdout: screen, temporaryDirectory: environment.temporaryDirectory, inCompletionOrder: settings.report)
        let budget = RetryBudget(percent: settings.retryBudget)
        let netrc = try Netrc.load(environment: environment)
        let streamed = name == "-" ? StreamedLines(capacity: parallel * 2 + 16) : nil
        let lines: any BatchLineSource
        if let streamed { lines = streamed } else { lines = try FileLines(path: name, planner: planner, temporaryDirectory: environment.temporaryDirectory) }
        options.lanes = lanes(parallel: parallel, processors: environment.processors, linesFit: lines.fitsLanes,
                              oneThread: options.interval > 0 || sharesScreen, lines: lines.total)
        let runner = BatchRunner(options: options, planner: planner, source: lines, output: output, stderr: stderr, budget: budget, progress: progress, netrc: netrc)
        if settings.debug { stderr.writeQuietly(debugLine(runner.options)) }
        guard let streamed else { return runner.run() }
        let notice = StandardInput.waitNotice(on: stderr, quiet: settings.quiet, delays: environment.noticeDelays)
        return runner.run {
            streamed.start(fd: environment.stdin, name: "standard input", session: runner.primary, notice: notice) { [weak runner] in runner?.linesArrived() }
        }
    }

    /// `--debug`'s line on how the requests in flight are shared among lanes.
    static func debugLine(_ options: BatchRunner.Options) -> String {
        let shares = BatchRunner.laneLimits(options)
        return "af: debug: batch: \(shares.count) lane\(shares.count == 1 ? "" : "s") (threads), --parallel=\(options.parallel) shared \(shares.map(String.init).joined(separator: " + "))\n"
    }

    /// How many lanes (`BatchRunner`) share the requests in flight: one per processor af may
    /// run on, with at least two requests each and at most `maxLanes`, when lines may fit any
    /// lane; one when every line needs the first (HTTP/2 streams that share a connection,
    /// connection settings of their own), and when
    /// `oneThread` says the run needs one: `--rate`, whose spacing is one lane's timer, and
    /// outputs printed on the terminal the progress line is drawn on, which erase it as they
    /// are written (from two threads the line could be drawn between the two). No more lanes
    /// than a file has lines (`lines`, nil for lines streamed on standard input): a lane
    /// without a line would be a thread and a connection cache started for nothing, and the
    /// first line handed to another thread than the one that prints it.
    static func lanes(parallel: Int, processors: Int, linesFit: Bool, oneThread: Bool, lines: Int? = nil) -> Int {
        guard linesFit, !oneThread else { return 1 }
        return max(1, min(processors, parallel / 2, maxLanes, lines ?? .max))
    }

    /// The most lanes a batch runs on: each has a thread, a connection cache and a pool of
    /// transfer handles of its own.
    static let maxLanes = 4

    /// How many requests may be in flight with `limit` descriptors: each holds its socket,
    /// once its output outgrows memory a file, and room for a connection libcurl keeps or
    /// opens beside it (a second address of a name, one not yet back in the cache); the run
    /// holds about 16 besides (the standard streams, the batch file, the spool of waiting
    /// outputs, the transfer thread's wakeup and signal pipes, a name lookup's socket pair).
    /// Two a request held under an idle machine and failed lines under a loaded one.
    /// `inherited` descriptors (`ResourceLimits.inheritedDescriptors`) come off the limit.
    static func parallelFitting(descriptors limit: Int, inherited: Int = 0) -> Int {
        max(1, room(descriptors: limit, inherited: inherited) / 3)
    }

    /// The descriptors left for requests once the run's own 16 and the `inherited` are taken.
    private static func room(descriptors limit: Int, inherited: Int) -> Int {
        limit - 16 - inherited
    }

    /// How many finished outputs may wait for an earlier line beyond the `parallel` in
    /// flight, each in a file of its own, with `limit` descriptors: what `parallelFitting`
    /// leaves, at least one. A first line slow to answer under `ulimit -n 48` let 22 lines
    /// past it start, whose outputs took the descriptors later lines' sockets needed.
    static func waitingRoom(descriptors limit: Int, inherited: Int, parallel: Int) -> Int {
        max(1, room(descriptors: limit, inherited: inherited) - 3 * parallel)
    }
}
