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
        raiseDescriptorLimit()
        let planner = LinePlanner(base: settings, environment: environment)
        let options = BatchRunner.Options(
            parallel: settings.parallel,
            interval: settings.rate.map { $0.period / Double($0.count) } ?? 0,
            failFast: settings.failFast,
            quiet: settings.quiet
        )
        let progress = BatchProgress(stderr: stderr, enabled: environment.drawsProgress && !settings.quiet, columns: environment.terminalWidth)
        // Outputs printed to the terminal the progress line is on erase it first: they were
        // written on after it ("af: 1/2 done, …/sHTTP/1.1 200 OK").
        let screen = progress.enabled && stdout.isTerminal ? stdout.preceding(eachWriteWith: { progress.eraseIfShown() }) ?? stdout : stdout
        let output = OrderedOutput(stdout: screen, temporaryDirectory: environment.temporaryDirectory, inCompletionOrder: settings.report)
        let budget = RetryBudget(percent: settings.retryBudget)
        let netrc = try Netrc.load(environment: environment)
        if name == "-" {
            let lines = StreamedLines(capacity: settings.parallel * 2 + 16)
            let runner = BatchRunner(options: options, planner: planner, source: lines, output: output, stderr: stderr, budget: budget, progress: progress, netrc: netrc)
            return runner.run {
                lines.start(fd: environment.stdin, name: "standard input", session: runner.primary) { [weak runner] in runner?.linesArrived() }
            }
        }
        let lines = try FileLines(path: name, planner: planner, temporaryDirectory: environment.temporaryDirectory)
        let runner = BatchRunner(options: options, planner: planner, source: lines, output: output, stderr: stderr, budget: budget, progress: progress, netrc: netrc)
        return runner.run()
    }

    /// Lets the run hold as many descriptors as the system allows: each request in flight
    /// needs a socket, and each finished output waiting for an earlier one a file.
    private static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
