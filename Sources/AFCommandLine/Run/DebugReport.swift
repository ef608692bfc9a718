import AFEngine

/// `--debug`: what a bug report needs, on standard error before anything is sent: af's
/// versions, the arguments, and every setting that differs from its default. libcurl's own
/// trace follows while the request runs (`TransportLogMonitor`).
enum DebugReport {
    static func write(settings: Settings, positionals: [Positional], environment: Environment, to stderr: OutputChannel) {
        var text = HelpText.version.split(separator: "\n").map { "af: debug: \($0)\n" }.joined()
        let redaction = DebugRedaction(secretHeaders: settings.secretHeaders)
        text += "af: debug: arguments: \(redacted(environment.arguments).map { Quote.argument(redaction.argument($0)).debugDescription }.joined(separator: " "))\n"
        text += "af: debug: positionals: \(positionals.map { Quote.argument(redaction.argument($0.text)).debugDescription }.joined(separator: " "))\n"
        let defaults = Mirror(reflecting: Settings().values).children.map { String(describing: $0.value) }
        for (index, child) in Mirror(reflecting: settings.values).children.enumerated() {
            guard let label = child.label, label != "debug" else { continue }
            let value = String(describing: child.value)
            if index < defaults.count, defaults[index] == value { continue }
            // Secrets never reach a bug report.
            let shown = ["auth", "certKeyPass"].contains(label) ? DebugRedaction.hidden : Quote.argument(redaction.withoutURLPasswords(value))
            text += "af: debug: setting \(label) = \(shown)\n"
        }
        stderr.writeQuietly(text)
    }

    /// The arguments with the values of secret options (`-a`, `--auth`, `--cert-key-pass`)
    /// replaced, read as the parser reads them: a value may follow `=`, be the next word, or
    /// be the rest of a cluster of short options (`-aUSER:PASS`, `-vaUSER:PASS`), and the
    /// value of another option is never taken for an option (a bug report gets pasted).
    static func redacted(_ arguments: [String]) -> [String] {
        enum Word { case option, secretValue, value, positional }
        let secret: Set<String> = ["auth", "cert-key-pass"]
        var out: [String] = []
        var next = Word.option
        for argument in arguments {
            switch next {
            case .secretValue:
                out.append(DebugRedaction.hidden)
                next = .option
                continue
            case .value:
                out.append(argument)
                next = .option
                continue
            case .positional:
                out.append(argument)
                continue
            case .option:
                break
            }
            if argument == "--" {
                next = .positional
                out.append(argument)
            } else if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let inline = body.count > name.count
                if secret.contains(name) {
                    out.append(inline ? "--\(name)=" + DebugRedaction.hidden : argument)
                    if !inline { next = .secretValue }
                } else {
                    out.append(argument)
                    if !inline, case .required? = OptionTable.option(long: name)?.value { next = .value }
                }
            } else if argument.hasPrefix("-"), argument.count > 1 {
                // The first letter that takes a value takes the rest of the word, or the next word.
                var shown = "-"
                var letters = Substring(argument.dropFirst())
                while let letter = letters.first {
                    letters = letters.dropFirst()
                    shown.append(letter)
                    guard let spec = OptionTable.option(short: letter), case .required = spec.value else { continue }
                    let isSecret = secret.contains(spec.long)
                    if letters.isEmpty {
                        next = isSecret ? .secretValue : .value
                    } else {
                        shown += isSecret ? DebugRedaction.hidden : String(letters)
                    }
                    break
                }
                out.append(shown)
            } else {
                out.append(argument)
            }
        }
        return out
    }
}

/// Writes libcurl's verbose trace (`--debug`) to standard error as curl does: `*` for its
/// notes, `>` for what was sent, `<` for what came back.
struct TransportLogMonitor: EventMonitor {
    let output: OutputChannel
    /// Hides credentials in the heads traced.
    let redaction: DebugRedaction

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
