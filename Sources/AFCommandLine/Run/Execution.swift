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
        self.stderr = stderr
        plan = madePlan ?? OutputPlan.make(settings: settings, environment: environment)
        // `af batch` makes the configuration of its own settings once for all lines that
        // have no options of their own (its files are checked and read once).
        if let madeTrust {
            trust = madeTrust
        } else {
            trust = try TrustConfiguration.make(settings: settings, environment: environment, usesTLS: built.url.scheme == "https")
        }
        download = try Self.makeDownload(settings: settings, built: built, stdout: environment.stdout, stderr: stderr)
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
            return AuthenticationInterceptor(provider: tokens?(command) ?? CommandTokenProvider(command: command, environment: environment.variables), origin: built.url)
        }
    }

    /// The download destination, checked before anything is sent.
    private static func makeDownload(settings: Settings, built: BuiltRequest, stdout: Int32, stderr: OutputChannel) throws(CommandFailure) -> DownloadSink? {
        guard (settings.download || settings.output != nil), !settings.offline, !settings.curl else { return nil }
        do {
            var options: DownloadOptions = []
            if settings.createDirs { options.insert(.createIntermediateDirectories) }
            if settings.overwrite { options.insert(.removePreviousFile) }
            let configuration = DownloadSink.Configuration(
                directory: settings.outputDir ?? ".",
                fixedName: settings.output == "-" ? nil : settings.output,
                options: options,
                checksum: try settings.checksum.map { text throws(AFError) in try Checksum(parsing: text) },
                resume: settings.resume,
                savesAnyStatus: !settings.download,
                requestURL: built.url.string,
                fileDescriptor: settings.output == "-" ? stdout : nil
            )
            let quiet = settings.quiet
            return try DownloadSink(configuration: configuration) { notice in
                if !quiet { stderr.writeNotice(notice) }
            }
        } catch {
            if case .invalidRequest(let reason) = error { throw .usage(reason) }
            throw CommandFailure(ExitMapping.message(for: error, attempts: 0), exitCode: ExitMapping.status(for: error, checkStatus: true))
        }
    }

    /// A request in flight, and what `finish` needs to conclude it.
    struct InFlight {
        let session: Session
        let request: Request
        let printer: ExchangePrinter
        let memory: MemorySink?
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
            if settings.compress > 0, !built.description.body.isEmpty {
                stderr.writeNotice("warning: curl has no option to compress a request body: the command sends it uncompressed, without Content-Encoding: deflate")
            }
            return .finished(stdout.writeResult(CurlCommand.render(built: built, settings: settings, caBundle: trust.caBundle) + "\n", errors: stderr))
        }
        let memory = settings.report ? MemorySink() : nil
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
                return .finished(finishQuietlyIfClosed() ?? fail(error.description, ExitStatus.output))
            }
            return .finished(ExitStatus.success)
        }

        if let warning = trust.warning { stderr.writeNotice(warning) }
        let configuration = sessionConfiguration(printer: printer, budget: batch?.budget)
        let session = batch.map { Session(configuration: configuration, sharingConnectionsWith: $0.connections) }
            ?? Session(configuration: configuration)
        if let stored = built.session { session.importCookies(stored.cookies) }
        var description = built.description
        // The request body (B) is printed with the head that carried it, so both need it.
        let history = plan.all ? plan.historySections : []
        let recordsSentHead = plan.shows("H") || plan.shows("B") || history.contains("H") || history.contains("B") || settings.trace != nil
        // Many requests to one origin wait for its first connection when it may turn out to
        // be HTTP/2 (then they share it); with HTTP/1 waiting would only serialise them.
        let waitsForMultiplexing = batch != nil && (settings.httpVersion == .http2PriorKnowledge
            || (built.url.scheme == "https" && (settings.httpVersion == .automatic || settings.httpVersion == .http2)))
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
    /// download, which saves only a successful body; 2xx and `--accept-status` with
    /// `--check-status`; anything otherwise. Retryable statuses (and 401 with `--auth-cmd`)
    /// reach the retriers whatever the validation says.
    var validation: StatusValidation? {
        if settings.download {
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

    /// The description as the adapters that need no network would send it, for `--offline`.
    private func prepareOffline(_ description: RequestDescription) throws(AFError) -> RequestDescription {
        var prepared = description
        if let netrc { prepared = NetrcAdapter(netrc: netrc).adapted(prepared) }
        if let compressor { prepared = try compressor.compress(prepared) }
        return prepared
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
            try SessionFile.update(path: read.path, url: built.url) { stored in
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

    private func sessionConfiguration(printer: ExchangePrinter, budget: RetryBudget?) -> Session.Configuration {
        // Room for every monitor below at once, not grown by copies as they are appended.
        var monitors: [any EventMonitor] = []
        monitors.reserveCapacity(6)
        monitors.append(printer)
        monitors.append(RedirectNotice(stderr: stderr))
        if !settings.quiet { monitors.append(RetryNotice(stderr: stderr, limit: settings.retry)) }
        if let trace = settings.trace { monitors.append(TraceMonitor(format: trace, output: stderr)) }
        if settings.debug { monitors.append(TransportLogMonitor(output: stderr)) }
        if let download, environment.drawsProgress, !settings.quiet {
            monitors.append(ProgressBar(sink: download, output: stderr, width: environment.terminalWidth))
        }
        var adapters: [any RequestAdapter] = []
        if let authenticator { adapters.append(authenticator) }
        if let netrc { adapters.append(NetrcAdapter(netrc: netrc)) }
        if let download { adapters.append(DownloadResumer(sink: download)) }
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

    private func conclude(_ response: Response, printer: ExchangePrinter, memory: MemorySink?) -> Int32 {
        if let quiet = finishQuietlyIfClosed() { return quiet }
        let status = ExitMapping.status(for: response.error, checkStatus: settings.checkStatus || settings.download)
        if settings.download, !settings.quiet, let report = download?.report {
            stderr.writeNotice(summary(of: report, response: response))
            if let note = redirectedOutputNote(report) { stderr.writeNotice(note) }
        }
        // What is written after the exchange (the report, metadata) fails like the body
        // would: a reader that went away ends quietly, a full disk is exit 9.
        do throws(AFError) {
            if let memory {
                try stdout.write(Report.render(response: response, body: memory.bytes, exitCode: status, settings: settings, line: batchLine))
            } else {
                // Trailer fields come after the body, as curl -i shows them.
                if plan.shows("h"), !response.trailers.isEmpty { try printer.printAfterExchange(plan.head.fields(response.trailers)) }
                if plan.shows("m") { try printer.printAfterExchange(MetadataRenderer(theme: plan.head.theme).render(response)) }
            }
        } catch {
            // A failed exchange keeps its own error line; a gone reader ends quietly either way.
            if status == ExitStatus.success || stdout.isClosed { return stdout.status(after: error, errors: stderr, attempts: response.tries) }
        }
        if let error = response.error, status != ExitStatus.success {
            let message = ExitMapping.message(for: error, attempts: response.tries)
            stderr.writeError(message + (Self.isResumable(error) ? resumeHint() : "") + notRetriedHint(error, attempts: response.tries)
                              + priorKnowledgeHint(error) + authenticationHint(error, response: response) + methodAsURLHint(error)
                              + schemeTypoHint(error) + proxyVariableHint(error) + caBundleVariableHint(error) + settings.configNote(for: message))
        }
        return status
    }

    /// A 401 whose challenge asks for what af did not send: Digest when af sent Basic or
    /// nothing, or any credentials when none were given (netrc aside, which af may have used).
    private func authenticationHint(_ error: AFError, response: Response) -> String {
        guard case .responseValidationFailed(401, _) = error.underlyingError, let head = response.head else { return "" }
        let schemes = Set(head.headers.values(for: .wwwAuthenticate).flatMap(Self.challengeSchemes))
        let given = settings.auth != nil || settings.authCmd != nil || built.url.user != nil
            || built.description.headers.contains(.authorization)
        if schemes.contains("digest"), settings.authType != .digest {
            return "; the server asks for Digest authentication: -A digest -a USER:PASSWORD"
        }
        // Credentials nothing on the command line shows were sent, and refused: the session's.
        if let session = built.session, session.auth != nil, settings.auth == nil, settings.authCmd == nil, built.url.user == nil,
           !built.givenHeaders.contains(where: { $0.name == .authorization }) {
            return "; af sent the credentials the session '\(Quote.argument(session.path))' keeps: give -a USER:PASSWORD to replace them"
        }
        guard !given else { return "" }
        if let netrc, let host = try? HTTPURL(parsing: response.finalURL).host, netrc.credentials(for: host) != nil {
            return "; af sent the credentials '\(Quote.argument(Netrc.path(environment: environment)))' holds for \(host): correct them there, or give -a USER:PASSWORD (--ignore-netrc sends none)"
        }
        if schemes.contains("basic") { return "; the server asks for credentials: -a USER:PASSWORD" }
        if schemes.contains("bearer") { return "; the server asks for a token: -A bearer -a TOKEN" }
        return ""
    }

    /// The schemes a `WWW-Authenticate` value offers, in lower case: `Basic realm="a",
    /// Digest realm="b", nonce="c"` offers basic and digest (a piece without `=` before its
    /// first blank starts a challenge).
    static func challengeSchemes(_ value: String) -> [String] {
        value.split(separator: ",").compactMap { piece in
            let word = piece.drop { $0 == " " || $0 == "\t" }.prefix { $0 != " " && $0 != "\t" }
            guard !word.isEmpty, !word.contains("=") else { return nil }
            return word.lowercased()
        }
    }

    /// HTTP/2 forced on a cleartext connection to a server that speaks only HTTP/1.1 ends in a
    /// reset or an empty reply (the server closes on the preface), which alone do not say why.
    /// Broken framing from a server that does speak HTTP/2 gets no such hint.
    private func priorKnowledgeHint(_ error: AFError) -> String {
        guard settings.httpVersion == .http2PriorKnowledge, case .transport(let failure) = error.underlyingError,
              [.connectionReset, .sendFailed].contains(failure.kind), failure.cause == nil,
              built.url.scheme == "http"
        else { return "" }
        return "; the server may not speak HTTP/2 without TLS: try without --http-version=2-prior-knowledge"
    }

    /// A proxy that failed and that no option named came from a variable a user may not know
    /// is set in this shell (or a CI job's environment): name it, and the ways around it.
    private func proxyVariableHint(_ error: AFError) -> String {
        guard settings.proxies.isEmpty, case .transport(let failure) = error.underlyingError, failure.message.containsBytes(of: "the proxy") else { return "" }
        let variables = environment.derived.proxies
        let scheme = built.url.scheme
        let name: String
        if scheme == "https", variables.https != nil {
            name = environment.variables["https_proxy"] != nil ? "https_proxy" : "HTTPS_PROXY"
        } else if scheme == "http", variables.http != nil {
            name = "http_proxy"
        } else if variables.all != nil {
            name = environment.variables["all_proxy"] != nil ? "all_proxy" : "ALL_PROXY"
        } else {
            return ""
        }
        return " (the proxy is set by \(name) in the environment; unset it, or list the host in no_proxy, to connect directly)"
    }

    /// A certificate that did not verify against a CA bundle the environment named in place
    /// of the system's roots (a corporate CA in REQUESTS_CA_BUNDLE, left set for a site
    /// outside): the advice to give --verify=CA.pem alone would not say why a public site
    /// failed.
    private func caBundleVariableHint(_ error: AFError) -> String {
        guard [nil, "yes", "true"].contains(settings.verify), case .transport(let failure) = error.underlyingError,
              case .untrustedCertificate(_, .unknownIssuer)? = failure.cause, let (variable, path) = environment.derived.caBundle
        else { return "" }
        // Many systems set these variables to the system's own bundle (Nix, container images):
        // then they changed nothing. Said only where libcurl names its defaults to compare.
        let defaults = CurlRuntime.defaultCALocations
        guard defaults.file != nil || defaults.directory != nil else { return "" }
        let named = FileIO.canonicalPath(path)
        if [defaults.file, defaults.directory].contains(where: { $0.map(FileIO.canonicalPath) == named }) { return "" }
        return " (af trusts only the CA certificates of \(variable)='\(Quote.argument(path))', set in the environment, "
            + "instead of the system's: unset it to trust the system's)"
    }

    /// `af get` (or `af post`) with nothing after it, or `af help`: a lone positional is the
    /// URL (SPEC §1), so the word became a host name that does not resolve.
    private func methodAsURLHint(_ error: AFError) -> String {
        guard case .transport(let failure) = error.underlyingError, failure.kind == .dnsFailure,
              built.url.port == nil, built.url.path == "/" else { return "" }
        let host = built.url.host.lowercased()
        switch host {
        case "help": return "; a lone word is read as the URL: af --help shows how to use af"
        case "version": return "; a lone word is read as the URL: af --version shows af's version"
        default:
            guard HTTPMethod.standard.contains(HTTPMethod(rawValue: host.uppercased())) else { return "" }
            return "; a lone word is read as the URL: give the URL after the method (af \(host) URL)"
        }
    }

    /// `af get http//host/path` (the scheme's colon left out, or doubled): the scheme was
    /// read as the host, which does not resolve. What followed the scheme af added is what
    /// was typed.
    private func schemeTypoHint(_ error: AFError) -> String {
        guard case .transport(let failure) = error.underlyingError, failure.kind == .dnsFailure else { return "" }
        let text = built.url.string
        guard let start = text.utf8Offset(of: "://"),
              let meant = SchemeTypo.correction(of: String(decoding: text.utf8.dropFirst(start + 3), as: UTF8.self)) else { return "" }
        return "; did you mean '\(meant)'?"
    }

    /// Why a failure `--retry` would have retried was not: the method is not idempotent, and a
    /// user who asked for retries would otherwise not know they were skipped.
    private func notRetriedHint(_ error: AFError, attempts: Int) -> String {
        let method = built.description.method
        guard settings.retry > 0, !settings.retryAllMethods, attempts == 1, !HTTPMethod.idempotent.contains(method) else { return "" }
        let policy = RetryPolicy(retryLimit: settings.retry, retryableStatuses: settings.retryOn ?? RetryPolicy.defaultRetryableStatuses)
        guard policy.isRetryable(error.underlyingError) else { return "" }
        return " (\(method.rawValue) is not retried without --retry-all-methods)"
    }

    /// Whether running again with `-c` can finish what `error` stopped.
    private static func isResumable(_ error: AFError) -> Bool {
        // A download kept as `.part` because its name was taken meanwhile says so itself.
        if case .output(let failure) = error, [.resumeRefused, .checksumMismatch, .destinationExists, .inUse].contains(failure.kind) { return false }
        return true
    }

    /// How to resume, when a partial download was left behind.
    private func resumeHint() -> String {
        guard let download, let part = download.partPath, let size = FileSystem.size(part), size > 0 else { return "" }
        return "; the partial download is in '\(part)' (\(Format.bytes(size))): run the same command with -c to resume"
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
        var text = settings.output == "-"
            ? "wrote \(Format.bytes(report.bytes)) to standard output in \(Format.seconds(seconds))\(speed)"
            : "saved '\(report.path)' (\(Format.bytes(report.bytes))) in \(Format.seconds(seconds))\(speed)"
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

    /// Exit 0 without a word when the reader of standard output went away.
    private func finishQuietlyIfClosed() -> Int32? {
        stdout.isClosed ? ExitStatus.success : nil
    }

    private func fail(_ message: String, _ status: Int32) -> Int32 {
        stderr.writeError(message)
        return status
    }
}
