import AFEngine

/// A line's request as the check before the run planned and built it (a class: it is handed
/// on, not copied).
final class PlannedLine: Sendable {
    let settings: Settings
    let built: BuiltRequest
    /// Whose connections it may use: nil for the batch's.
    let connections: LinePlanner.ConnectionKey?

    init(settings: Settings, built: BuiltRequest, connections: LinePlanner.ConnectionKey?) {
        self.settings = settings
        self.built = built
        self.connections = connections
    }

    /// Whether the run may send it as it is instead of planning the line again: nothing of it
    /// was read from a file (which may change before the line runs) or left in a temporary one.
    var isReusable: Bool { !built.readFiles && built.body.temporaryFiles.isEmpty }

    /// Whether it may run on any lane of a batch (`BatchRunner`), each with connections of its
    /// own: it uses the batch's connection settings and speaks HTTP/1, so no other line could
    /// have shared its connection as an HTTP/2 stream (which needs every such line on one).
    /// (An `http://` line with `--http-version=2` is kept off lanes too: its upgrade may give a
    /// connection later lines to the origin share.)
    var fitsAnyLane: Bool {
        connections == nil && settings.httpVersion != .http2 && !settings.mayShareNegotiatedHTTP2(scheme: built.url.scheme)
    }
}

/// Turns one line of a batch into the settings and positionals of its request: the batch's
/// settings, then the line's own options on top (`--no-X` included).
struct LinePlanner: Sendable {
    /// The config file's defaults and `af batch`'s options.
    let base: Settings
    /// What each line's request sees: no standard input, no terminal on standard error.
    let environment: Environment
    /// The transfer options and output plan of `base`, made once for the lines without
    /// options of their own (most lines of most batches). No options when making them
    /// failed: each such line then makes its own and reports the failure.
    let baseOptions: TransferOptions?
    let basePlan: OutputPlan
    /// The home directory a line's `~/…` paths are under (`HomePath`).
    let home: String
    /// What `AFCommand.checkCombinations` says of `base`, asked once: the lines without options
    /// of their own have its settings, so each would get the same answer.
    private let baseCombinationProblem: CommandFailure?

    init(base: Settings, environment: Environment) {
        var base = base
        base.ignoreStdin = true
        self.base = base
        var lineEnvironment = environment
        lineEnvironment.stdin = -1
        lineEnvironment.stdinIsTerminal = false
        lineEnvironment.stderrIsTerminal = false
        self.environment = lineEnvironment
        home = environment.homeDirectory
        baseOptions = try? RequestBuilder.transferOptions(base, environment: lineEnvironment)
        basePlan = OutputPlan.make(settings: base, environment: lineEnvironment)
        do {
            try AFCommand.checkCombinations(base)
            baseCombinationProblem = nil
        } catch {
            baseCombinationProblem = error
        }
    }

    /// The output plan of a line's settings.
    func outputPlan(for settings: Settings) -> OutputPlan {
        settings.isUnchangedCopy(of: base) ? basePlan : OutputPlan.make(settings: settings, environment: environment)
    }

    /// The words of a line, or nil for a blank line or a comment. A leading `af` (a command
    /// line copied from a shell) is left out; another client's command line and shell
    /// syntax written outside quotes are refused.
    static func words(_ text: String) throws(CommandFailure) -> [String]? {
        try split(text)?.words
    }

    /// `words`, with the first text of the line a shell would have expanded (`$TOKEN`),
    /// which af sends as written.
    static func split(_ text: String) throws(CommandFailure) -> (words: [String], expansion: String?)? {
        // A shell's command line cannot hold a NUL; libcurl would cut a URL or header at one.
        if text.containsByte(0) { throw .usage("the line has a NUL byte, which no command line can hold") }
        var words: [String]
        var quoted: [Bool]?
        let expansion: String?
        do {
            (words, quoted, expansion) = try ShellWords.splitMarkingQuotes(text)
        } catch {
            throw .usage(error.message)
        }
        if words.isEmpty { return nil }
        // A command copied from documentation with its shell prompt (`$ af get URL`, `% af …`):
        // the prompt is no part of it.
        if words.count > 2, ["$", "%"].contains(words[0]), quoted?[0] != true, words[1] == "af" {
            words.removeFirst()
            quoted?.removeFirst()
        }
        if words.count > 1, let program = words.first {
            // A command line copied from a shell starts with af itself, which would otherwise
            // be sent as the method AF: it is read without it.
            if program == "af" {
                words.removeFirst()
                quoted?.removeFirst()
            }
            // Another client's command line (HTTPie's, curl's) would send its program's name
            // as the method, if its options did not fail first; a custom method of that name
            // is written in capitals.
            if otherClients.contains(program) {
                throw .usage("the line starts with '\(program)', another program's name, which would be sent as the method \(program.uppercased()): "
                    + "a line is af's [METHOD] URL [ITEMS] without a program name, as in 'get example.org/health' (write \(program.uppercased()) to send that method)")
            }
        }
        // Shell syntax typed after a request (`| jq .`, `> out.json`) would be read as items,
        // and its words (`-r`) as options: say what it is and what does its work here. Only a
        // word written as a shell reads an operator (no quote or backslash in it) and that
        // starts as one does is looked up (this runs for every line); a quoted `'|'` is data.
        for (index, word) in words.enumerated() where quoted?[index] != true && word.utf8.first.map(shellSyntaxStarts.contains) == true {
            if let advice = shellSyntax[word] {
                throw .usage("'\(word)' is shell syntax, but af batch runs each line without a shell: \(advice)")
            }
        }
        return (words, expansion)
    }

