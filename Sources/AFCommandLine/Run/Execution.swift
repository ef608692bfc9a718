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
    /// Where a download (`-d`, `-o`) goes; nil when the body is printed.
    let download: DownloadSink?
    /// Server trust from `--verify`, pins, revocation and `--trust-policy`.
    let trust: TrustConfiguration
    /// `~/.netrc`, unless `--ignore-netrc`.
    let netrc: Netrc?
    /// `--auth-cmd`.
    let authenticator: AuthenticationInterceptor?
    /// The line of `af batch` this request comes from, for `--report=json`.
    let batchLine: Int?

    /// `tokens` gives the `--auth-cmd` token source for a command: `af batch` shares one per
    /// command among its lines (`SharedCommandToken`); alone, each run has its own. `trust`
    /// and `plan`, when given, are what `settings` would make (`af batch` makes them once for
    /// the lines without options of their own).
    init(settings: Settings, built: BuiltRequest, environment: Environment, stdout: OutputChannel, stderr: OutputChannel, batchLine: Int? = nil, loadedNetrc: Netrc?? = nil,
         trust madeTrust: TrustConfiguration? = nil, plan madePlan: OutputPlan? = nil, tokens: ((AuthCommand) -> TokenProvider)? = nil) throws(CommandFailure) {
        self.settings = settings
        self.batchLine = batchLine
        self.built = built
        self.environment = environment
        self.stdout = stdout
        // A line of a batch may give -qq of its own.
        self.stderr = settings.quietWarnings ? stderr.mutingNotices() : stderr
        plan = madePlan ?? OutputPlan.make(settings: settings, environment: environment)
        // `af batch` makes the configuration of its own settings once for all lines that
        // have no options of their own (its files are checked and read once).
        if let madeTrust {
            trust = madeTrust
        } else {
            trust = try TrustConfiguration.make(settings: settings, environment: environment, usesTLS: built.url.scheme == "https")
        }
        download = try Self.makeDownload(settings: settings, built: built, streams: (environment.stdout, environment.stderr), stderr: self.stderr)
        // `af batch` reads ~/.netrc once for all its lines.
        if settings.ignoreNetrc {
            netrc = nil
        } else if let loadedNetrc {
            netrc = loadedNetrc
        } else {
            netrc = try Netrc.load(environment: environment)
        }
        authenticator = settings.authCmd.map { command in
            let command = AuthCommand(command: command, timeLimit: settings.timeout)
            let notice = StandardInput.waitNotice(on: stderr, quiet: settings.quiet, delays: environment.noticeDelays)
            return AuthenticationInterceptor(provider: tokens?(command) ?? CommandTokenProvider(command: command, environment: environment.variables, notice: notice),
                                             origin: built.url)
        }
    }

    /// The file `-c` resumes: the one `-o` names, else the one the URL names (the response's
    /// name is not known before the request), in `--output-dir`.
    static func resumedPath(settings: Settings, url: HTTPURL) -> String {
        DownloadSink.path(of: settings.output ?? DownloadNaming.suggestedFilename(for: nil, url: url.string), in: settings.outputDir ?? ".")
    }

    /// The download destination, checked before anything is sent.
    private static func makeDownload(settings: Settings, built: BuiltRequest, streams: (out: Int32, err: Int32), stderr: OutputChannel) throws(CommandFailure) -> DownloadSink? {
        guard (settings.download || settings.output != nil), !settings.offline, !settings.curl else { return nil }
        try checkDescriptor(settings)
        do {
            var options: DownloadOptions = []
            if settings.createDirs { options.insert(.createIntermediateDirectories) }
            if settings.overwrite { options.insert(.removePreviousFile) }
            let configuration = DownloadSink.Configuration(
                directory: settings.outputDir ?? ".",
                fixedName: settings.outputStreamName ?? settings.output,
                options: options,
                checksum: try settings.checksum.map { text throws(AFError) in try Checksum(parsing: text) },
                resume: settings.resume,
                // A body that is no continuation (an error page) must not replace what a resume
                // continues: -c saves only a successful body, as -d does.
                savesAnyStatus: !settings.download && !settings.resume,
                requestURL: built.url.string,
                fileDescriptor: settings.outputStream.map { $0 == 1 ? streams.out : $0 == 2 ? streams.err : $0 }
            )
            let quiet = settings.quiet
            return try DownloadSink(configuration: configuration) { notice in
                if !quiet { stderr.writeNotice(notice) }
            }
        } catch {
            if case .invalidRequest(let reason) = error { throw .usage(reason) }
            // `-d -o DIR`, as wget's -P or curl's --output-dir take a directory.
            let directory = settings.download && settings.output.map { $0.hasSuffix("/") || FileIO.isDirectory(DownloadSink.path(of: $0, in: settings.outputDir ?? ".")) } == true
                ? "; to save into it under the name from the server or URL, give --output-dir=\(Quote.shellWord(settings.output ?? "")) instead of -o" : ""
            // `-c` with NAME and NAME.part both there: replacing NAME is what --overwrite allows.
            var replacing = ""
            if settings.resume, !settings.overwrite, case .output(let failure) = error, failure.kind == .destinationExists,
               FileSystem.exists(resumedPath(settings: settings, url: built.url) + ".part") {
                replacing = ", or add --overwrite to allow it"
            }
            throw CommandFailure(ExitMapping.message(for: error, attempts: 0) + directory + replacing, exitCode: ExitMapping.status(for: error, checkStatus: true))
        }
    }

    /// `-o /dev/fd/N` for a descriptor af cannot write the body to, refused before sending:
    /// one the shell did not open for it (the name would be opened anew, or not found), or
    /// one open only for reading.
    private static func checkDescriptor(_ settings: Settings) throws(CommandFailure) {
        guard let output = settings.output, let number = Settings.descriptorNumber(named: output), number != 1, number != 2 else { return }
        let name = Quote.argument(output)
        guard settings.outputStream != nil else {
            throw CommandFailure("'\(name)' names descriptor \(number), which af was not started with; open it for af in the shell (\(number)>FILE) or give -o a file name", exitCode: ExitStatus.output)
        }
        if FileSystem.isReadOnly(number) {
            throw CommandFailure("'\(name)' names descriptor \(number), which is open only for reading; open it for writing (\(number)>FILE) or give -o a file name", exitCode: ExitStatus.output)
        }
    }

    /// A request in flight, and what `finish` needs to conclude it.
    struct InFlight {
        let session: Session
        let request: Request
        let printer: ExchangePrinter
        let memory: ReportBody?
    }

    /// What `start` did: concluded at once (`--curl`, `--offline`), or sent a request.
    enum Started {
        case finished(Int32)
        case inFlight(InFlight)
    }

    /// How `af batch` runs a line: on a session sharing connections, with a retry budget.
    struct BatchContext {
        /// The session whose thread and connections the line's session shares.
        let connections: Session
        /// The batch-wide retry budget.
        let budget: RetryBudget
    }

    /// Sends the request on the calling thread and concludes it.
    func perform() -> Int32 {
        switch start(batch: nil) {
        case .finished(let status):
            return status
        case .inFlight(let flight):
            SignalWatcher.install(on: flight.session) { [weak request = flight.request] reason in request?.cancel(reason) }
            let response = flight.request.run()
            return finish(flight, response: response)
        }
    }

    /// Prints what needs no network, or creates the session and the request and resumes it.
    func start(batch: BatchContext?) -> Started {
        if settings.curl {
            defer { cleanUp() }
            if curlLosesCompression {
                stderr.writeNotice("warning: curl has no option to compress a request body: the command sends it uncompressed, without Content-Encoding: deflate")
            }
            let command = CurlCommand.render(built: built, description: withSessionCookies(built.description), settings: settings, caBundle: trust.caBundle,
                                             netrcFile: curlNetrcFile)
            return .finished(stdout.writeResult(command + "\n", errors: stderr))
        }
        let memory = settings.report ? ReportBody(temporaryDirectory: environment.temporaryDirectory) : nil
        let target: ExchangePrinter.BodyTarget
        if let download {
            target = .forward(download)
        } else if let memory {
            target = .forward(memory)
        } else if settings.quiet {
            target = .discard
        } else {
            target = .print
        }
        let printer = ExchangePrinter(
            plan: settings.report ? plan.printingNoSections() : plan, built: built, stdout: stdout, stderr: stderr, target: target,
            temporaryDirectory: environment.temporaryDirectory, quiet: settings.quiet
        )
        if settings.offline {
            defer { cleanUp() }
            do {
                try printer.printOffline(try prepareOffline(built.description))
            } catch {
                return .finished(quietEnding() ?? fail(error.description, ExitStatus.output))
            }
            return .finished(ExitStatus.success)
        }

        if let warning = trust.warning { stderr.writeNotice(warning) }
        let configuration = sessionConfiguration(printer: printer, batch: batch)
        let session = batch.map { Session(configuration: configuration, sharingConnectionsWith: $0.connections) }
            ?? Session(configuration: configuration)
        if let stored = built.session {
            // A cookie a Cookie header gives is sent as given (the engine puts the header on the
            // line of the cookies it sends): the session's cookie it replaces when the session
            // is saved stays out, or the old value would go first beside the new.
            session.importCookies(stored.cookies(notGivenIn: built.givenHeaders, host: built.url.host))
        }
        var description = built.description
        // The request body (B) is printed with the head that carried it, so both need it.
        let history = plan.all ? plan.historySections : []
        let recordsSentHead = plan.shows("H") || plan.shows("B") || history.contains("H") || history.contains("B") || settings.trace != nil || settings.report
        // Many requests to one origin wait for its first connection when it may turn out to
        // be HTTP/2 (then they share it); with HTTP/1 waiting would only serialise them.
        let waitsForMultiplexing = batch != nil && settings.mayShareNegotiatedHTTP2(scheme: built.url.scheme)
        // Set only what differs: the description shares its storage with the plan of a batch
        // line, and a write copies all of it (the request's every header and option).
        let options = description.options
        if options.recordsSentHead != recordsSentHead || options.logsTransport != settings.debug || options.waitsForMultiplexing != waitsForMultiplexing {
            description.options.recordsSentHead = recordsSentHead
            description.options.logsTransport = settings.debug
            description.options.waitsForMultiplexing = waitsForMultiplexing
        }
        let request = session.request(description, sink: printer, validation: validation)
        if batch != nil { request.resume() }
        return .inFlight(InFlight(session: session, request: request, printer: printer, memory: memory))
    }

    /// Saves the session file, prints the summary, report or error, and returns the exit status.
    func finish(_ flight: InFlight, response: Response) -> Int32 {
        defer { cleanUp() }
        noteHTTPieSession()
        if let failure = saveSession(flight.session, response: response) {
            stderr.writeError(failure.message)
            return failure.exitCode
        }
        return conclude(response, printer: flight.printer, memory: flight.memory)
    }

    /// Removes the temporary files of `-x`.
    func cleanUp() {
        for file in compressor?.temporaryFiles ?? [] { FileSystem.remove(file) }
    }

    /// Statuses that end the request successfully: 2xx (and 416 when resuming) for a
    /// download or a resume, which save only a successful body; 2xx and `--accept-status`
    /// with `--check-status`; anything otherwise. Retryable statuses (and 401 with
    /// `--auth-cmd`) reach the retriers whatever the validation says.
    var validation: StatusValidation? {
        if settings.download || settings.resume {
            return StatusValidation(acceptable: [200...299] + (settings.resume ? [416...416] : []) + settings.acceptStatus)
        }
        if settings.checkStatus {
            return StatusValidation(acceptable: [200...299] + settings.acceptStatus)
        }
        return nil
    }

    /// The compressor, when `-x` asks for one; shared by the session and `--offline`.
    private lazy var compressor: DeflateCompressor? = settings.compress > 0
        ? DeflateCompressor(always: settings.compress > 1, temporaryDirectory: environment.temporaryDirectory)
        : nil

    /// Whether af would deflate the body that a `--curl` command sends as it is: always with
    /// `-xx`; with one `-x`, a body in memory is tried (a body that gets no smaller goes as it
    /// is, as the command sends it), and a file or a stream is taken to be deflated, since
    /// reading it only to word a warning would read a FIFO the command itself must read, or
    /// a whole large file.
    private var curlLosesCompression: Bool {
        let description = built.description
        guard let compressor, !description.body.isEmpty, !description.headers.contains(.contentEncoding) else { return false }
        guard case .bytes = description.body, !compressor.always else { return true }
        return (try? compressor.compress(description))?.headers.contains(.contentEncoding) ?? true
    }

    /// The netrc a `--curl` line reads: the file af takes this request's credentials from, or
    /// may take a redirect's from (it looks the file up again for every host). A request
    /// with credentials of its own gets none from it, in af or in curl.
    private var curlNetrcFile: String? {
        let description = built.description
        guard let netrc, !netrc.isEmpty, !description.headers.contains(.authorization), description.challengeCredentials == nil else { return nil }
        let takesCredentials = NetrcAdapter(netrc: netrc).adapted(description).headers.contains(.authorization)
        return takesCredentials || settings.follow ? Netrc.path(environment: environment) : nil
    }

    /// The description as the adapters that need no network would send it, for `--offline`.
    private func prepareOffline(_ description: RequestDescription) throws(AFError) -> RequestDescription {
        var prepared = withSessionCookies(description)
        if let netrc { prepared = NetrcAdapter(netrc: netrc).adapted(prepared) }
        guard let compressor, !prepared.body.isEmpty, !prepared.headers.contains(.contentEncoding) else { return prepared }
        if prepared.body.isReplayable { return try compressor.compress(prepared) }
        // A FIFO, a device or a stream is read once, by the request: its size is not known, so
        // the compressor always deflates it, and reading it here would wait on a FIFO without
        // a writer or never end (/dev/zero). The head says so; the body is noted as streamed.
        prepared.headers.add(name: .contentEncoding, value: "deflate")
        return prepared
    }

    /// `description` with the Cookie line a session would add when it is sent: what
    /// `--offline` and `--curl` print is what would go (libcurl picks the session's cookies
    /// only when it sends).
    private func withSessionCookies(_ description: RequestDescription) -> RequestDescription {
        guard let session = built.session, let line = session.cookieLine(for: built.url, given: built.givenHeaders, now: HTTPDate.now()) else {
            return description
        }
        var printed = description
        printed.headers.set(name: .cookie, value: line)
        return printed
    }

    /// An HTTPie user's `--session=NAME` that finds no af session of that name, where HTTPie
    /// has one for the host: af keeps its own, and reads HTTPie's only when given its path.
    private func noteHTTPieSession() {
        guard let read = built.session, read.isNew, let name = settings.session, !SessionFile.isPath(name), !settings.quiet,
              let httpie = HTTPieSession.namedSessionPath(name, url: built.url, environment: environment) else { return }
        let path = Quote.shellWord(httpie)
        stderr.writeNotice("the session '\(name)' for \(built.url.host) is new to af, which keeps its own; HTTPie's of that name is read with --session=\(path)")
    }

    /// Keeps the session up to date after an exchange: this command line's headers and
    /// credentials, and the cookies the exchange set, changed or removed, applied to the file
    /// as it is now — not as it was read — so that lines of a batch (and runs side by side)
    /// saving one session in turn keep each other's changes.
    private func saveSession(_ session: Session, response: Response) -> CommandFailure? {
        guard let read = built.session, !settings.sessionReadOnly, response.head != nil else { return nil }
        let now = HTTPDate.now()
        var cookies = session.exportCookies().filter { !$0.isExpired(at: now) }
        // A Cookie header given with --session is kept as cookies for this host (HTTPie),
        // unless the server set the same cookie itself.
        let set = Set(cookies.map(\.identity))
        cookies += SessionFile.cookies(fromHeaders: built.givenHeaders, host: built.url.host).filter { !set.contains($0.identity) }
        var dropped = 0
        do {
            let notice = StandardInput.waitNotice(on: stderr, quiet: settings.quiet, delays: environment.noticeDelays)
            try SessionFile.update(path: read.path, url: built.url, notice: notice) { stored in
                if stored.applies(to: built.url) {
                    // Every header given this time replaces those of its name, repeats included.
                    let kept = built.givenHeaders.filter { SessionFile.keeps($0.name) }
                    let names = Set(kept.map(\.name))
                    stored.headers.removeAll { names.contains($0.name) }
                    stored.headers.append(contentsOf: kept)
                    if let credentials = built.givenCredentials { stored.auth = credentials }
                }
                let merged = SessionFile.applying(changesFrom: read.cookies, to: cookies, onto: stored.cookies).filter { !$0.isExpired(at: now) }
                (stored.cookies, dropped) = SessionFile.keptCookies(merged, earlier: stored.cookies)
            }
        } catch {
            return error
        }
        if dropped > 0, !settings.quiet {
            stderr.writeNotice("the session '\(read.path)' keeps at most \(SessionFile.cookieLimit) cookies; \(dropped) of the oldest were dropped")
        }
        return nil
    }

    private func sessionConfiguration(printer: ExchangePrinter, batch: BatchContext?) -> Session.Configuration {
        let budget = batch?.budget
        // Room for every monitor below at once, not grown by copies as they are appended.
        var monitors: [any EventMonitor] = []
        monitors.reserveCapacity(7)
        monitors.append(printer)
        monitors.append(RedirectNotice(stderr: stderr))
        if !settings.quiet { monitors.append(RetryNotice(stderr: stderr, limit: settings.retry)) }
        // In a batch too: a line that waits holds the batch, and a CI log shows no progress line.
        let drawsProgress = download != nil && environment.drawsProgress && !settings.quiet
        if !settings.quiet, settings.timeout == nil {
            let stderr = stderr
            monitors.append(SilenceNotice(seconds: environment.noticeDelays.silentServer, sendsBody: !built.description.body.isEmpty,
                                          watchesBody: !settings.stream && !drawsProgress) { text in stderr.writeNotice(text) })
        }
        if let trace = settings.trace { monitors.append(TraceMonitor(format: trace, output: stderr)) }
        if settings.debug { monitors.append(TransportLogMonitor(output: stderr, redaction: CredentialRedaction(secretHeaders: settings.secretHeaders))) }
        if let download, drawsProgress {
            monitors.append(ProgressBar(sink: download, output: stderr, width: environment.terminalWidth))
        }
        var adapters: [any RequestAdapter] = []
        if let authenticator { adapters.append(authenticator) }
        if let netrc { adapters.append(NetrcAdapter(netrc: netrc)) }
        if let download {
            adapters.append(DownloadResumer(sink: download))
        } else if printer.resumesBody {
            adapters.append(DownloadResumer(sink: printer))
        }
        if let compressor { adapters.append(compressor) }
        var retriers: [any RequestRetrier] = []
        if let authenticator { retriers.append(authenticator) }
        if settings.retry > 0 {
            let policy = RetryPolicy(
                retryLimit: settings.retry,
                delayScale: settings.retryDelay,
                backoffBase: settings.retryBackoff,
                maxDelay: settings.retryMaxDelay,
                jitter: settings.retryJitter,
                maxTime: settings.retryMaxTime,
                retryableStatuses: settings.retryOn ?? RetryPolicy.defaultRetryableStatuses,
                retryableMethods: settings.retryAllMethods ? nil : HTTPMethod.idempotent
            )
            retriers.append(budget.map { BudgetedRetrier(policy, budget: $0) } ?? policy)
        }
        let interceptor = adapters.isEmpty && retriers.isEmpty ? nil : Interceptor(adapters: adapters, retriers: retriers)
        return Session.Configuration(
            interceptor: interceptor,
            trustManager: trust.manager,
            defaultTrust: trust.defaultTrust,
            redirectPolicy: RedirectPolicy(
                follow: settings.follow,
                maxRedirects: settings.maxRedirects,
                trustedLocation: settings.locationTrusted,
                secretHeaders: settings.secretHeaders.map { HTTPHeaders.Name($0) }
            ),
            eventMonitors: monitors
        )
    }

    private func conclude(_ response: Response, printer: ExchangePrinter, memory: ReportBody?) -> Int32 {
        if let quiet = quietEnding() { return quiet }
        let status = ExitMapping.status(for: response.error, checkStatus: settings.checkStatus || settings.download || settings.resume)
        if settings.download, !settings.quiet, let report = download?.report {
            stderr.writeNotice(summary(of: report, response: response))
            if let note = redirectedOutputNote(report) { stderr.writeNotice(note) }
        }
        // A checksum that matched says the bytes are the ones the user expects, coded or not.
        if !settings.quiet, let report = download?.report, !report.alreadyComplete, !report.verified,
           let warning = EncodedDownload.warning(savedAs: settings.outputStreamName ?? report.path, toStream: settings.outputStreamName != nil, head: response.head) {
            stderr.writeNotice(warning)
        }
        // What is written after the exchange (the report, metadata) fails like the body
        // would: a reader that went away ends quietly, a full disk is exit 9.
        do throws(AFError) {
            if let memory {
                try Report.write(response: response, body: memory, exitCode: status, settings: settings, line: batchLine, to: stdout)
            } else {
                // Trailer fields come after the body, as curl -i shows them.
                if plan.shows("h"), !response.trailers.isEmpty { try printer.printAfterExchange(plan.head.fields(response.trailers)) }
                if plan.shows("m") { try printer.printAfterExchange(MetadataRenderer(theme: plan.head.theme).render(response)) }
            }
        } catch {
            // A failed exchange keeps its own error line; a gone reader ends quietly either way.
            if let quiet = quietEnding() { return quiet }
            if status == ExitStatus.success { return stdout.status(after: error, errors: stderr, attempts: response.tries) }
        }
        if let error = response.error, status != ExitStatus.success {
            let message = ExitMapping.message(for: error, attempts: response.tries, caBundle: settings.verifyBundle)
            stderr.writeError(message + advice(for: error, response: response, message: message))
        }
        return status
    }

    /// `saved 'file' (1.0 MiB) in 0.4s, 2.5 MiB/s; sha256 verified` (into standard output,
    /// `wrote 1.0 MiB to standard output …`).
    private func summary(of report: DownloadSink.Report, response: Response) -> String {
        if report.alreadyComplete {
            return "'\(report.path)' was already complete (\(Format.bytes(report.bytes)))\(report.verified ? "; checksum verified" : "")"
        }
        let seconds = response.attempts.compactMap { $0.metrics?.total }.reduce(0, +)
        let fetched = report.bytes - report.resumedFrom
        let speed = seconds > 0 ? " at \(Format.bytes(Int64(Saturating.int(Double(fetched) / seconds))))/s" : ""
        var text = settings.outputStreamName.map { "wrote \(Format.bytes(report.bytes)) to \($0) in \(Format.seconds(seconds))\(speed)" }
            ?? "saved '\(report.path)' (\(Format.bytes(report.bytes))) in \(Format.seconds(seconds))\(speed)"
        if report.resumedFrom > 0 { text += ", resumed after \(Format.bytes(report.resumedFrom))" }
        if report.verified, let algorithm = download?.configuration.checksum?.algorithm { text += "; \(algorithm.rawValue) verified" }
        return text
    }

    /// For an HTTPie user piping a download (`af -d URL | tar xz`): HTTPie's -d sends the
    /// body to a redirected standard output, af's always saves a file (a script's or CI job's
    /// standard output is redirected too, and its download would land in a log). Said only
    /// to a person: standard error on a terminal, standard output a pipe or file that got
    /// nothing.
    private func redirectedOutputNote(_ report: DownloadSink.Report) -> String? {
        guard settings.output == nil, batchLine == nil, !settings.report, environment.stderrIsTerminal, !environment.stdoutIsTerminal else { return nil }
        var info = stat()
        guard fstat(environment.stdout, &info) == 0, [S_IFIFO, S_IFSOCK, S_IFREG].contains(info.st_mode & S_IFMT) else { return nil }
        return "standard output got nothing: -d saved the body to '\(report.path)'; give -o - to send it to standard output instead"
    }

    /// Exit 0 without a word when the reader of standard output went away. In a batch, exit 9
    /// without a word of the line's own when standard output failed (a full disk): the batch
    /// stops, and its one error line says so, with how many requests had finished.
    private func quietEnding() -> Int32? {
        let health = stdout.writeHealth
        if health.closed { return ExitStatus.success }
        if batchLine != nil, health.failure != nil { return ExitStatus.output }
        return nil
    }

    private func fail(_ message: String, _ status: Int32) -> Int32 {
        stderr.writeError(message)
        return status
    }
}
