import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Sends a built request and turns the outcome into output and an exit status.
final class Execution {
    let settings: Settings
    let built: BuiltRequest
    let environment: Environment
    let stdout: OutputChannel
    let stderr: OutputChannel
    let plan: OutputPlan

    init(settings: Settings, built: BuiltRequest, environment: Environment, stdout: OutputChannel, stderr: OutputChannel) throws(CommandFailure) {
        self.settings = settings
        self.built = built
        self.environment = environment
        self.stdout = stdout
        self.stderr = stderr
        plan = OutputPlan.make(settings: settings, environment: environment)
    }

    func perform() -> Int32 {
        defer { for file in compressor?.temporaryFiles ?? [] { FileSystem.remove(file) } }
        if settings.curl {
            stdout.writeQuietly(CurlCommand.render(built: built, settings: settings) + "\n")
            return ExitStatus.success
        }
        let memory = settings.report ? MemorySink() : nil
        let target: ExchangePrinter.BodyTarget
        if let memory {
            target = .forward(memory)
        } else if settings.quiet {
            target = .discard
        } else {
            target = .print
        }
        var effectivePlan = plan
        if settings.report { effectivePlan.sections = [] }
        let printer = ExchangePrinter(
            plan: effectivePlan, built: built, stdout: stdout, stderr: stderr, target: target,
            temporaryDirectory: environment.temporaryDirectory
        )
        if settings.offline {
            do {
                try printer.printOffline(try prepareOffline(built.description))
            } catch {
                return finishQuietlyIfClosed() ?? fail(error.description, ExitStatus.output)
            }
            return ExitStatus.success
        }

        let session = Session(configuration: sessionConfiguration(printer: printer))
        var description = built.description
        description.options.recordsSentHead = plan.shows("H") || settings.trace != nil
        let request = session.request(description, sink: printer, validation: validation)
        SignalWatcher.install(on: session) { reason in request.cancel(reason) }
        let response = request.run()
        return conclude(response, printer: printer, memory: memory)
    }

    /// Statuses that end the request successfully. Retried statuses must fail validation so
    /// the retry policy sees them; without --check-status they still exit 0 at the end.
    var validation: StatusValidation? {
        if settings.checkStatus {
            return StatusValidation(acceptable: [200...299] + settings.acceptStatus)
        }
        guard settings.retry > 0 else { return nil }
        let retried = settings.retryOn ?? RetryPolicy.defaultRetryableStatuses
        var ranges: [ClosedRange<Int>] = []
        var start: Int?
        for status in 100...999 {
            if retried.contains(status) {
                if let low = start { ranges.append(low...(status - 1)) }
                start = nil
            } else if start == nil {
                start = status
            }
        }
        if let low = start { ranges.append(low...999) }
        return StatusValidation(acceptable: ranges)
    }

    /// The compressor, when `-x` asks for one; shared by the session and `--offline`.
    private lazy var compressor: DeflateCompressor? = settings.compress > 0
        ? DeflateCompressor(always: settings.compress > 1, temporaryDirectory: environment.temporaryDirectory)
        : nil

    /// The description as the adapters that need no network would send it, for `--offline`.
    private func prepareOffline(_ description: RequestDescription) throws(AFError) -> RequestDescription {
        var prepared = description
        if let compressor { prepared = try compressor.compress(prepared) }
        return prepared
    }

