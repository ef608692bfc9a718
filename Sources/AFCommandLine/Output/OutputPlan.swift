import AFEngine

/// What a run prints and how, decided once from the settings and the terminal, and not
/// changed after: a class, so that handing it to a line's execution and printers (four
/// times a request in a batch, whose lines share one) is one reference count rather than a
/// copy of every theme, string and setting it holds.
final class OutputPlan: Sendable {
    /// Letters from `HBhbm`.
    let sections: Sections
    /// Print every hop of a followed redirect chain.
    let all: Bool
    /// What is printed of those hops before the last (`--history-print`, else `sections`).
    let historySections: Sections
    let head: HeadRenderer
    let body: BodyStyle
    /// Heads (and notes) go to standard error: downloads keep standard output clean.
    let headsToStandardError: Bool
    /// What is held until the request ends, because a retry may discard an attempt.
    let hold: Hold

    /// What output waits for the request to end.
    enum Hold: Sendable {
        /// Nothing: no attempt is retried.
        case nothing
        /// An answer of another status than 2xx (a 503 that is retried), the rest printed
        /// as it comes (`--stream`).
        case unsuccessfulAnswers
        /// Every answer.
        case everything

        /// Whether an answer with this status is held.
        func holds(_ status: Int) -> Bool {
            switch self {
            case .nothing: false
            case .unsuccessfulAnswers: !(200...299).contains(status)
            case .everything: true
            }
        }
    }

    init(
        sections: Sections, all: Bool, historySections: Sections, head: HeadRenderer, body: BodyStyle,
        headsToStandardError: Bool, hold: Hold
    ) {
        self.sections = sections
        self.all = all
        self.historySections = historySections
        self.head = head
        self.body = body
        self.headsToStandardError = headsToStandardError
        self.hold = hold
    }

    func shows(_ section: Character) -> Bool { sections.contains(section) }

    /// This plan with no section of the exchange printed (`--report` writes its own record).
    func printingNoSections() -> OutputPlan {
        OutputPlan(
            sections: [], all: all, historySections: historySections, head: head, body: body,
            headsToStandardError: headsToStandardError, hold: hold
        )
    }

    /// A set of the letters `HBhbm`, as bits: it is asked about several times for every
    /// response, and a `Set<Character>` hashed the letter each time.
    struct Sections: Equatable, Sendable, ExpressibleByArrayLiteral {
        private var bits: UInt8 = 0

        /// The letters of `letters` (`--print` accepts no others).
        init(_ letters: String) {
            for letter in letters { insert(letter) }
        }

        init(arrayLiteral letters: Character...) {
            for letter in letters { insert(letter) }
        }

        private static func bit(_ letter: Character) -> UInt8 {
            switch letter {
            case "H": 1
            case "B": 2
            case "h": 4
            case "b": 8
            case "m": 16
            default: 0
            }
        }

        func contains(_ letter: Character) -> Bool { bits & Self.bit(letter) != 0 }
        mutating func insert(_ letter: Character) { bits |= Self.bit(letter) }
        mutating func remove(_ letter: Character) { bits &= ~Self.bit(letter) }
        var isEmpty: Bool { bits == 0 }
    }

    static func make(settings: Settings, environment: Environment) -> OutputPlan {
        // A download keeps standard output clean, so its heads go to standard error; offline
        // there is no download, and the request is the output.
        let headsToStandardError = settings.download && !settings.offline
        let terminal = headsToStandardError ? environment.stderrIsTerminal : environment.stdoutIsTerminal
        var sections: Sections
        if let print = settings.print {
            sections = Sections(print)
        } else if settings.verbose >= 2 {
            sections = Sections("HBhbm")
        } else if settings.verbose == 1 {
            sections = Sections("HBhb")
        } else if settings.headersOnly || settings.bodyOnly {
            sections = Sections((settings.headersOnly ? "h" : "") + (settings.bodyOnly ? "b" : ""))
        } else if settings.offline {
            sections = Sections("HB")
        } else if settings.download {
            sections = Sections("h")
        } else if settings.output != nil {
            // The body goes to the file (or, with `-o -`, is standard output's only content).
            sections = []
        } else {
            sections = environment.stdoutIsTerminal ? Sections("hb") : Sections("b")
        }
        if settings.meta { sections.insert("m") }
        if settings.quiet && !settings.download { sections = [] }
        if settings.download {
            sections.remove("b")
            if settings.quiet { sections = [] }
        }

        var historySections = settings.historyPrint.map { Sections($0) } ?? sections
        if settings.quiet { historySections = [] }

        let explicit = settings.pretty
        let pretty = explicit ?? (terminal ? .all : .none)
        var colors = pretty == .all || pretty == .colors
        if environment.derived.noColor, explicit != .all, explicit != .colors { colors = false }
        let format = (pretty == .all || pretty == .format) && settings.formatJSON
        let theme = colors ? Theme.named(settings.style) : nil
        let bodyStyle = BodyStyle(
            format: format, theme: theme, indent: settings.indent, sortKeys: settings.sortKeys,
            terminal: environment.stdoutIsTerminal, stream: settings.stream, responseCharset: settings.responseCharset,
            responseMime: settings.responseMime, formatXML: settings.formatXML, xmlIndent: settings.xmlIndent
        )
        return OutputPlan(
            sections: sections,
            all: settings.all,
            historySections: historySections,
            head: HeadRenderer(theme: theme, terminal: terminal, sortHeaders: settings.sortHeaders),
            body: bodyStyle,
            headsToStandardError: headsToStandardError,
            hold: settings.retry == 0 && settings.authCmd == nil ? .nothing : settings.stream ? .unsuccessfulAnswers : .everything
        )
    }
}
