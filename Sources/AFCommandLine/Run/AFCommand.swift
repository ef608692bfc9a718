import AFEngine

/// The entry point of the command line: parse, build, send, print, exit status.
public enum AFCommand {
    /// Runs af with `environment` and returns the exit status.
    public static func run(_ environment: Environment) -> Int32 {
        let stdout = OutputChannel(fd: environment.stdout, isTerminal: environment.stdoutIsTerminal)
        var stderr = OutputChannel(fd: environment.stderr, isTerminal: environment.stderrIsTerminal)
        SignalWatcher.arm()
        // For an error's word on options the config file set.
        var parsedSettings: Settings?
        do throws(CommandFailure) {
            if let argument = environment.undecodableArgument {
                throw .usage("the argument '\(Quote.argument(argument))' is not UTF-8 text; af reads its arguments as UTF-8")
            }
            let (settings, positionals) = try parse(environment)
            parsedSettings = settings
            if settings.quietWarnings { stderr = stderr.mutingNotices() }
            if settings.debug {
                DebugReport.write(settings: settings, positionals: positionals, environment: environment, to: stderr)
                // `af --debug` alone is asked for the report (versions for a bug report), as in HTTPie.
                if positionals.isEmpty, !settings.help, !settings.version { return 0 }
            }
            if settings.help { return stdout.writeResult(HelpText.help(width: environment.stdoutIsTerminal ? environment.terminalWidth : nil), errors: stderr) }
            if settings.version { return stdout.writeResult(HelpText.version, errors: stderr) }
            let subcommand = Self.subcommand(of: positionals)
            if let (spelling, owner) = settings.subcommandOption, owner != subcommand {
                throw Self.outsideItsSubcommand(spelling, owner)
            }
            if !settings.offline { try ResourceLimits.ensureMinimum() }
            if subcommand == "batch" {
                return try BatchCommand.run(positionals: Array(positionals.dropFirst()), settings: settings, environment: environment, stdout: stdout, stderr: stderr)
            }
            if subcommand == "pin" {
                return try PinCommand.run(positionals: Array(positionals.dropFirst()), settings: settings, environment: environment, stdout: stdout, stderr: stderr)
            }
            try checkCombinations(settings)
            let built = try RequestBuilder.build(positionals: positionals, settings: settings, environment: environment)
            defer { built.body.removeTemporaryFiles() }
            let execution = try Execution(settings: settings, built: built, environment: environment, stdout: stdout, stderr: stderr)
            return execution.perform()
        } catch {
            stderr.writeError(error.message + (parsedSettings?.configNote(for: error.message) ?? ""))
            return error.exitCode
        }
    }

    /// Stops the commands af started that are still running (`--auth-cmd`), with what
    /// they started: for the end of the process, after `run`.
    public static func stopCommands() {
        Subprocess.stopRunning()
    }

    /// Waits for the transport's setup that `af batch` started in the background, if it has
    /// not ended: for the end of the process, before it exits (a bad line found while it ran).
    public static func awaitTransportSetup() {
        CurlRuntime.awaitPreparation()
    }

    /// Config defaults, then the command line.
    static func parse(_ environment: Environment) throws(CommandFailure) -> (Settings, [Positional]) {
        var settings = Settings()
        if let (defaults, path) = try ConfigFile.defaultOptions(environment: environment) {
            let parsed = try ParsedArguments.parse(defaults, source: "the config file '\(path)'", home: environment.homeDirectory)
            guard parsed.positionals.isEmpty else {
                throw .usage("the config file '\(path)' may only hold options; remove '\(parsed.positionals[0].text)' from \"default_options\"")
            }
            for option in parsed.options {
                // Every run would print the help or the version instead of sending anything.
                if option.spec.id == .help || option.spec.id == .version {
                    throw .usage("the config file '\(path)' gives \(option.spelling), which would make every run print \(option.spec.id == .help ? "the help" : "the version") and send nothing; remove it from \"default_options\"")
                }
                do {
                    try settings.apply(option)
                } catch {
                    throw CommandFailure("in the config file '\(path)' (\"default_options\"): \(error.message)", exitCode: error.exitCode)
                }
                settings.configured.insert(option.spec.id)
            }
            settings.configPath = path
            // An option of a subcommand in the config file (`--parallel=8`) is that
            // subcommand's default, not a mistake in every other run; given on the command
            // line, it is still refused outside its subcommand.
            settings.subcommandOption = nil
        }
        let parsed = try ParsedArguments.parse(environment.arguments, home: environment.homeDirectory)
        for option in parsed.options {
            do {
                try settings.apply(option)
            } catch {
                // A subcommand's option outside it is the mistake, whatever became its value
                // (`af --parallel URL`, curl's flag, took the URL for a number).
                if let owner = option.spec.group.subcommand, owner != subcommand(of: parsed.positionals) { throw outsideItsSubcommand(option.spelling, owner) }
                throw error
            }
        }
        if parsed.positionals.isEmpty, !settings.help, !settings.version {
            // `af --file URL`: the subcommand's option, not the URL it took, is the mistake.
            if let (spelling, owner) = settings.subcommandOption { throw outsideItsSubcommand(spelling, owner) }
            if let taken = urlTakenAsValue(parsed.options, arguments: environment.arguments) { throw .usage("no URL given: \(taken)") }
        }
        try settings.undoConflicts(inherited: settings.configured, options: parsed.options)
        // HTTPie: a download follows redirects (and names the file from the URL asked for).
        if settings.download, !settings.followGiven { settings.follow = true }
        return (settings, parsed.positionals)
    }

