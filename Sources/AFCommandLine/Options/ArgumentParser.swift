/// An option found on the command line, with its value and where it was.
struct ParsedOption: Sendable {
    var spec: OptionSpec
    var value: String?
    /// `--no-NAME` was used.
    var negated: Bool
    /// How the user spelled it, for messages (`--timeout`, `-t`).
    var spelling: String
    /// Which argument the value was read from: the option's own (`--auth=X`, `-aX`) or the
    /// next one (`-a X`); nil without a value.
    var valueArgument: Int? = nil
}

/// A positional argument (method, URL or request item) and its position.
struct Positional: Sendable, Equatable {
    var text: String
    var index: Int
    /// The option that takes no value in af right before it, when there was one: a curl
    /// user's value for that letter lands here.
    var follows: FlagBefore? = nil
}

/// An option without a value, as the parser met it right before a positional.
struct FlagBefore: Sendable, Equatable {
    /// The letter, when it was typed as one (`x` of `-x`); nil for `--json`.
    var letter: Character?
    /// Its long name as typed (`json`), or the letter's (`compress`).
    var long: String

    /// `-x (--compress)`, or `--json`.
    var described: String { letter.map { "-\($0) (--\(long))" } ?? "--\(long)" }
}

/// The command line split into options and positionals; options may appear anywhere and
/// `--` ends them.
struct ParsedArguments: Sendable {
    var options: [ParsedOption] = []
    var positionals: [Positional] = []