    private func sessionConfiguration(printer: ExchangePrinter) -> Session.Configuration {
        var monitors: [any EventMonitor] = [printer, RetryNotice(stderr: stderr, limit: settings.retry), RedirectNotice(stderr: stderr)]
        if let trace = settings.trace { monitors.append(TraceMonitor(format: trace, output: stderr)) }
        var adapters: [any RequestAdapter] = []
        if let compressor { adapters.append(compressor) }
        var retriers: [any RequestRetrier] = []
        if settings.retry > 0 {
            retriers.append(RetryPolicy(
                retryLimit: settings.retry,
                delayScale: settings.retryDelay,
                backoffBase: settings.retryBackoff,
                maxDelay: settings.retryMaxDelay,
                jitter: settings.retryJitter,
                maxTime: settings.retryMaxTime,
                retryableStatuses: settings.retryOn ?? RetryPolicy.defaultRetryableStatuses,
                retryableMethods: settings.retryAllMethods ? nil : HTTPMethod.idempotent
            ))
        }
        let interceptor = adapters.isEmpty && retriers.isEmpty ? nil : Interceptor(adapters: adapters, retriers: retriers)
        return Session.Configuration(
            interceptor: interceptor,
            redirectPolicy: RedirectPolicy(
                follow: settings.follow,
                maxRedirects: settings.maxRedirects,
                trustedLocation: settings.locationTrusted,
                secretHeaders: settings.secretHeaders.map { HTTPHeaders.Name($0) }
            ),
            eventMonitors: monitors
        )
    }

    private func conclude(_ response: Response, printer: ExchangePrinter, memory: MemorySink?) -> Int32 {
        if let quiet = finishQuietlyIfClosed() { return quiet }
        let status = ExitMapping.status(for: response.error, checkStatus: settings.checkStatus)
        if let memory {
            stdout.writeQuietly(Report.render(response: response, body: memory.bytes, exitCode: status, settings: settings))
        } else if plan.shows("m") {
            try? printer.printTrailer(MetadataRenderer(theme: plan.head.theme).render(response))
        }
        if let error = response.error, status != ExitStatus.success {
            stderr.writeQuietly("af: error: \(ExitMapping.message(for: error, retries: settings.retry, attempts: response.attempts.count))\n")
        }
        return status
    }

    /// Exit 0 without a word when the reader of standard output went away.
    private func finishQuietlyIfClosed() -> Int32? {
        stdout.isClosed ? ExitStatus.success : nil
    }

    private func fail(_ message: String, _ status: Int32) -> Int32 {
        stderr.writeQuietly("af: error: \(message)\n")
        return status
    }
}

/// Prints one line per scheduled retry: the attempt, the reason and the delay.
struct RetryNotice: EventMonitor {
    let stderr: OutputChannel
    let limit: Int

    func request(_ request: Request, didEmit event: RequestEvent) {
        guard case .retryScheduled(let attempt, let reason, let delay) = event.kind else { return }
        stderr.writeQuietly("af: retrying in \(Format.seconds(delay)) (attempt \(attempt) of \(limit + 1)): \(reason)\n")
    }
}

/// Says on standard error which credentials a cross-origin redirect dropped.
struct RedirectNotice: EventMonitor {
    let stderr: OutputChannel

    func request(_ request: Request, didEmit event: RequestEvent) {
        guard case .redirected(let record) = event.kind, !record.dropped.isEmpty else { return }
        stderr.writeQuietly("af: redirect to \(record.to) leaves \(record.from.hasPrefix("https:") && record.to.hasPrefix("http:") ? "https" : "the origin"); not sending \(record.dropped.joined(separator: ", ")) there (--location-trusted keeps them)\n")
    }
}

/// Turns SIGINT and SIGTERM into a cancellation of the running request.
///
/// The signal handler only writes the signal number to a pipe (the one thing a handler may
/// safely do); the session's transfer thread watches the pipe and cancels the request there.
enum SignalWatcher {
    /// The write end of the pipe, read by the C signal handler.
    nonisolated(unsafe) private static var writeEnd: Int32 = -1

    static func install(on session: Session, _ cancel: @escaping @Sendable (AFError.Cancellation) -> Void) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        writeEnd = ends[1]
        let readEnd = ends[0]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(SignalWatcher.writeEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        // A parent may have started af with these blocked (a thread pool's mask is inherited
        // through spawn); af relies on them, so it unblocks them.
        var wanted = sigset_t()
        sigemptyset(&wanted)
        sigaddset(&wanted, SIGINT)
        sigaddset(&wanted, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &wanted, nil)
        session.watch(fileDescriptor: readEnd) {
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) == 1 {
                cancel(Int32(byte) == SIGTERM ? .terminated : .interrupted)
            }
        }
    }
}
