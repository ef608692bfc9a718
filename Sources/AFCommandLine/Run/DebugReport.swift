import AFEngine

/// `--debug`: what a bug report needs, on standard error before anything is sent: af's
/// versions, the arguments, and every setting that differs from its default. libcurl's own
/// trace follows while the request runs (`TransportLogMonitor`).
enum DebugReport {
    static func write(settings: Settings, positionals: [Positional], environment: Environment, to stderr: OutputChannel) {
        var text = HelpText.version.split(separator: "\n").map { "af: debug: \($0)\n" }.joined()
        let redaction = CredentialRedaction(secretHeaders: settings.secretHeaders)
        // Capped only: the redaction has hidden every credential already, as `(hidden)`.
        text += "af: debug: arguments: \(redacted(environment.arguments).map { MessageQuote.capped(redaction.argument($0)).debugDescription }.joined(separator: " "))\n"
        text += "af: debug: positionals: \(positionals.map { MessageQuote.capped(redaction.argument($0.text)).debugDescription }.joined(separator: " "))\n"
        let defaults = Mirror(reflecting: Settings().values).children.map { String(describing: $0.value) }
        for (index, child) in Mirror(reflecting: settings.values).children.enumerated() {
            guard let label = child.label, label != "debug" else { continue }
            let value = String(describing: child.value)
            if index < defaults.count, defaults[index] == value { continue }
            // Secrets never reach a bug report.
            let shown = OptionTable.secretOptions.contains(where: { "\($0)" == label }) ? CredentialRedaction.hidden : MessageQuote.capped(redaction.withoutURLPasswords(value))
            text += "af: debug: setting \(label) = \(shown)\n"
        }
        stderr.writeQuietly(text)
    }


    /// The arguments with the values of secret options replaced, where the parser read them:
    /// after `=`, in the next argument, or the rest of a cluster of short options
    /// (`-aUSER:PASS`, `-vaUSER:PASS`); another option's value is never taken for one.
    static func redacted(_ arguments: [String]) -> [String] {
        // These arguments were parsed already, before the report; a failure cannot come here,
        // and would show nothing of them.
        guard let parsed = try? ParsedArguments.parse(arguments) else { return arguments.map { _ in CredentialRedaction.hidden } }
        var out = arguments
        for option in parsed.options where OptionTable.secretOptions.contains(option.spec.id) {
            guard let index = option.valueArgument, let value = option.value else { continue }
            // The value is the whole argument, or the end of the option's own.
            out[index] = out[index] == value ? CredentialRedaction.hidden : String(out[index].dropLast(value.count)) + CredentialRedaction.hidden
        }
        return out
    }
}

/// Writes libcurl's verbose trace (`--debug`) to standard error as curl does: `*` for its
/// notes, `>` for what was sent, `<` for what came back.
struct TransportLogMonitor: EventMonitor {
    let output: OutputChannel
    /// Hides credentials in the heads traced.
    let redaction: CredentialRedaction

    var interests: RequestEvent.Interests { .transportLog }

    func request(_ request: Request, didEmit event: RequestEvent) {
        guard case .transportLog(let kind, let text) = event.kind else { return }
        let marker: String
        switch kind {
        case .text: marker = "*"
        case .sentHead: marker = ">"
        case .receivedHead: marker = "<"
        }
        var lines = ""
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let shown = kind == .text ? redaction.note(line) : redaction.headLine(line)
            lines += "\(marker) \(TerminalText.escaped(shown))\n"
        }
        output.writeQuietly(lines)
    }
}