    /// Splits `arguments`. `source` names where they came from in messages (a config file).
    /// With `home`, the value of an option that names a file or directory has a leading `~`
    /// expanded (`HomePath`), as the shell would have had it been a word of its own.
    static func parse(_ arguments: [String], source: String? = nil, home: String? = nil) throws(CommandFailure) -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var optionsEnded = false
        let origin = source.map { " in \($0)" } ?? ""
        // The flag the previous argument ended with, for the positional after it.
        var flagBefore: FlagBefore?
        func valued(_ spec: OptionSpec, _ value: String) -> String {
            guard let home, spec.takesPath else { return value }
            return HomePath.expand(value, home: home)
        }
        // An unknown option's error, `typed` being the word without its `prefix`: the last word
        // of a CRLF script's line (`--follow\r` is no typo of --follow) and a word with a
        // no-break space in it (`--follow\u{A0}-v`) are named before the usual hint.
        func unknown(_ typed: Substring, prefix: String, otherwise message: () -> String) -> CommandFailure {
            if source == nil, index == arguments.count - 1, let crlf = CarriageReturn.lastWordMessage(arguments, valueOf: nil) { return .usage(crlf) }
            if let (quoted, advice) = InvisibleCharacters.inOption(typed, prefix: prefix) { return .usage("unknown option '\(Quote.argument(quoted))'\(origin)\(advice)") }
            return .usage(message())
        }
        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            if !optionsEnded, let message = TypographicPunctuation.dashedOptionMessage(argument, origin: origin) { throw .usage(message) }
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                result.positionals.append(Positional(text: argument, index: index, follows: flagBefore))
                flagBefore = nil
                continue
            }
            flagBefore = nil
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let split = body.splitOnce(byte: UInt8(ascii: "="))
                let name = String(split?.before ?? body)
                let inlineValue = split.map { String($0.after) }
                var negated = false
                var spec = OptionTable.option(long: name)
                if spec == nil, name.hasPrefix("no-"), let base = OptionTable.option(long: String(name.dropFirst(3))), base.negatable {
                    spec = base
                    negated = true
                }
                guard let spec else {
                    throw unknown(body, prefix: "--") {
                        let hint = name == "request" ? Suggestions.requestHint(method: inlineValue ?? arguments.dropFirst(index + 1).first)
                            : name.utf8.count > Quote.limit ? Suggestions.noHint : Suggestions.hint(for: name)
                        return "unknown option '--\(Quote.argument(name))'\(origin)\(hint)"
                    }
                }
                let spelling = "--\(Quote.argument(name))"
                if negated {
                    guard inlineValue == nil else { throw .usage("option '\(spelling)'\(origin) takes no value") }
                    result.options.append(ParsedOption(spec: spec, value: nil, negated: true, spelling: spelling))
                    continue
                }
                switch spec.value {
                case .flag:
                    guard inlineValue == nil else { throw .usage("option '\(spelling)'\(origin) takes no value") }
                    result.options.append(ParsedOption(spec: spec, value: nil, negated: false, spelling: spelling))
                    flagBefore = FlagBefore(letter: nil, long: name)
                case .optional:
                    result.options.append(ParsedOption(spec: spec, value: inlineValue.map { valued(spec, $0) }, negated: false, spelling: spelling, valueArgument: inlineValue.map { _ in index }))
                case .required(let valueName):
                    if let inlineValue {
                        result.options.append(ParsedOption(spec: spec, value: valued(spec, inlineValue), negated: false, spelling: spelling, valueArgument: index))
                    } else {
                        guard index + 1 < arguments.count else {
                            throw .usage("option '\(spelling)'\(origin) needs a value: \(spelling.hasPrefix("--") ? "\(spelling)=\(valueName)" : "\(spelling) \(valueName)")\(Self.choiceList(spec))")
                        }
                        index += 1
                        try Self.refuseOptionAsValue(arguments[index], for: spec, spelling: spelling, valueName: valueName, origin: origin)
                        result.options.append(ParsedOption(spec: spec, value: valued(spec, arguments[index]), negated: false, spelling: spelling, valueArgument: index))
                    }
                }
                continue
            }
            // A long option's name after one dash (`-follow`, `-output=x`, `-no-follow`) is a
            // typo, not the cluster it spells: `-f -o llow` would write a file called `llow`.
            if let name = Suggestions.longNameAfterOneDash(argument.dropFirst()) {
                throw .usage("unknown option '-\(name)'\(origin); did you mean '--\(name)'? (one dash begins one-letter options)")
            }
            // A cluster of short options: -vF, -pHb, -o FILE, -xx.
            var letters = Substring(argument.dropFirst())
            while let letter = letters.first {
                letters = letters.dropFirst()
                guard let spec = OptionTable.option(short: letter) else {
                    throw unknown(argument.dropFirst(), prefix: "-") {
                        // curl's -X takes the method attached (-XPUT) or as the next word.
                        let hint = letter == "X" ? Suggestions.requestHint(method: letters.isEmpty ? arguments.dropFirst(index + 1).first : String(letters.drop { $0 == "=" }))
                            : Suggestions.curlClusterHint(argument.dropFirst()) ?? Suggestions.shortHint(for: letter)
                        return "unknown option '-\(letter)'\(origin)\(hint)"
                    }
                }
                let spelling = "-\(letter)"
                switch spec.value {
                case .flag, .optional:
                    result.options.append(ParsedOption(spec: spec, value: nil, negated: false, spelling: spelling))
                    flagBefore = letters.isEmpty ? FlagBefore(letter: letter, long: spec.long) : nil
                case .required(let valueName):
                    var value = String(letters)
                    letters = ""
                    if value.hasPrefix("=") { value.removeFirst() }
                    if value.isEmpty {
                        guard index + 1 < arguments.count else {
                            throw .usage("option '\(spelling)'\(origin) needs a value: \(spelling.hasPrefix("--") ? "\(spelling)=\(valueName)" : "\(spelling) \(valueName)")\(Self.choiceList(spec))")
                        }
                        index += 1
                        value = arguments[index]
                        try Self.refuseOptionAsValue(value, for: spec, spelling: spelling, valueName: valueName, origin: origin)
                    }
                    result.options.append(ParsedOption(spec: spec, value: valued(spec, value), negated: false, spelling: spelling, valueArgument: index))
                }
            }
        }
        if source == nil, let option = result.options.last, option.valueArgument == arguments.count - 1,
           let message = CarriageReturn.lastWordMessage(arguments, valueOf: option) {
            throw .usage(message)
        }
        return result
    }
}

