import AFEngine

/// Every option's value after the config file and the command line are applied, in order.
///
/// The values are read and written as if they were the struct's own properties
/// (`settings.quiet`); copies share one storage until one of them changes (copy on write),
/// because a request's settings are handed on several times (a line of `af batch` is planned,
/// checked and run) and a field-by-field copy of some ninety values, a third of them
/// reference-counted, costs more than the request's own header list.
@dynamicMemberLookup
struct Settings: Sendable {
    enum Pretty: String, Sendable, CaseIterable { case all, colors, format, none }
    enum Style: String, Sendable { case auto, solarized, monokai }
    enum TraceFormat: String, Sendable, CaseIterable { case text, json }

    private var storage = CopyOnWrite(Values())

    /// Every value at once (for `--debug`, which lists those that differ from the defaults).
    var values: Values { storage.values }

    /// Whether the two are copies of one another that neither has changed since (then every
    /// value is equal; otherwise they may still be equal).
    func isUnchangedCopy(of other: Settings) -> Bool {
        storage.isUnchangedCopy(of: other.storage)
    }

    /// The descriptor `-o` names, or nil for a file: 1 for `-` and standard output's other
    /// names (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`), which scripts give as they give
    /// them to curl; 2 for standard error's (`/dev/stderr`, …); N for `/dev/fd/N` or
    /// `/proc/self/fd/N` when af was started with descriptor N open (`af -o /dev/fd/3 URL
    /// 3>body`, or a descriptor a script opened with `exec 3>log`). The body is then written
    /// to the descriptor as it stands, never to the name opened anew (a regular file there
    /// was refused as existing, or would have been truncated).
    var outputStream: Int32? {
        guard let output = storage.values.output else { return nil }
        switch output {
        case "-", "/dev/stdout": return 1
        case "/dev/stderr": return 2
        default:
            guard let number = Self.descriptorNumber(named: output) else { return nil }
            return number == 1 || number == 2 || FileSystem.isInherited(number) ? number : nil
        }
    }

    /// What messages call `outputStream`: "standard output", "standard error", or the name
    /// given in quotes.
    var outputStreamName: String? {
        outputStream.map { $0 == 1 ? "standard output" : $0 == 2 ? "standard error" : "'\(Quote.argument(storage.values.output ?? ""))'" }
    }

