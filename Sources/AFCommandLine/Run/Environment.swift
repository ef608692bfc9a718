@_spi(Locking) import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Everything a run reads from its surroundings, injected so tests can run af in-process.
public struct Environment: Sendable {
    /// The values, shared by copies until one changes: every request of a batch carries its
    /// environment.
    private struct Values: Sendable {
        var arguments: [String]
        var variables: [String: String]
        var derived: Derived
        var stdin: Int32
        var stdout: Int32
        var stderr: Int32
        var stdinIsTerminal: Bool
        var stdoutIsTerminal: Bool
        var stderrIsTerminal: Bool
        var terminalWidth: Int
        var undecodableArgument: String?
        var noticeDelays: NoticeDelays
        var processors: Int?
    }

    private var storage: CopyOnWrite<Values>

    /// The arguments after the program name.
    public var arguments: [String] {
        get { storage.values.arguments }
        set { storage.values.arguments = newValue }
    }
    /// Environment variables (`AF_CONFIG_DIR`, `NO_COLOR`, `NETRC`, proxies, …).
    public var variables: [String: String] {
        get { storage.values.variables }
        set {
            storage.values.variables = newValue
            storage.values.derived = Derived(newValue)
        }
    }
    /// The variable whose proxy a request of `scheme` goes through when no option names one
    /// (as libcurl reads them: `https_proxy` or `HTTPS_PROXY`, `http_proxy` in lower case
    /// only, then `all_proxy` or `ALL_PROXY`), and its value; nil when none is set.
    func proxyVariable(forScheme scheme: String) -> (name: String, value: String)? {
        let proxies = derived.proxies
        if scheme == "https", let value = proxies.https {
            return (variables["https_proxy"] != nil ? "https_proxy" : "HTTPS_PROXY", value)
        }
        if scheme == "http", let value = proxies.http { return ("http_proxy", value) }
        if let value = proxies.all { return (variables["all_proxy"] != nil ? "all_proxy" : "ALL_PROXY", value) }
        return nil
    }

    /// What every request reads from `variables`, looked up once (a batch builds two
    /// requests per line).
    var derived: Derived { storage.values.derived }

    struct Derived: Sendable {
        let proxies: ProxyEnvironment
        let temporaryDirectory: String
        /// `TERM=dumb`: a terminal that takes text and line breaks but no escape sequences
        /// (Emacs' shell, some CI logs): no colours, and no progress drawn over itself.
        let dumbTerminal: Bool
        /// No colours unless asked for with `--pretty`: `NO_COLOR` set and not empty
        /// (no-color.org), or a dumb terminal.
        let noColor: Bool
        /// The CA bundle the variables name, and which variable (`TrustConfiguration`).
        let caBundle: (variable: String, path: String)?
        /// Why that bundle cannot be read (nil: it can), once an https request has asked.
        private let caBundleCheck: Protected<String??>?

        init(_ variables: [String: String]) {
            proxies = ProxyEnvironment(variables)
            caBundle = TrustConfiguration.bundleVariables.lazy.compactMap { name in
                variables[name].flatMap { $0.isEmpty ? nil : (name, $0) }
            }.first
            caBundleCheck = caBundle == nil ? nil : Protected(nil)
            temporaryDirectory = variables["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            dumbTerminal = variables["TERM"] == "dumb"
            noColor = dumbTerminal || !(variables["NO_COLOR"] ?? "").isEmpty
        }

        /// Why the CA bundle the variables name cannot be used, or nil when it can (or none
        /// is named): looked at when an https request first asks, then kept, since a batch
        /// makes a trust configuration for every line. `SSL_CERT_DIR` may list directories,
        /// as OpenSSL reads it: one that exists is enough.
        func caBundleProblem() -> String? {
            guard let (variable, path) = caBundle, let check = caBundleCheck else { return nil }
            return check.write { known -> String? in
                if let known { return known }
                var problem: String?
                if !(variable == "SSL_CERT_DIR" && FileIO.isCertificateDirectory(path)),
                   case .unreadable(let reason) = FileReading.readability(path) {
                    problem = reason
                }
                known = .some(problem)
                return problem
            }
        }
    }