extension ParsedArguments {
    /// An option's value taken from the next argument, when that argument is one of af's
    /// options (`af -o --follow URL`, `af --session -v URL`, `af -a -v URL`): the value was
    /// left out, and the option after it would have become a file called `--follow`, a
    /// session of that name or a user name. A value that does start so is written with `=`
    /// (`--output=--follow`), as HTTPie's parser wants it too. The word is not repeated for
    /// an option whose value is a secret (`-a -bob:pw` may be a password).
    static func refuseOptionAsValue(_ word: String, for spec: OptionSpec, spelling: String, valueName: String, origin: String) throws(CommandFailure) {
        guard isOptionWord(word) else { return }
        let long = spelling.hasPrefix("--")
        let form = long ? "\(spelling)=\(valueName)" : "\(spelling) \(valueName)"
        if OptionTable.secretOptions.contains(spec.id) {
            let dash = long ? ", which takes a value that starts with '-' too" : ", or \(spelling)=\(valueName) for a value that starts with '-'"
            throw .usage("option '\(spelling)'\(origin) needs a value, not the option after it: write \(form)\(dash)")
        }
        throw .usage("option '\(spelling)'\(origin) needs a value, not the option '\(Quote.argument(word))' after it: write \(form)"
            + " (\(spelling)=\(Quote.shellWord(word)) if that is the value)")
    }

    /// Whether `word` reads as af's options: `--NAME`, `--NAME=VALUE` or `--no-NAME` of a long
    /// option af has, or a cluster of its letters (`-v`, `-vF`, `-ofile`), each known up to
    /// one that takes the rest as its value. `-` alone, `--` and `-5` are not.
    static func isOptionWord(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.utf8.count >= 2 else { return false }
        if word.hasPrefix("--") {
            let body = word.dropFirst(2)
            let name = String(body.splitOnce(byte: UInt8(ascii: "="))?.before ?? body)
            return namesLongOption(name)
        }
        for letter in word.dropFirst() {
            guard let spec = OptionTable.option(short: letter) else { return false }
            if case .required = spec.value { return true }
        }
        return true
    }

    /// Whether `letters`, read as a cluster of short options, reaches one whose value is a
    /// secret (`abob:pw` is `-a bob:pw`): the letters before it are flags, and it takes the rest.
    static func clusterEndsInSecret(_ letters: some StringProtocol) -> Bool {
        for letter in letters {
            guard let spec = OptionTable.option(short: letter) else { return false }
            if case .required = spec.value { return OptionTable.secretOptions.contains(spec.id) }
        }
        return false
    }

    /// Whether `name` is one of af's long options or the `--no-` form of a negatable one.
    static func namesLongOption(_ name: String) -> Bool {
        if OptionTable.option(long: name) != nil { return true }
        return name.hasPrefix("no-") && OptionTable.option(long: String(name.dropFirst(3)))?.negatable == true
    }

    /// `; choose a, b or c` for an option with a fixed set of values (`af --style` lists the
    /// styles), or nothing.
    static func choiceList(_ spec: OptionSpec) -> String {
        let choices = spec.choices.filter { !$0.contains(":") }
        guard spec.value != .flag, !choices.isEmpty, spec.completion != .file else { return "" }
        return "; choose \(choices.joined(separator: ", "))"
    }
}

/// "Did you mean" suggestions for mistyped options.
enum Suggestions {
    /// What `hint` says when it knows nothing nearer.
    static let noHint = "; see 'af --help' for the options"

    /// `; did you mean '--retry'?` for the closest long option, what af does instead of a
    /// curl option it does not have, or where to look.
    static func hint(for name: String) -> String { knownHint(for: name) ?? noHint }