    /// The descriptor `/dev/fd/N` or `/proc/self/fd/N` names (N in plain decimal), or nil
    /// for any other path.
    static func descriptorNumber(named path: String) -> Int32? {
        for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
            let digits = path.utf8.dropFirst(prefix.utf8.count)
            guard (1...9).contains(digits.count), digits.allSatisfy({ (48...57).contains($0) }), digits.first != 48 || digits.count == 1 else { return nil }
            return Int32(String(decoding: digits, as: UTF8.self))
        }
        return nil
    }

    /// The CA bundle (or directory) `--verify` names; nil when it says yes or no, or is not given.
    var verifyBundle: String? {
        if case .bundle(let path) = storage.values.verify { return path }
        return nil
    }

    /// Whether `--proxy=SCHEME:URL` names the proxy for `scheme` (or `all:` for every one),
    /// so that no environment variable's proxy applies.
    func namesProxy(forScheme scheme: String) -> Bool {
        storage.values.proxies.contains { $0.lowercased().hasPrefix(scheme + ":") || $0.lowercased().hasPrefix("all:") }
    }

    /// Whether a request to a URL with this scheme may become an HTTP/2 stream of a connection
    /// negotiated before it starts: over TLS, where ALPN may choose HTTP/2 unless
    /// `--http-version` keeps to HTTP/1, or with `--http-version=2-prior-knowledge`. (A plain
    /// `http://` request with `--http-version=2` asks to upgrade its own connection, which no
    /// request started before it could have shared.)
    func mayShareNegotiatedHTTP2(scheme: String) -> Bool {
        switch storage.values.httpVersion {
        case .http2PriorKnowledge: return true
        case .automatic, .http2: return scheme == "https"
        case .http1_0, .http1_1: return false
        }
    }

    subscript<T>(dynamicMember path: WritableKeyPath<Values, T>) -> T {
        get { storage.values[keyPath: path] }
        _modify { yield &storage.values[keyPath: path] }
    }

    /// The values, one per option (and a few derived while applying them).
    struct Values: Sendable {
        // Body
        var json = false
        var form = false
        var multipart = false
        var boundary: String?
        var raw: String?
        var compress = 0
        var chunked = false
        var ignoreStdin = false
        // Output
        var print: String?
        /// `--history-print`: `--print` for the exchanges before the last, with `--all`.
        var historyPrint: String?
        var headersOnly = false
        var bodyOnly = false
        var verbose = 0
        var meta = false
        var quiet = false
        /// `-qq`: warnings and notices left out too; only errors on standard error.
        var quietWarnings = false
        var all = false
        var pretty: Pretty?
        var style: Style = .auto
        var sortKeys = false
        var sortHeaders = false
        /// `json.format:false` turns JSON re-indenting off (colours stay).
        var formatJSON = true
        var indent = 4
        var formatXML = true
        var xmlIndent = 2
        var responseCharset: String?
        var responseMime: String?
        var stream = false
        var offline = false
        var curl = false
        var report = false
        var trace: TraceFormat?
        // Downloads
        var download = false
        var output: String?
        var outputDir: String?
        var createDirs = false
        var overwrite = false
        var resume = false
        var checksum: String?
        // Retries and status
        var retry = 0
        var retryDelay = 0.5
        var retryBackoff = 2.0
        var retryMaxDelay = 30.0
        var retryJitter = false
        var retryMaxTime: Double?
        var retryOn: Set<Int>?
        var retryAllMethods = false
        var timeout: Double?
        var connectTimeout: Double?
        var checkStatus = false
        var acceptStatus: [ClosedRange<Int>] = []
        // Redirects and auth
        var follow = false
        /// `--follow` or `--no-follow` was given (a download follows unless told not to).
        var followGiven = false
        var maxRedirects = 30
        var secretHeaders: [String] = []
        var locationTrusted = false
        var auth: String?
        var authType: Credentials.Scheme?
        var authCmd: String?
        var ignoreNetrc = false
        var session: String?
        var sessionReadOnly = false
        /// The sessions `--session=NAME` and `--session-read-only=NAME` named, to refuse the
        /// two naming different sessions.
        var sessionName: String?
        var sessionReadOnlyName: String?
        // TLS
        var verify = Verification.on
        var cert: String?
        var certKey: String?
        var certKeyPass: String?
        var ssl: TLSOptions.Version?
        var tlsMax: TLSOptions.Version?
        var ciphers: String?
        var pins: [String] = []
        var pinCerts: [String] = []
        var checkRevocation = false
        var crl: String?
        var trustPolicy: String?
        // Network
        var proxies: [String] = []
        var httpVersion: TransferOptions.HTTPVersion = .automatic
        var resolve: [String] = []
        var unixSocket: String?
        var interface: String?
        var ipVersion: TransferOptions.IPVersion = .any
        var https = false
        var pathAsIs = false
        var maxHeaders = 100
        var maxFilesize: Int64?
        // `af pin --file`
        var pinFile: String?
        // Many requests (`af batch`)
        var parallel = 1
        /// `--rate`: at most `count` starts per `period` seconds.
        var rate: (count: Int, period: Double)?
        var failFast = false
        var retryBudget = 20
        /// The first option of a subcommand (`af batch`, `af pin`) and how it was spelled, to
        /// refuse it anywhere else.
        var subcommandOption: (spelling: String, subcommand: String)?
        /// Options in effect as given (a later `--no-X` takes X out), for the declared conflicts.
        var given: Set<OptionID> = []
        /// Options the config file set that nothing applied after it gave again, and the file:
        /// a message that names one says where it came from (`configNote`).
        var configured: Set<OptionID> = []
        var configPath: String?
        /// The file option that names standard input (`--cert-key=/dev/stdin < key.pem`), as
        /// given: standard input is then that file, not the body, nor any other reader's.
        var standardInputOption: StandardInputOption?
        // Help
        var help = false
        var version = false
        var debug = false
    }

    /// `--style` names: af's own, and HTTPie's and Pygments' mapped to the nearest of them.
    static let styleNames: [(String, Style)] = [
        ("auto", .auto), ("solarized", .solarized), ("monokai", .monokai),
        ("pie", .auto), ("pie-dark", .auto), ("pie-light", .auto), ("default", .auto),
        ("solarized-dark", .solarized), ("solarized-light", .solarized),
        ("fruity", .monokai), ("native", .monokai), ("dracula", .monokai), ("vim", .monokai), ("paraiso-dark", .monokai), ("rrt", .monokai),
    ]

    /// Applies one option through its declared binding; later options override earlier
    /// ones, repeatable ones accumulate.
    mutating func apply(_ option: ParsedOption) throws(CommandFailure) {
        if let subcommand = option.spec.group.subcommand, self.subcommandOption == nil { self.subcommandOption = (option.spelling, subcommand) }
        if option.negated { self.given.remove(option.spec.id) } else { self.given.insert(option.spec.id) }
        // Read before written: a write would copy the shared storage of a batch line's settings.
        if self.configured.contains(option.spec.id) { self.configured.remove(option.spec.id) }
        if option.spec.readsFile { try takeStandardInput(option) }
        if option.negated, option.spec.value != .flag {
            for reset in option.spec.binding.resets { reset.restore(&self) }
            return
        }
        try option.spec.binding.apply(option, to: &self)
    }

    /// A file option's value that was given as a name of standard input, as messages show it.
    struct StandardInputOption: Sendable, CustomStringConvertible {
        let id: OptionID
        let text: String
        var description: String { text }
    }

    /// Keeps `standardInputOption` up to date with a file option's occurrence: one naming
    /// standard input takes it (a second reader is refused: there is one standard input to
    /// read), and one that replaces or undoes it gives it back.
    private mutating func takeStandardInput(_ option: ParsedOption) throws(CommandFailure) {
        let taken = self.standardInputOption
        if let taken, taken.id == option.spec.id, option.negated || !option.spec.binding.accumulates {
            self.standardInputOption = nil
        }
        guard !option.negated, let value = option.value, StandardInputItems.namesStandardInput(value) else { return }
        let text = "\(option.spelling)=\(Quote.argument(value))"
        if let other = self.standardInputOption {
            throw .usage("standard input can be read once, by one item or option; \(other.text) and \(text) both read it; save one of them to a file")
        }
        self.standardInputOption = StandardInputOption(id: option.spec.id, text: text)
    }

    /// Every value as `Settings()` has it, for `--no-NAME`.
    static let defaults = Values()

    /// `--no-session`: no session, unless `--session-read-only=NAME` named one.
    static let sessionReset = OptionBinding.Reset { settings in
        settings.sessionName = nil
        settings.session = settings.sessionReadOnlyName
    }

    /// `--no-session-read-only`: the session `--session=NAME` named, if any, written as usual.
    static let sessionReadOnlyReset = OptionBinding.Reset { settings in
        settings.sessionReadOnly = false
        settings.sessionReadOnlyName = nil
        settings.session = settings.sessionName
    }

    /// `json.indent:2,json.sort_keys:true,headers.sort:false,...` (HTTPie's `--format-options`).
    mutating func applyFormatOptions(_ value: String, _ name: String) throws(CommandFailure) {
        for entry in value.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = entry.split(byte: UInt8(ascii: ":"), maxSplits: 1).map { String($0).trimmingCharacters(in: " ") }
            guard parts.count == 2 else {
                throw .usage("invalid value '\(Quote.argument(String(entry)))' for \(name): expected KEY:VALUE such as json.indent:2")
            }
            func flag() throws(CommandFailure) -> Bool {
                switch parts[1].lowercased() {
                case "true": return true
                case "false": return false
                default: throw .usage("invalid value '\(Quote.argument(String(entry)))' for \(name): \(parts[0]) takes true or false")
                }
            }
            func number() throws(CommandFailure) -> Int {
                guard let count = Int(parts[1]), (0...16).contains(count) else {
                    throw .usage("invalid value '\(Quote.argument(String(entry)))' for \(name): \(parts[0]) takes 0 to 16")
                }
                return count
            }
            switch parts[0] {
            case "json.indent": self.indent = try number()
            case "json.sort_keys": self.sortKeys = try flag()
            case "json.format": self.formatJSON = try flag()
            case "headers.sort": self.sortHeaders = try flag()
            case "xml.format": self.formatXML = try flag()
            case "xml.indent": self.xmlIndent = try number()
            default:
                throw .usage("unknown format option '\(Quote.argument(parts[0]))' for \(name): use json.indent, json.sort_keys, json.format, headers.sort, xml.format or xml.indent")
            }
        }
    }

    // MARK: Value parsing

    /// The value of `--print` or `--history-print`: letters from `HBhbm`.
    static func printLetters(_ option: ParsedOption) throws(CommandFailure) -> String {
        let value = option.value ?? ""
        guard !value.isEmpty, value.allSatisfy({ "HBhbm".contains($0) }) else {
            throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): use the letters H, B, h, b and m")
        }
        return value
    }

    static func nonEmpty(_ value: String, _ name: String) throws(CommandFailure) -> String {
        guard !value.isEmpty else { throw .usage("\(name) needs a non-empty value") }
        return value
    }

    static func choice<T: RawRepresentable>(_ value: String, _ name: String, _ type: T.Type) throws(CommandFailure) -> T
        where T.RawValue == String
    {
        if let choice = T(rawValue: value.lowercased()) { return choice }
        let options = OptionTable.all.first { "--\($0.long)" == name || $0.short.map { "-\($0)" } == name }?.choices ?? []
        let list = options.isEmpty ? "" : ": choose \(options.joined(separator: ", "))"
        throw .usage("invalid value '\(Quote.argument(value))' for \(name)\(list)")
    }

    /// The largest count any option takes (retries, redirects, header lines).
    static let maximumCount = 1_000_000
    /// The longest duration any option takes: 2,000,000 s (about 23 days) still fits
    /// libcurl's millisecond timeouts in a 32-bit `long`.
    static let maximumSeconds = 2_000_000.0

    static func count(_ value: String, _ name: String, range: ClosedRange<Int> = 0...maximumCount) throws(CommandFailure) -> Int {
        guard let number = Int(value.trimmingCharacters(in: " ")), range.contains(number) else {
            throw .usage("invalid value '\(Quote.argument(value))' for \(name): expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A decimal number (`1.5`, `2e3`), spaces around it allowed as for counts: `Double`
    /// alone also reads hexadecimal (`0x10` was a 16 s delay), `inf` and `nan`.
    static func decimal(_ value: String) -> Double? {
        let text = value.trimmingCharacters(in: " ")
        guard text.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) else { return nil }
        return Double(text)
    }

    /// Seconds: a number, or one with a unit as durations are often written (`500ms`, `30s`,
    /// `2m`, `1h`).
    static func seconds(_ value: String, _ name: String) throws(CommandFailure) -> Double {
        var text = value.trimmingCharacters(in: " ").lowercased()
        var scale = 1.0
        for (suffix, factor) in [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)] where text.hasSuffix(suffix) {
            text.removeLast(suffix.count)
            scale = factor
            break
        }
        guard let plain = decimal(text), case let number = plain * scale, number >= 0, number <= maximumSeconds else {
            throw .usage("invalid value '\(Quote.argument(value))' for \(name): expected a number of seconds from 0 to \(Int(maximumSeconds))")
        }
        return number
    }

    static func positiveSeconds(_ value: String, _ name: String) throws(CommandFailure) -> Double {
        let number = try seconds(value, name)
        guard number > 0 else { throw .usage("invalid value '\(Quote.argument(value))' for \(name): expected more than 0 seconds") }
        return number
    }

    /// A `--resolve` entry as libcurl reads it: `[+]HOST:PORT:ADDRESS[,ADDRESS…]` (an IPv6
    /// address bare or in brackets), or `-HOST:PORT` to drop one. Checked here, so that a typo
    /// is a usage error before anything is sent rather than a libcurl failure after.
    static func resolveEntry(_ value: String, _ name: String) throws(CommandFailure) -> String {
        func invalid(_ problem: String) -> CommandFailure {
            .usage("invalid value '\(Quote.argument(value))' for \(name): \(problem); expected HOST:PORT:ADDRESS, such as example.org:443:127.0.0.1")
        }
        var rest = Substring(value)
        let removes = rest.hasPrefix("-")
        let sign = removes || rest.hasPrefix("+") ? String(rest.prefix(1)) : ""
        rest = rest.dropFirst(sign.count)
        // libcurl takes a host name (or `*`) here; an IPv6 address is never looked up anyway.
        guard !rest.hasPrefix("[") else { throw invalid("the host is an IP address, which is never looked up") }
        guard let (host, afterHost) = String(rest).splitOnce(byte: UInt8(ascii: ":")) else { throw invalid("no port") }
        rest = afterHost
        guard !host.isEmpty else { throw invalid("no host") }
        // libcurl compares the entry with the URL's host, which is in its ASCII form (IDNA).
        let entry = host.utf8.allSatisfy({ $0 < 0x80 }) ? value : sign + IDNA.comparable(String(host)) + ":" + afterHost
        let portText: Substring
        let addresses: Substring
        if let (before, after) = String(rest).splitOnce(byte: UInt8(ascii: ":")) {
            (portText, addresses) = (before, after)
        } else {
            (portText, addresses) = (rest, "")
        }
        guard PortNumber.parse(portText) != nil else { throw invalid(PortNumber.refusal(portText)) }
        if removes { return entry }
        guard !addresses.isEmpty else { throw invalid("no address") }
        for address in addresses.split(byte: UInt8(ascii: ","), omittingEmptySubsequences: false)
        where URLBuilder.addressFamily(of: String(address)) == nil {
            throw invalid("'\(Quote.argument(String(address)))' is not an IP address")
        }
        return entry
    }

    /// `10/s`, `100/m`, `5/h`: a count of starts per period.
    static func rate(_ value: String, _ name: String) throws(CommandFailure) -> (count: Int, period: Double) {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        let periods: [Substring: Double] = ["s": 1, "m": 60, "h": 3600]
        guard parts.count == 2, let count = Int(parts[0]), (1...maximumCount).contains(count), let period = periods[parts[1]] else {
            throw .usage("invalid value '\(Quote.argument(value))' for \(name): expected N/s, N/m or N/h with N from 1 to \(maximumCount), such as 10/s")
        }
        return (count, period)
    }

    /// `200-299,404` as ranges.
    static func statusList(_ value: String, _ name: String) throws(CommandFailure) -> [ClosedRange<Int>] {
        var ranges: [ClosedRange<Int>] = []
        for part in value.split(separator: ",", omittingEmptySubsequences: false) {
            // A class as people write it: 5xx is 500-599.
            let word = part.trimmingCharacters(in: " ").lowercased().utf8
            if word.count == 3, let digit = word.first, (49...57).contains(digit), word.dropFirst().allSatisfy({ $0 == UInt8(ascii: "x") }) {
                let low = Int(digit - 48) * 100
                ranges.append(low...(low + 99))
                continue
            }
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: " ")) }
            guard (1...2).contains(bounds.count), let low = bounds[0], let high = bounds.last ?? nil, low <= high,
                  (100...999).contains(low), (100...999).contains(high)
            else {
                throw .usage("invalid value '\(Quote.argument(value))' for \(name): expected statuses, ranges and classes such as 200-299,404 or 5xx")
            }
            ranges.append(low...high)
        }
        return ranges
    }

    /// `1048576`, `512K`, `10M`, `2G`; also as af prints sizes (`10MiB`, `1.5 GiB`: a
    /// fraction with a unit) and with a `B` (`10MB`). K, M, G and T count in 1024s, as curl's.
    static func size(_ value: String, _ name: String) throws(CommandFailure) -> Int64 {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        let invalid = CommandFailure.usage("invalid value '\(Quote.argument(value))' for \(name): expected a size such as 1048576, 512K, 10M or 1.5G")
        var digits = value.uppercased().trimmingCharacters(in: " ")
        var multiplier: Int64 = 1
        if digits.hasSuffix("IB") {
            digits.removeLast(2)
            guard let last = digits.last, units[last] != nil else { throw invalid }
        } else if digits.hasSuffix("B") {
            digits.removeLast()
        }
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits.removeLast()
            digits = digits.trimmingCharacters(in: " ")
        }
        let bytes: Int64
        if let number = Int64(digits), number >= 0 {
            let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
            guard !overflow else {
                throw .usage("invalid value '\(Quote.argument(value))' for \(name): sizes go up to \(Int64.max) bytes (8E)")
            }
            bytes = product
        } else {
            // A fraction only with a unit, in plain decimal digits (Double would read hexadecimal).
            let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
            guard multiplier > 1, parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                  parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
                  let number = Double(digits), case let product = (number * Double(multiplier)).rounded(), product < 0x1p63
            else { throw invalid }
            bytes = Int64(product)
        }
        return bytes
    }
}

/// What `--verify` (and `-k`) ask of the server's certificate.
enum Verification: Sendable, Hashable {
    /// Verified against the system's roots, or a CA bundle the environment names (the default,
    /// `--verify=yes`).
    case on
    /// Not verified (`--verify=no`, `-k`).
    case off
    /// Verified against this CA bundle or hashed directory (`--verify=PATH`).
    case bundle(String)
}
