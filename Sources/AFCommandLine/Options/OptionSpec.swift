/// One command-line option, declared once; `--help`, the man page and the shell
/// completions are all generated from these declarations.
public struct OptionSpec: Sendable {
    /// Whether and how an option takes a value.
    public enum Value: Sendable, Equatable {
        /// A flag; with `negatable`, `--no-NAME` switches it off.
        case flag
        /// A value, as `--name=VALUE` or `--name VALUE` (`-x VALUE` for a short form).
        case required(String)
        /// A value only in the `--name=VALUE` form.
        case optional(String)
    }

    /// What a shell should offer for the value.
    public enum Completion: Sendable, Equatable {
        case none
        case file
        case directory
        case choices([String])
    }

    /// The stable identity used by the parser and settings.
    public let id: OptionID
    /// The long name without `--`.
    public let long: String
    /// The one-letter form, when there is one.
    public let short: Character?
    /// Whether and how the option takes a value.
    public let value: Value
    /// The `--help` and man page section.
    public let group: OptionGroup
    /// One line for `--help`, with the default and range the binding declares.
    public var help: String { helpProse + binding.note }
    /// A paragraph for the man page (defaults to `help`).
    public var details: String { (detailsProse ?? helpProse) + binding.note }
    /// The text as written in the table; the notes are added only when docs are shown,
    /// not on every start.
    private let helpProse: String
    private let detailsProse: String?
    /// What shells complete the value with.
    public let completion: Completion
    /// The value's type, default and where it goes in the settings.
    let binding: OptionBinding
    /// Whether the option decides which connections a request may use: how the server is
    /// trusted, the TLS it speaks, or where a connection goes (address, proxy, socket,
    /// interface). A line of `af batch` that gives such an option of its own never uses a
    /// connection made under other settings. Every option of the TLS group does; others say so.
    public let decidesConnection: Bool
    /// Whether a `--no-NAME` form undoes the option (a config default, a batch-wide option, an
    /// earlier occurrence): a flag is switched off, an option with a value goes back to its
    /// default, as in HTTPie.
    public var negatable: Bool { value == .flag ? ![.help, .version].contains(id) : !binding.resets.isEmpty }

    init(
        _ id: OptionID, _ long: String, short: Character? = nil, value: Value = .flag, group: OptionGroup,
        help: String, details: String? = nil, completion: Completion = .none, decidesConnection: Bool? = nil, binding: OptionBinding
    ) {
        self.binding = binding
        self.decidesConnection = decidesConnection ?? (group == .tls)
        self.id = id
        self.long = long
        self.short = short
        self.value = value
        self.group = group
        helpProse = help
        detailsProse = details
        self.completion = completion
    }

    /// `--name=VALUE` or `--name` as shown in help.
    public var usage: String {
        switch value {
        case .flag: return "--\(long)"
        case .required(let name): return "--\(long)=\(name)"
        case .optional(let name): return "--\(long)[=\(name)]"
        }
    }

    /// Whether the value names a file or directory, where a leading `~` is the home
    /// directory (`HomePath`).
    var takesPath: Bool { completion == .file || completion == .directory }

    /// Whether the value names a file af (or libcurl, or OpenSSL) reads: a path that is not
    /// one af writes (`-o`, `--output-dir`).
    var readsFile: Bool { takesPath && id != .output && id != .outputDir }

    /// The fixed set of values, when there is one.
    public var choices: [String] {
        if case .choices(let values) = completion { return values }
        return []
    }
}

/// Option groups, in the order `--help` shows them.
public enum OptionGroup: String, Sendable, CaseIterable {
    case body = "Request body"
    case output = "Output"
    case downloads = "Downloads and output files"
    case retries = "Retries, timeouts and exit status"
    case redirectsAndAuth = "Redirects, authentication and sessions"
    case tls = "TLS and trust"
    case network = "Network"
    case batch = "Many requests (af batch)"
    case pin = "Certificates (af pin)"
    case configuration = "Help and configuration"

    /// The subcommand the group's options belong to; elsewhere they are usage errors.
    public var subcommand: String? {
        switch self {
        case .batch: return "batch"
        case .pin: return "pin"
        default: return nil
        }
    }

    /// One example shown under the group in `--help`.
    public var example: String {
        switch self {
        case .body: return "af post :8080/users name=ada age:=36 photo@face.png"
        case .output: return "af -v --pretty=all get example.org/json"
        case .downloads: return "af -d -c --checksum=sha256:HEX example.org/big.iso"
        case .retries: return "af --retry=3 --check-status get api.example.org/health"
        case .redirectsAndAuth: return "af -F -a ada get example.org/private"
        case .tls: return "af --pin=sha256//BASE64= get https://api.example.org"
        case .network: return "af --resolve=api.example.org:443:127.0.0.1 get https://api.example.org"
        case .batch: return "af batch --parallel=8 --check-status --retry=2 endpoints.txt"
        case .pin: return "af pin --file server.pem"
        case .configuration: return "af --no-follow get example.org   # undo a config default"
        }
    }
}