    /// `hint` when it knows something nearer than the list of options; nil otherwise.
    static func knownHint(for name: String) -> String? {
        // Before the nearest spelling: curl's --header is one letter from --headers, which
        // prints the response headers instead of sending one.
        if let instead = curlLong[name] { return "; \(instead)" }
        // curl's options for its other protocols (--ftp-pasv, --mail-from, --tftp-blksize).
        if ["ftp-", "tftp-", "mail-", "sasl-", "telnet-"].contains(where: { name.hasPrefix($0) }) { return "; \(httpOnly)" }
        if name.hasPrefix("no-") {
            let base = String(name.dropFirst(3))
            if OptionTable.option(long: base) != nil { return "; --\(base) has no --no- form" }
            // `--no-folow`: the `--no-` form of the option meant, among those that have one.
            if let match = nearest(base, among: OptionTable.all.filter(\.negatable).map(\.long)) { return "; did you mean '--no-\(match)'?" }
        }
        if let match = nearest(name, among: OptionTable.all.map(\.long)) { return "; did you mean '--\(match)'?" }
        return nil
    }

    /// The option `name` most likely meant: the shortest that `name` begins, for a name cut
    /// short (`--foll`: by spelling alone `--form` is as near as `--follow`), else the nearest
    /// by edit distance, if near enough.
    private static func nearest(_ name: String, among candidates: [String]) -> String? {
        if name.count >= 3, let prefixed = candidates.filter({ $0.hasPrefix(name) }).min(by: { $0.count < $1.count }) {
            return prefixed
        }
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(name, candidate)
            // One edit in three letters at most: two in a short name make another word
            // (`--hsts` is not `--https`, nor `--krb` `--crl`).
            if distance <= max(1, name.count / 3), best.map({ distance < $0.1 }) ?? true {
                best = (candidate, distance)
            }
        }
        return best?.0
    }

    /// curl's usual letters in a script's cluster (`-fsSL`, `-sSL`, `-sk`) in af's words: the
    /// whole cluster read as curl reads it, then what af takes instead; nil for any other.
    static func curlClusterHint(_ cluster: Substring) -> String? {
        // What each letter is in af ("": nothing to give, af does so already).
        let inAf: [Character: String] = ["f": "--check-status", "s": "", "S": "", "L": "-F", "k": "-k", "v": "-v"]
        guard cluster.count >= 2, cluster.allSatisfy({ inAf[$0] != nil }), cluster.contains(where: { "sSL".contains($0) }) else { return nil }
        let given = cluster.compactMap { inAf[$0].flatMap { $0.isEmpty ? nil : $0 } }
        let silent = cluster.contains("s") || cluster.contains("S") ? " (af draws no progress off a terminal and always shows errors)" : ""
        return "; '-\(cluster)' is curl's \(cluster.map { "-\($0)" }.joined(separator: " ")): in af, "
            + (given.isEmpty ? "leave it out" : given.joined(separator: " ")) + silent
    }

    /// The name of one of af's long options (or its `--no-` form) that `body`, an argument
    /// without its one dash, spells, with or without `=VALUE` (left out of the answer: it may
    /// be a password); nil for anything else. Only the whole name counts: `-ofile.json` is
    /// `-o file.json`, and a word that only looks like a name stays a cluster.
    static func longNameAfterOneDash(_ body: Substring) -> String? {
        let name = String(body.splitOnce(byte: UInt8(ascii: "="))?.before ?? body)
        return name.utf8.count >= 3 && ParsedArguments.namesLongOption(name) ? name : nil
    }

    /// curl's `-X METHOD` and `--request METHOD`: where af takes the method given (POST when
    /// what follows is no method's name).
    static func requestHint(method given: String?) -> String {
        let method = given.flatMap { RequestBuilder.isMethodWord($0) ? Quote.argument($0.uppercased()) : nil }
        return "; the method goes before the URL: af \(method ?? "POST") URL"
    }

    static func shortHint(for letter: Character) -> String {
        // HTTPie's -s takes a style; curl's (far more often typed) is silent.
        if letter == "s", let instead = curlLong["silent"] { return "; \(instead) (curl's -s); HTTPie's -s STYLE is --style=STYLE" }
        if let name = curlShort[letter], let instead = curlLong[name] { return "; \(instead)" }
        if let instead = curlLettersForAfLongs[letter] { return "; \(instead)" }
        return noHint
    }

    /// curl's short options that af does not have, by the long name `curlLong` explains
    /// (letters af uses for other things, such as -d, -F, -I, -o and -x, are af's own and
    /// never reach here).
    static let curlShort: [Character: String] = [
        "H": "header", "X": "request", "u": "user", "L": "location", "s": "silent", "i": "include",
        "T": "upload-file", "O": "remote-name", "C": "continue-at", "e": "referer", "w": "write-out",
        "G": "get", "0": "http1.0", "1": "tlsv1", "N": "no-buffer", "r": "range", "z": "time-cond", "n": "netrc",
        "K": "config", "J": "remote-header-name", "U": "proxy-user", "D": "dump-header", "g": "globoff",
        "#": "progress-bar", "M": "manual",
    ]

    /// curl's letters for things af does under a long name only (curl -V is --version,
    /// -Z runs transfers in parallel).
    static let curlLettersForAfLongs: [Character: String] = [
        "V": "--version prints af's version and the libcurl, OpenSSL and zlib it runs on",
        "Z": "af batch --parallel=N FILE runs the requests of FILE, one per line, N at once",
        "E": "--cert=FILE is the client certificate (PEM), --cert-key=FILE its key if apart",
    ]

    private static let headerItem = "af sends a header given as a request item: af URL 'X-Name:value'"
    private static let bodyItems = "af sends a body from data items (name=value, name:=json), @FILE or --raw=TEXT"

    /// What af does instead of curl's long options that af does not have, HTTPie 4's protocol
    /// switches (which HTTPie users type), and spellings whose plain reading would mislead.
    static let curlLong: [String: String] = [
        "header": headerItem,
        "data": bodyItems, "data-raw": bodyItems, "data-binary": bodyItems, "data-ascii": bodyItems,
        "data-urlencode": "af sends data items as a form with -f (--form): af -f POST URL name=value",
        "request": "the method goes before the URL: af POST URL",
        "user": "credentials are -a USER:PASSWORD",
        "location": "-F (--follow) follows redirects",
        "silent": "af shows no progress when standard error is not a terminal; -q prints nothing at all",
        "include": "-p hb prints the response head and body",
        "upload-file": "af sends a file as the body with @FILE: af PUT URL @FILE",
        "remote-name": "-d (--download) saves the body under the server's name",
        "continue-at": "-c (--continue) resumes a download",
        "fail": "--check-status exits 3, 4 or 5 for a 3xx, 4xx or 5xx status",
        "max-time": "--timeout=SECONDS limits each attempt",
        "cacert": "--verify=PATH trusts the CA bundle at PATH",
        "capath": "--verify=DIR trusts a directory of hashed CA certificates",
        "manual": "the manual is 'man af'; --help lists the options",
        "traceback": "--debug prints the versions, the parsed options and libcurl's trace",
        "user-agent": "af sends a User-Agent header given as a request item: af URL 'User-Agent:value'",
        "referer": "af sends a Referer header given as a request item: af URL 'Referer:URL'",
        "cookie": "af sends cookies given as a request item (af URL 'Cookie:name=value') and keeps them with --session",
        "compressed": "af asks for compressed responses and decodes them without being told",
        "write-out": "-m (--meta) prints timings and sizes; --report=json writes them for scripts",
        "head": "the method goes before the URL: af HEAD URL",
        "http2": "--http-version=2 asks for HTTP/2",
        "http1.1": "--http-version=1.1 keeps to HTTP/1.1",
        "http1.0": "--http-version=1.0 speaks HTTP/1.0",
        "get": "query items go into the URL: af URL name==value",
        "oauth2-bearer": "-A bearer -a TOKEN sends a bearer token", "bearer": "-A bearer -a TOKEN sends a bearer token",
        "tlsv1": tlsVersion, "tlsv1.2": tlsVersion, "tlsv1.3": tlsVersion,
        "form-string": "-f (--form) sends name=value items as a form, and name@FILE as a file part",
        "no-buffer": "--stream prints the body as it arrives",
        "range": "af sends a Range header given as a request item: af URL 'Range:bytes=0-99'",
        "time-cond": "af sends an If-Modified-Since header given as a request item: af URL 'If-Modified-Since:DATE'",
        "netrc": "af reads ~/.netrc without being asked (--ignore-netrc turns it off)",
        "config": "af reads its defaults from ~/.config/af/config.json (see 'man af')",
        "remote-header-name": "-d (--download) names the file from Content-Disposition",
        "proxy-user": "give the proxy's credentials in its URL: --proxy=https:http://USER:PASSWORD@HOST:PORT",
        "show-error": "af always shows errors; -q leaves out everything else",
        "url": "the URL is an argument of its own: af [METHOD] URL",
        "connect-to": "--resolve=HOST:PORT:ADDRESS sends a host's requests to another address",
        "ca-native": "af trusts the system's CA certificates unless --verify=PATH (or REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR) names others",
        "fail-with-body": "--check-status exits 3, 4 or 5 for a 3xx, 4xx or 5xx status and still prints the body",
        "retry-connrefused": "--retry retries refused connections",
        "disable-http2": "--http-version=1.1 keeps to HTTP/1.1",
        "http3": noHTTP3, "http3-only": noHTTP3, "disable-http3": noHTTP3,
        "resolver": systemResolver,
        "noproxy": "af reaches the hosts NO_PROXY lists directly: NO_PROXY=HOST,… af URL",
        // HTTPie's --no-verify resets --verify to its default; read as "do not verify", it
        // would do the opposite of what was meant.
        "no-verify": "--verify=no (or -k) skips certificate verification; verifying is the default",
        // curl's options a script carries over, in af's words.
        "key": "--cert-key=FILE is the private key for --cert when it is a file of its own",
        "pass": "--cert-key-pass=PASS is the pass phrase of --cert's key",
        "cert-type": pemOnly, "key-type": pemOnly,
        "pinnedpubkey": "--pin=sha256//BASE64 requires that public key in the server's chain (repeatable)",
        "crlfile": "--crl=FILE checks certificates against a CRL",
        "cert-status": "--check-revocation requires a good stapled OCSP response",
        "tlsv1.0": tlsVersion, "tlsv1.1": tlsVersion, "sslv3": tlsVersion,
        "cookie-jar": "--session=NAME keeps the cookies a server sets between runs",
        "digest": "-A digest -a USER:PASSWORD uses Digest authentication",
        "basic": "-a USER:PASSWORD sends Basic authentication, the default -A basic",
        "anyauth": "-A basic (the default) or -A digest names the scheme; af does not pick one from the server's challenge",
        "ntlm": otherSchemes, "negotiate": otherSchemes,
        "dump-header": "-h prints only the response headers, -p hb the headers and the body",
        "trace-ascii": "-v prints the exchange; --debug adds libcurl's own trace",
        "stderr": "af writes errors and notices to standard error: redirect it with 2>FILE",
        "progress-bar": "af draws a progress bar for a download (-d) when standard error is a terminal",
        "netrc-file": "af reads the netrc file that NETRC names: NETRC=FILE af URL",
        "netrc-optional": "af reads ~/.netrc without being asked (--ignore-netrc turns it off)",
        "globoff": "af never expands [] or {} in a URL, so there is nothing to turn off",
        "proto": httpOnly, "proto-redir": httpOnly,
        "url-query": "query items go into the URL: af URL name==value",
        "remove-on-error": "af writes a file as NAME.part and names it only once the body is complete, so a failure leaves no partial NAME",
        "limit-rate": "af does not slow a transfer down; af batch --rate=N/s limits how often its requests start",
        "parallel-max": "af batch --parallel=N keeps up to N requests in flight",
        "fail-early": "af batch --fail-fast starts nothing more after the first failure",
        "next": "af makes one request per run; af batch FILE makes one per line of FILE",
        "http2-prior-knowledge": "--http-version=2-prior-knowledge speaks HTTP/2 without asking first",
        "http0.9": "af takes no HTTP/0.9 answer: a response must have a head",
        "sslv2": tlsVersion,
        "retry-all-errors": "--retry retries network failures, timeouts and statuses 408, 429, 500, 502, 503 and 504; --retry-on=LIST sets the statuses",
        "no-sessionid": "af keeps no TLS session between runs; the lines of af batch resume theirs under the same trust settings",
        "hsts": "af keeps no HSTS list: write https:// (or give --https for URLs without a scheme)",
        "crlf": "af sends a body as it is, line endings and all",
        "krb": httpOnly,
        "doh-url": systemResolver, "doh-insecure": systemResolver, "doh-cert-status": systemResolver, "dns-servers": systemResolver,
        "dns-interface": systemResolver, "dns-ipv4-addr": systemResolver, "dns-ipv6-addr": systemResolver,
        "socks4": socks, "socks4a": socks, "socks5": socks, "socks5-hostname": socks,
        "proxy-insecure": "--verify=no applies to an HTTPS proxy too", "proxy-cacert": "--verify=PATH applies to an HTTPS proxy too",
        "proxy-capath": "--verify=DIR applies to an HTTPS proxy too",
        "proxy-basic": proxyCredentials, "proxy-anyauth": proxyCredentials, "proxy-digest": proxyCredentials,
        "proxy-ntlm": proxyCredentials, "proxy-negotiate": proxyCredentials,
        "proxytunnel": "af tunnels https:// requests through a proxy (CONNECT) and sends http:// ones to it as they are",
        "no-clobber": "af never replaces a file without --overwrite; -d saves under NAME-1.EXT instead",
        "remote-name-all": "-d (--download) saves the body under the server's name",
        "libcurl": "--curl prints the request as a curl command line",
        "no-progress-meter": "af draws a progress bar only for a download (-d) with standard error a terminal",
        "alt-svc": noHTTP3,
    ]

    private static let pemOnly = "af reads client certificates and keys in PEM (--cert, --cert-key)"
    private static let otherSchemes = "af speaks Basic, Digest and bearer authentication (-A), not NTLM or Negotiate"
    private static let httpOnly = "af speaks http and https only, and follows redirects to nothing else"

    private static let noHTTP3 = "af speaks HTTP/1.1 and HTTP/2 (--http-version=2), never HTTP/3"
    private static let systemResolver = "af asks the system's resolver; --resolve=HOST:PORT:ADDRESS sends a host's requests to an address"
    private static let socks = "--proxy=all:socks5h://HOST:PORT sends requests through a SOCKS proxy (socks5://, socks4://, socks4a:// too)"
    private static let proxyCredentials = "af sends a proxy's credentials, given in its URL, with Basic authentication: --proxy=https:http://USER:PASSWORD@HOST:PORT"

    /// What curl means by a letter that af also has but as an option without a value, where
    /// curl's takes one: a curl user's value then lands among af's positionals.
    static let curlValueLetters: [Character: String] = [
        "x": "curl's -x PROXY is --proxy=http:PROXY here",
        "b": "curl's -b cookies are a header item here: 'Cookie:name=value'",
        "c": "curl's -c cookie jar is --session=NAME here",
        "d": "curl's -d data are items after the URL here: af POST URL name=value",
        "F": "curl's -F form fields are items with -f here: name=value, name@FILE",
        "m": "curl's -m SECONDS is --timeout=SECONDS here",
    ]

    private static let tlsVersion = "--ssl=tls1.2 or --ssl=tls1.3 sets the lowest TLS version"

    /// Edit distance in which two neighbouring letters swapped (`retyr`) count as one edit, as
    /// a typist makes them (optimal string alignment).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], beforePrevious[j - 2] + 1) }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}