    /// The width in columns of the terminal `fd` is on, read now (a terminal can be resized
    /// while af runs); nil when `fd` is no terminal or it does not say.
    static func columns(of fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Whether progress may be drawn on standard error: a terminal that is not dumb.
    var drawsProgress: Bool { stderrIsTerminal && !derived.dumbTerminal }
    /// File descriptor the request body may be read from.
    public var stdin: Int32 {
        get { storage.values.stdin }
        set { storage.values.stdin = newValue }
    }
    /// File descriptor for the response.
    public var stdout: Int32 {
        get { storage.values.stdout }
        set { storage.values.stdout = newValue }
    }
    /// File descriptor for messages, progress and traces.
    public var stderr: Int32 {
        get { storage.values.stderr }
        set { storage.values.stderr = newValue }
    }
    /// Whether stdin is a terminal (then it is never read as a body).
    public var stdinIsTerminal: Bool {
        get { storage.values.stdinIsTerminal }
        set { storage.values.stdinIsTerminal = newValue }
    }
    /// Whether stdout is a terminal (then output is formatted and coloured).
    public var stdoutIsTerminal: Bool {
        get { storage.values.stdoutIsTerminal }
        set { storage.values.stdoutIsTerminal = newValue }
    }
    /// Whether stderr is a terminal (then a progress bar may be drawn).
    public var stderrIsTerminal: Bool {
        get { storage.values.stderrIsTerminal }
        set { storage.values.stderrIsTerminal = newValue }
    }
    /// Terminal width in columns, when stderr or stdout is a terminal.
    public var terminalWidth: Int {
        get { storage.values.terminalWidth }
        set { storage.values.terminalWidth = newValue }
    }
    /// The first argument that is not UTF-8 text, its other bytes shown as `\xNN`: af
    /// refuses it rather than send U+FFFD where the user gave a byte.
    public var undecodableArgument: String? {
        get { storage.values.undecodableArgument }
        set { storage.values.undecodableArgument = newValue }
    }

    /// How long af lets a wait last before it says on standard error what it waits for.
    public var noticeDelays: NoticeDelays {
        get { storage.values.noticeDelays }
        set { storage.values.noticeDelays = newValue }
    }

    /// How many processors af may run on (its CPU affinity), which decides how many threads
    /// `af batch` runs its requests on; asked of the system unless given.
    public var processors: Int {
        get { storage.values.processors ?? ResourceLimits.processors() }
        set { storage.values.processors = newValue }
    }

    /// Collects the surroundings; defaults suit a test that reads nothing and is not on a terminal.
    public init(
        arguments: [String],
        variables: [String: String] = [:],
        stdin: Int32 = 0,
        stdout: Int32 = 1,
        stderr: Int32 = 2,
        stdinIsTerminal: Bool = false,
        stdoutIsTerminal: Bool = false,
        stderrIsTerminal: Bool = false,
        terminalWidth: Int = 80,
        undecodableArgument: String? = nil,
        noticeDelays: NoticeDelays = NoticeDelays(),
        processors: Int? = nil
    ) {
        storage = CopyOnWrite(Values(
            arguments: arguments, variables: variables, derived: Derived(variables), stdin: stdin, stdout: stdout, stderr: stderr,
            stdinIsTerminal: stdinIsTerminal, stdoutIsTerminal: stdoutIsTerminal, stderrIsTerminal: stderrIsTerminal,
            terminalWidth: terminalWidth, undecodableArgument: undecodableArgument, noticeDelays: noticeDelays,
            processors: processors
        ))
    }

    /// The real process environment.
    public static func process(arguments: [String]) -> Environment {
        var variables: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let (name, value) = text.splitOnce(byte: UInt8(ascii: "=")) {
                variables[String(name)] = String(value)
            }
            pointer += 1
        }
        let width = Self.columns(of: 2) ?? Self.columns(of: 1) ?? 80
        // `arguments` were decoded with U+FFFD for what is not UTF-8; the bytes say which.
        var undecodable: String?
        for index in 1..<max(1, Int(CommandLine.argc)) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
            if let shown = Quote.invalidUTF8(bytes) {
                undecodable = shown
                break
            }
        }
        return Environment(
            arguments: Array(arguments.dropFirst()),
            variables: variables,
            stdinIsTerminal: isatty(0) == 1,
            stdoutIsTerminal: isatty(1) == 1,
            stderrIsTerminal: isatty(2) == 1,
            terminalWidth: width,
            undecodableArgument: undecodable
        )
    }

    /// The user's home directory.
    public var homeDirectory: String {
        if let home = variables["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
        return "/"
    }

    /// The directory holding `config.json` and `sessions/`.
    public var configDirectory: String {
        if let explicit = variables["AF_CONFIG_DIR"], !explicit.isEmpty { return explicit }
        return configHome + "/af"
    }

    /// The home directory when the configuration directory is made under it (`~/.config/af`),
    /// which af never makes itself: a `HOME` that is not there (`/nonexistent`, as system
    /// accounts have) is not a place to keep files. Nil when `AF_CONFIG_DIR` or
    /// `XDG_CONFIG_HOME` names where they go, which is made as the XDG specification asks.
    var homeHoldingConfig: String? {
        if let explicit = variables["AF_CONFIG_DIR"], !explicit.isEmpty { return nil }
        if let xdg = variables["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return nil }
        return homeDirectory
    }

    /// Where programs keep their configuration directories: `$XDG_CONFIG_HOME`, else
    /// `~/.config`. The XDG Base Directory specification: a relative path there is invalid
    /// and ignored (it would put sessions wherever af happens to run).
    var configHome: String {
        if let xdg = variables["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg }
        return homeDirectory + "/.config"
    }

    /// A directory for temporary files.
    public var temporaryDirectory: String { derived.temporaryDirectory }
}

/// How long af lets a wait last before it says once on standard error what it waits for, so
/// that a CI log shows where a job is held; tests wait less.
public struct NoticeDelays: Sendable {
    /// A server that has taken a request and not answered it (`SilenceNotice`).
    public var silentServer: Double
    /// Input af reads that gives nothing, not even its end: standard input read as a body or
    /// as `af batch -`'s lines, an `--auth-cmd` command's token (`StandardInput.WaitNotice`);
    /// and a session file another af is writing.
    public var silentInput: Double

    /// The defaults: 30 seconds for a server; 10 for input, long enough for any command or
    /// pipe that is merely slow, short enough for a person watching a CI log.
    public init(silentServer: Double = 30, silentInput: Double = 10) {
        self.silentServer = silentServer
        self.silentInput = silentInput
    }
}