    /// The subcommand the first positional names (`batch`, `pin`), or nil for a request.
    static func subcommand(of positionals: [Positional]) -> String? {
        positionals.first.flatMap { first in OptionGroup.allCases.contains { $0.subcommand == first.text } ? first.text : nil }
    }

    /// The usage error for `spelling`, an option of the subcommand `owner`, given outside it.
    static func outsideItsSubcommand(_ spelling: String, _ owner: String) -> CommandFailure {
        .usage(owner == "batch"
            ? "\(spelling) is an option of af batch: af batch \(spelling)… FILE runs one request per line of FILE"
            : "\(spelling) is an option of af pin: af pin --file CERT prints the pins of a certificate file")
    }

    /// What became of the URL when an option took it as its value, given as the next
    /// argument (`af -o https://example.org/f`, a file name forgotten), for a command line
    /// with nothing else left for the URL; nil when no option did.
    static func urlTakenAsValue(_ options: [ParsedOption], arguments: [String]) -> String? {
        for option in options.reversed() {
            guard let value = option.value, let index = option.valueArgument, arguments.indices.contains(index),
                  arguments[index] == value, RequestBuilder.isURLArgument(value) else { continue }
            return "\(option.spelling) took '\(MessageQuote.url(value))' as its value; give \(option.spelling) a value of its own before the URL"
        }
        return nil
    }

    /// Refuses options that contradict each other (`OptionTable.conflicts`) or miss the
    /// option they need (`OptionTable.requirements`), before anything is read or sent.
    static func checkCombinations(_ settings: Settings) throws(CommandFailure) {
        let given = settings.given
        // A conflict takes two options (most command lines, and batch lines, give fewer).
        for conflict in OptionTable.conflicts where given.count >= 2 && given.contains(conflict.first) && given.contains(conflict.second) {
            throw .usage(conflict.message)
        }
        for requirement in OptionTable.requirements
        where !given.isEmpty && given.contains(requirement.option) && !requirement.anyOf.contains(where: given.contains) {
            throw .usage(requirement.message)
        }
        if settings.ssl == .tls1_3, settings.tlsMax == .tls1_2 {
            throw .usage("--ssl=tls1.3 and --tls-max=tls1.2 leave no TLS version to speak; drop one")
        }
        if settings.chunked, settings.httpVersion == .http1_0 {
            throw .usage("--chunked needs HTTP/1.1: HTTP/1.0 has no chunked encoding; drop --chunked or --http-version=1.0")
        }
        // Two names for the session: which one was used depended on the options' order.
        if let readOnly = settings.sessionReadOnlyName, let session = settings.sessionName, session != readOnly {
            throw .usage("--session=\(Quote.argument(session)) and --session-read-only=\(Quote.argument(readOnly)) name two sessions; give one (--session-read-only alone makes --session read-only)")
        }
        // A bare --session-read-only reads the session --session names; with none, the run
        // used no session at all.
        if settings.sessionReadOnly, settings.session == nil {
            throw .usage("--session-read-only names no session: give --session-read-only=NAME (or PATH), or add --session=NAME")
        }
    }
}
