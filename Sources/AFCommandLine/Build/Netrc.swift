import AFEngine

/// `~/.netrc` (or `$NETRC`): credentials by host, looked up again for every hop of a
/// redirect chain.
struct Netrc: Sendable {
    struct Entry: Sendable, Equatable {
        var login: String
        var password: String
        /// Words in the entry that other programs' files use for a keyword (`passwd`,
        /// `user`) and this format does not: read as unknown, they and their values were
        /// skipped, so the entry sent what it holds without them (`passwd s3cret` sent an
        /// empty password). Only such words are kept: any other unknown word may be a value.
        var misnamed: [String] = []
    }

    private(set) var machines: [String: Entry] = [:]
    private(set) var fallback: Entry?

    /// Whether the file names no credentials at all.
    var isEmpty: Bool { machines.isEmpty && fallback == nil }

    /// The entry for `host` (no port, in its ASCII form as `HTTPURL` has it), or the
    /// `default` entry.
    func credentials(for host: String) -> Entry? {
        machines[IDNA.hostKey(host)] ?? fallback
    }

    /// Parses the netrc format: `machine`, `default`, `login`, `password`, `account`, and
    /// `macdef` blocks (skipped up to the next blank line); keywords in any case.
    init(text: String) {
        var tokens: [String] = []
        var skippingMacro = false
        // Lines split on the LF byte: a CRLF is one Swift character, which a split on "\n"
        // does not see, and Windows-edited files end every line with one. (The CR left at a
        // line's end is whitespace to `words`.)
        for line in text.split(byte: 10, omittingEmptySubsequences: false) {
            if skippingMacro {
                if line.trimmingCharacters(in: " \t\r").isEmpty { skippingMacro = false }
                continue
            }
            var words = Self.words(String(line))
            if let macro = words.firstIndex(where: { $0.lowercased() == "macdef" }) {
                words = Array(words[..<macro])
                skippingMacro = true
            }
            tokens += words
        }
        var current: String?
        var isDefault = false
        var entry = Entry(login: "", password: "")
        func commit() {
            if isDefault { fallback = entry } else if let host = current { machines[host] = machines[host] ?? entry }
        }
        var index = 0
        var valueOfMisnamed = -1
        while index < tokens.count {
            let token = tokens[index]
            let value = index + 1 < tokens.count ? tokens[index + 1] : ""
            // Keywords in any case, as curl reads them (`Machine`, `PASSWORD`).
            let keyword = token.lowercased()
            switch keyword {
            case "machine":
                if current != nil || isDefault { commit() }
                // A name in Unicode is kept in the ASCII form URLs carry (IDNA).
                current = IDNA.hostKey(value)
                isDefault = false
                entry = Entry(login: "", password: "")
                index += 2
            case "default":
                if current != nil || isDefault { commit() }
                current = nil
                isDefault = true
                entry = Entry(login: "", password: "")
                index += 1
            case "login":
                entry.login = value
                index += 2
            case "password":
                entry.password = value
                index += 2
            case "account":
                index += 2
            default:
                // The word after a misnamed one is its value (`passwd pass`), never named.
                if index != valueOfMisnamed, Self.misnamedKeywords[keyword] != nil {
                    if !entry.misnamed.contains(token) { entry.misnamed.append(token) }
                    valueOfMisnamed = index + 1
                }
                index += 1
            }
        }
        if current != nil || isDefault { commit() }
    }

    /// Words that name a keyword in other formats (`.pgpass`, curl's `-u`, FTP clients'
    /// scripts), and the netrc keyword meant.
    static let misnamedKeywords: [String: String] = [
        "passwd": "password", "pass": "password", "pwd": "password", "pw": "password", "secret": "password",
        "user": "login", "username": "login", "usr": "login",
        "host": "machine", "hostname": "machine", "server": "machine",
    ]

    /// Splits a line into words; double quotes group, `#` starts a comment.
    private static func words(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var escaping = false
        // Scalars, not Characters: a quote or a blank followed by a combining mark is one
        // Character with it, and would not be seen as a quote or a separator.
        for scalar in line.unicodeScalars {
            if escaping {
                current.unicodeScalars.append(scalar)
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else if scalar == "\"" {
                quoted.toggle()
            } else if !quoted, scalar == "#", current.isEmpty {
                break
            } else if !quoted, scalar == " " || scalar == "\t" || scalar == "\r" {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                current.unicodeScalars.append(scalar)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// Where the file is: `$NETRC`, else `~/.netrc`.
    static func path(environment: Environment) -> String {
        variable(environment) ?? environment.homeDirectory + "/.netrc"
    }

    private static func variable(_ environment: Environment) -> String? {
        environment.variables["NETRC"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The user's netrc, or nil when there is none. One that cannot be read is an error
    /// that names where its path came from and the way to run without it: af reads
    /// `~/.netrc` unasked, so the user may never have heard of it.
    static func load(environment: Environment) throws(CommandFailure) -> Netrc? {
        let path = path(environment: environment)
        guard FileSystem.exists(path) else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try FileReading.document(atPath: path, what: variable(environment) == nil ? "~/.netrc" : "NETRC")
        } catch {
            var failure = error
            failure.message += "; --ignore-netrc runs without it"
            throw failure
        }
        return Netrc(text: String(decoding: bytes, as: UTF8.self))
    }
}

/// Adds netrc credentials for the host of each hop, unless the request already carries
/// credentials.
struct NetrcAdapter: RequestAdapter {
    let netrc: Netrc

    func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        completion(.success(adapted(description)))
    }

    func adapted(_ description: RequestDescription) -> RequestDescription {
        guard !description.headers.contains(.authorization), description.challengeCredentials == nil,
              !description.suppressedHeaders.contains(.authorization),
              let url = try? HTTPURL(parsing: description.url), let entry = netrc.credentials(for: url.host)
        else { return description }
        var adapted = description
        adapted.headers.add(name: .authorization, value: Credentials(user: entry.login, password: entry.password, scheme: .basic).authorizationValue)
        return adapted
    }
}