    /// The settings and positionals of a line's request, checked as `af` alone checks them, and
    /// the key of the connections it may use (nil: the batch's).
    func plan(_ words: [String]) throws(CommandFailure) -> (Settings, [Positional], ConnectionKey?) {
        let parsed = try ParsedArguments.parse(words, home: home)
        var settings = base
        for option in parsed.options {
            if option.spec.group == .batch {
                throw .usage("\(option.spelling) applies to the whole batch: give it to af batch, not on a line")
            }
            if option.spec.group.subcommand != nil {
                throw .usage("\(option.spelling) is an option of af \(option.spec.group.subcommand ?? ""), which cannot run on a line of a batch")
            }
            if option.spec.id == .help || option.spec.id == .version {
                throw .usage("\(option.spelling) has no place on a line of a batch")
            }
            try settings.apply(option)
        }
        // A line's own options override the batch's (and the config file's) they conflict with.
        try settings.undoConflicts(inherited: base.given, options: parsed.options)
        if settings.download, !settings.followGiven { settings.follow = true }
        // Set in the base already: a line without options of its own shares its settings'
        // storage with the base (and every such line) instead of copying it.
        if !settings.ignoreStdin { settings.ignoreStdin = true }
        guard let first = parsed.positionals.first else {
            if let taken = AFCommand.urlTakenAsValue(parsed.options, arguments: words) { throw .usage("the line has no URL: \(taken)") }
            throw .usage("the line has no URL")
        }
        if first.text == "pin" || first.text == "batch" {
            throw .usage("af \(first.text) cannot run on a line of a batch")
        }
        if let stream = settings.outputStream {
            throw .usage(stream == 1
                ? "-o - would write past the order af batch keeps on standard output; leave it out (the body is printed there in line order) or give -o a file name"
                : "-o \(settings.output ?? "/dev/stderr") would mix the bodies of the lines in flight \(stream == 2 ? "on standard error" : "in it"); give -o a file name")
        }
        // Standard input is the lines of `af batch -`, and no line's in `af batch FILE`: an item
        // or a file option that names it (`@/dev/stdin` too) would take lines, or race the
        // reader of them (a body read as empty, exit 0).
        if let item = parsed.positionals.dropFirst().first(where: { item in StandardInputItems.itemEndings.contains { item.text.hasSuffix($0) } }) {
            throw .usage("'\(Quote.argument(item.text))' reads standard input, which is never a request body in af batch; put the body in a file and use @FILE")
        }
        if let option = settings.standardInputOption, base.standardInputOption == nil {
            throw .usage("\(option.text) reads standard input, which no line of af batch reads; name a file")
        }
        if !settings.isUnchangedCopy(of: base) {
            try AFCommand.checkCombinations(settings)
        } else if let baseCombinationProblem {
            throw baseCombinationProblem
        }
        return (settings, parsed.positionals, ConnectionKey(parsed.options))
    }

    /// Shell operators a line copied from a script may hold, with what does their work in a
    /// batch.
    static let shellSyntax: [String: String] = {
        let pipe = "pipe the whole batch instead (af batch FILE | ...), whose output keeps line order"
        let redirect = "give the line -o FILE to save its body"
        let list = "each line is one request (--fail-fast stops the batch at its first failure)"
        return ["|": pipe, "|&": pipe, ">": redirect, ">>": redirect, "2>": redirect, "&>": redirect, "2>&1": redirect,
                "<": "give the line @FILE to send a file as the body", "&&": list, "||": list, ";": list, "&": list]
    }()

    /// The bytes the words of `shellSyntax` start with.
    private static let shellSyntaxStarts = Set(shellSyntax.keys.compactMap(\.utf8.first))

    /// The commands of other HTTP clients, which start their command lines as `af` starts its.
    static let otherClients: Set<String> = ["curl", "http", "https", "wget", "xh", "xhs"]

    /// Checks a line completely — options, items, URL, files — without sending anything, and
    /// returns what it planned and built.
    func prepare(_ words: [String]) throws(CommandFailure) -> PlannedLine {
        let (settings, positionals, connections) = try plan(words)
        let known = settings.isUnchangedCopy(of: base) ? baseOptions : nil
        // A pipe a line's item names is read as the line's transfer sends it, not while the
        // file is checked (a FIFO read then would be empty, or wait, when the line runs).
        let built = try RequestBuilder.build(positionals: positionals, settings: settings, environment: environment, options: known, holdsPipes: false)
        return PlannedLine(settings: settings, built: built, connections: connections)
    }

    /// What decides whether a line may use another's connections (and DNS cache): its own
    /// options that decide connections (`OptionSpec.decidesConnection`: trust, TLS, and where
    /// a connection goes), as given. libcurl matches a connection by host and port, so a line
    /// with other `--resolve` entries, pins or proxy must never be handed one made for
    /// another. On the same batch settings, lines that give the same such options end with
    /// the same connection settings and may share; a line that gives none has the batch's.
    /// Read from the options rather than from the settings they set, so that an option added
    /// to the table is in the key by its declaration alone.
    struct ConnectionKey: Hashable, Sendable {
        private struct Given: Hashable, Sendable {
            let id: OptionID
            let negated: Bool
            let value: String?
        }

        private let given: [Given]

        /// The key of a line whose own options are `options`; nil when none of them decides a
        /// connection (the line has the batch's connection settings).
        init?(_ options: [ParsedOption]) {
            var given: [Given] = []
            for option in options where option.spec.decidesConnection {
                given.append(Given(id: option.spec.id, negated: option.negated, value: option.value))
            }
            if given.isEmpty { return nil }
            self.given = given
        }
    }
}
