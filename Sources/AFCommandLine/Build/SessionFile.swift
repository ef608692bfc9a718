import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// `--session`: headers, authentication and cookies kept between runs in a JSON file
/// (mode 0600, written atomically). Headers and authentication apply only to the host the
/// session was made for; cookies follow their own domain, path, expiry and `Secure` rules.
struct SessionFile: Sendable {
    let path: String
    /// `host:port` the headers and authentication belong to.
    var host: String
    var headers: [HTTPHeader] = []
    var auth: Credentials?
    var cookies: [Cookie] = []
    /// Where the session was read from when the file is HTTPie's: it is written back in
    /// HTTPie's layout, not af's.
    var httpie: HTTPieSession.Source?
    /// There was no file: the session starts empty.
    var isNew = false

    /// Where a session lives: a NAME under the configuration directory, per host, or a PATH.
    static func path(for name: String, url: HTTPURL, environment: Environment) throws(CommandFailure) -> String {
        if isPath(name) { return name }
        guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }), !name.hasPrefix(".") else {
            throw .usage("invalid session name '\(name)': use letters, digits, '-', '_' and '.', or give a path containing '/'")
        }
        let host = url.host.replacingBytes(of: ":", with: "_")
        return "\(environment.configDirectory)/sessions/\(host)_\(url.effectivePort)/\(name).json"
    }

    /// Whether `--session`'s value is a path (it has a slash, or ends in `.json`), not a name.
    static func isPath(_ name: String) -> Bool {
        name.contains("/") || name.hasSuffix(".json")
    }

    /// Reads a session; a missing file is an empty session, a corrupt one an error naming
    /// `option`, the option that named the session.
    static func load(path given: String, url: HTTPURL, option: String = "--session") throws(CommandFailure) -> SessionFile {
        let path = target(of: given)
        var session = SessionFile(path: path, host: url.authority)
        guard FileSystem.exists(path) else {
            session.isNew = true
            return session
        }
        let bytes = try FileReading.document(atPath: path, what: option)
        func corrupt(_ reason: String) -> CommandFailure {
            .usage("the session file '\(path)' \(reason); fix it or remove it (af never replaces it)")
        }
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw corrupt("is not valid JSON: \(error.description)")
        }
        if HTTPieSession.isOne(document) {
            let read = try HTTPieSession.read(document, path: path, url: url, corrupt: corrupt)
            try read.checkSendable(corrupt: corrupt)
            return read
        }
        guard document["af_session"]?.numberText == "1" else { throw corrupt("is not an af session (no \"af_session\": 1)") }
        guard let host = document["host"]?.stringValue else { throw corrupt("has no \"host\"") }
        session.host = host
        for item in document["headers"]?.arrayValue ?? [] {
            guard let pair = item.arrayValue, pair.count == 2, let name = pair[0].stringValue, let value = pair[1].stringValue else {
                throw corrupt("has a header that is not a [name, value] pair")
            }
            session.headers.append(HTTPHeader(name, value))
        }
        if let auth = document["auth"], auth != .null {
            guard let type = auth["type"]?.stringValue, let scheme = Credentials.Scheme(rawValue: type),
                  let user = auth["user"]?.stringValue, let password = auth["password"]?.stringValue
            else { throw corrupt("has an \"auth\" without type, user and password") }
            session.auth = Credentials(user: user, password: password, scheme: scheme)
        }
        for item in document["cookies"]?.arrayValue ?? [] {
            guard let name = item["name"]?.stringValue, let value = item["value"]?.stringValue, let domain = item["domain"]?.stringValue else {
                throw corrupt("has a cookie without name, value and domain")
            }
            session.cookies.append(try checked(Cookie(
                name: name, value: value, domain: domain,
                includeSubdomains: item["include_subdomains"]?.boolValue ?? false,
                path: item["path"]?.stringValue ?? "/",
                secure: item["secure"]?.boolValue ?? false,
                httpOnly: item["http_only"]?.boolValue ?? false,
                expires: item["expires"]?.numberText.flatMap { Int($0) } ?? 0,
                isLatin1: item["latin1"]?.boolValue ?? false
            ), corrupt: corrupt))
        }
        try session.checkSendable(corrupt: corrupt)
        return session
    }

    /// Refuses headers and credentials no request can carry, as the command line refuses
    /// them: a line break in a header value or a bearer token would start a header line of
    /// its own (only an edited file, or one from elsewhere, has one), and a name that is no
    /// token would be sent as it is. `--offline` and `--curl` printed them as sent.
    func checkSendable(corrupt: (String) -> CommandFailure) throws(CommandFailure) {
        for header in headers {
            guard RequestBuilder.isHeaderName(header.name.rawValue) else {
                throw corrupt("has a header named '\(Quote.argument(header.name.rawValue))', which is no header name")
            }
            if let problem = header.valueProblem {
                throw corrupt("has a header '\(header.name.rawValue)' whose value \(problem)")
            }
        }
        if let auth, LineBreaks.breaksALine(auth.user + auth.password) {
            throw corrupt("has credentials with a line break or a NUL character in them")
        }
    }

    /// `cookie`, or the session file's error when libcurl could not carry it (a control
    /// character in it: only an edited file has one, and a line break would add a cookie).
    static func checked(_ cookie: Cookie, corrupt: (String) -> CommandFailure) throws(CommandFailure) -> Cookie {
        guard cookie.isWellFormed else {
            throw corrupt("has a cookie '\(Quote.argument(cookie.name))' with an empty name or a control character in it")
        }
        return cookie
    }

    /// Whether headers and authentication from this session apply to `url`.
    func applies(to url: HTTPURL) -> Bool {
        host.lowercased() == url.authority.lowercased()
    }

    /// Headers worth keeping: not about this body (`Content-*`) or this condition (`If-*`).
    static func keeps(_ name: HTTPHeaders.Name) -> Bool {
        let lower = name.canonical
        return !lower.hasPrefix("content-") && !lower.hasPrefix("if-") && lower != "cookie" && lower != "host"
    }

    /// The most cookies a session keeps. Past it, those unchanged longest go first, so a server
    /// that sets new cookies on every response cannot grow the file until it is too large to
    /// read back (16 MiB), which would make the session unusable.
    static let cookieLimit = 1000

    /// `cookies` ordered oldest first — those unchanged since `earlier` in the order they had
    /// there, then new and changed ones in their own order — and at most `limit` of them, the
    /// oldest dropped; with how many were dropped.
    static func keptCookies(_ cookies: [Cookie], earlier: [Cookie], limit: Int = cookieLimit) -> (cookies: [Cookie], dropped: Int) {
        var position: [Cookie.Identity: (index: Int, value: String)] = [:]
        for (index, cookie) in earlier.enumerated() {
            position[cookie.identity] = (index, cookie.value)
        }
        var unchanged: [(index: Int, cookie: Cookie)] = []
        var fresh: [Cookie] = []
        for cookie in cookies {
            if let earlier = position[cookie.identity], earlier.value == cookie.value {
                unchanged.append((earlier.index, cookie))
            } else {
                fresh.append(cookie)
            }
        }
        let ordered = unchanged.sorted { $0.index < $1.index }.map(\.cookie) + fresh
        let dropped = max(0, ordered.count - limit)
        return (Array(ordered.dropFirst(dropped)), dropped)
    }

    /// What an exchange did to the cookies it started with (`before` → `after`: set, changed,
    /// removed) done to `current`, the session file's cookies as they are now. A cookie the
    /// exchange did not touch stays as `current` has it, so another line's change to the file
    /// in the meantime is kept.
    static func applying(changesFrom before: [Cookie], to after: [Cookie], onto current: [Cookie]) -> [Cookie] {
        var earlier: [Cookie.Identity: Cookie] = [:]
        for cookie in before { earlier[cookie.identity] = cookie }
        let set = after.filter { earlier[$0.identity] != $0 }
        let remaining = Set(after.map(\.identity))
        let replaced = Set(set.map(\.identity)).union(earlier.keys.filter { !remaining.contains($0) })
        return current.filter { !replaced.contains($0.identity) } + set
    }

    /// The Cookie header value a request to `url` would carry, for printing it without
    /// sending (`--offline`, `--curl`): the session's cookies libcurl would pick (RFC 6265
    /// §5.4: domain, path, `Secure`, expiry; longest path first), then the `Cookie:` headers
    /// `given` on the command line, whose cookies replace the session's of the same name
    /// (as `Execution` leaves those out of the jar). Nil when there is none.
    func cookieLine(for url: HTTPURL, given: [HTTPHeader], now: Int) -> String? {
        let sent = cookies(notGivenIn: given, host: url.host).enumerated().filter { $0.element.isSent(to: url, at: now) }
            .sorted { $0.element.path.utf8.count != $1.element.path.utf8.count ? $0.element.path.utf8.count > $1.element.path.utf8.count : $0.offset < $1.offset }
        let parts = sent.map { "\($0.element.name)=\($0.element.value)" } + given.filter { $0.name == .cookie && !$0.value.isEmpty }.map(\.value)
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// The session's cookies but those the `Cookie:` headers `given` for `host` give anew
    /// (the same name, domain and path): those go with the header's value, and are saved
    /// with it, so the session's old value stays out of the exchange.
    func cookies(notGivenIn given: [HTTPHeader], host: String) -> [Cookie] {
        let replaced = Set(Self.cookies(fromHeaders: given, host: host).map(\.identity))
        return replaced.isEmpty ? cookies : cookies.filter { !replaced.contains($0.identity) }
    }

    /// The cookies of `Cookie:` headers (`a=1; b=2`), as session cookies of `host`.
    static func cookies(fromHeaders headers: [HTTPHeader], host: String) -> [Cookie] {
        var cookies: [Cookie] = []
        for header in headers where header.name == .cookie {
            for pair in header.value.split(byte: UInt8(ascii: ";")) {
                let parts = pair.split(byte: UInt8(ascii: "="), maxSplits: 1).map { $0.trimmingCharacters(in: " \t") }
                guard parts.count == 2, !parts[0].isEmpty else { continue }
                cookies.removeAll { $0.name == parts[0] }
                cookies.append(Cookie(name: parts[0], value: parts[1], domain: host))
            }
        }
        return cookies
    }

    /// The JSON text of the session: a member per line, a cookie per line.
    var json: String {
        var json = JSONWriter(layout: .indented(2))
        json.object { json in
            json.member("af_session") { $0.number(1) }
            json.member("host") { $0.string(host) }
            json.member("headers") { json in
                json.onOneLine { json in
                    json.array(headers) { json, header in
                        json.array { json in
                            json.string(header.name.rawValue)
                            json.string(header.value)
                        }
                    }
                }
            }
            json.key("auth")
            if let auth {
                json.onOneLine { json in
                    json.object { json in
                        json.member("type") { $0.string(auth.scheme.rawValue) }
                        json.member("user") { $0.string(auth.user) }
                        json.member("password") { $0.string(auth.password) }
                    }
                }
            } else {
                json.null()
            }
            json.member("cookies") { json in
                json.array(cookies) { json, cookie in
                    json.onOneLine { json in
                        json.object { json in
                            json.member("name") { $0.string(cookie.name) }
                            json.member("value") { $0.string(cookie.value) }
                            json.member("domain") { $0.string(cookie.domain) }
                            json.member("include_subdomains") { $0.bool(cookie.includeSubdomains) }
                            json.member("path") { $0.string(cookie.path) }
                            json.member("secure") { $0.bool(cookie.secure) }
                            json.member("http_only") { $0.bool(cookie.httpOnly) }
                            json.member("expires") { $0.number(cookie.expires) }
                            // Only for a cookie the server set in bytes that are not UTF-8.
                            if cookie.isLatin1 { json.member("latin1") { $0.bool(true) } }
                        }
                    }
                }
            }
        }
        return json.text + "\n"
    }

    /// Whether the session keeps the same headers, credentials and cookies as `other`.
    func holdsTheSame(as other: SessionFile) -> Bool {
        headers == other.headers && auth == other.auth && cookies == other.cookies
    }

    /// The text the file is written with: af's layout, or HTTPie's for a file HTTPie wrote.
    var text: String {
        httpie.map { HTTPieSession.text(of: self, source: $0) } ?? json
    }

    /// Reads the session at `path` as it is now, lets `change` update it, and writes it back,
    /// holding a lock on its directory meanwhile: runs that save one session side by side take
    /// turns, and none writes back a file another changed after it was read.
    /// With `notice`, a wait longer than `notice.seconds` is said once; `calls` are the file
    /// calls the save makes (tests stand in for a file system that fails them).
    static func update(
        path given: String, url: HTTPURL, notice: StandardInput.WaitNotice? = nil, calls: FileCalls = .system,
        _ change: (inout SessionFile) throws(CommandFailure) -> Void
    ) throws(CommandFailure) {
        let path = target(of: given)
        let directory = try makeDirectory(for: path)
        // Best effort: without the lock (a directory af may not lock) the file is still
        // written atomically, only not in turn.
        let lock = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if lock >= 0 { close(lock) } }
        if lock >= 0 {
            // Another run holds the lock only while it writes, unless it was stopped (Ctrl-Z)
            // there: a signal must still end this one, including one that came just before
            // the wait began, which a blocking flock(2) would never see.
            let started = Monotonic.now()
            var told = notice == nil
            while flock(lock, LOCK_EX | LOCK_NB) != 0, errno == EWOULDBLOCK || errno == EINTR {
                if !told, let notice, Monotonic.now() - started >= notice.seconds {
                    told = true
                    notice.write("another af has been writing the session '\(path)' for \(Format.seconds(notice.seconds)); waiting for it to finish (one stopped with Ctrl-Z holds it until 'fg' resumes it)")
                }
                if let pending = ProcessInterruption.pending {
                    let signalled = AFError.cancelled(pending)
                    throw CommandFailure("\(ExitMapping.message(for: signalled, attempts: 1)) while waiting for another af to finish writing the session '\(path)'; this exchange's changes were not saved",
                                         exitCode: ExitMapping.status(for: signalled, checkStatus: false))
                }
                usleep(20_000)
            }
        }
        var session = try load(path: path, url: url)
        let before = session
        try change(&session)
        // HTTPie's file is left as it is when nothing in it changed (one written by hand
        // keeps its own layout); af's own is written every time, as it always has been.
        if session.httpie != nil, session.holdsTheSame(as: before) { return }
        try session.save(in: directory, calls: calls)
    }

    /// Fails before anything is sent when the session could not be written back after the
    /// exchange: af may not make files in its directory or, where that is missing, in the
    /// nearest directory of its path that exists; or a file stands where a directory of the
    /// path would be made. `home`: the home directory a named session is kept under, which
    /// must be there (af made a missing one, as root even `/nonexistent`).
    static func checkWritable(path: String, home: String? = nil) throws(CommandFailure) {
        let directory = FileIO.directory(of: target(of: path))
        if let home, !FileIO.isDirectory(home) {
            throw CommandFailure("cannot write the session in '\(directory)': the home directory '\(home)' is not there; set HOME to one that is (or AF_CONFIG_DIR), give --session a path, or use --session-read-only to use it without saving it",
                                 exitCode: ExitStatus.output)
        }
        var existing = directory
        while !FileSystem.exists(existing) {
            let parent = FileIO.directory(of: existing)
            guard parent != existing else { return }
            existing = parent
        }
        func unwritable(_ directory: String, _ reason: String) -> CommandFailure {
            CommandFailure("cannot write the session in '\(directory)': \(reason); use --session-read-only to use it without saving it",
                           exitCode: ExitStatus.output)
        }
        guard FileIO.isDirectory(existing) else { throw unwritable(directory, "'\(existing)' is not a directory") }
        guard access(existing, W_OK | X_OK) != 0 else { return }
        throw unwritable(existing, POSIXFailure(code: errno).description)
    }

    /// The file a session path names: a symbolic link's target (a session kept with one's
    /// dotfiles, say), which is read and written in place of the link, as an editor writes
    /// through it; one that is not there yet is where a new session goes (the link was read
    /// as a file and failed). The path itself when it is no link.
    private static func target(of path: String) -> String {
        guard FileIO.isSymbolicLink(path) else { return path }
        if let resolved = FileIO.resolvedPath(path) { return resolved }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return path }
        let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return link.hasPrefix("/") ? link : FileIO.directory(of: path) + "/" + link
    }

    /// The directory of `path`, created (0700) where missing.
    private static func makeDirectory(for path: String) throws(CommandFailure) -> String {
        let directory = FileIO.directory(of: path)
        if case .failure(let failure) = FileIO.makeDirectories(directory, mode: 0o700) {
            throw CommandFailure("cannot create '\(failure.path)' for the session: \(failure.reason.description)", exitCode: ExitStatus.output)
        }
        return directory
    }

    /// Writes the file atomically (a temporary file in `directory`, its own, renamed over it)
    /// with mode 0600.
    private func save(in directory: String, calls: FileCalls) throws(CommandFailure) {
        let (fd, temporary) = try FileIO.makeTemporaryFile(in: directory, prefix: ".af-session").mapError { failure in
            CommandFailure("cannot write the session in '\(directory)': \(failure.description)", exitCode: ExitStatus.output)
        }.get()
        fchmod(fd, 0o600)
        let code = Array(text.utf8).withUnsafeBytes { FileIO.writeAll(fd, $0) }
        if code != 0 {
            close(fd)
            unlink(temporary)
            throw CommandFailure("cannot write the session '\(path)': \(POSIXFailure(code: code).description)", exitCode: ExitStatus.output)
        }
        // A network file system may report a write the server refused (quota, a full disk)
        // only when the file is synced or closed: the old session must then stay.
        let finished = calls.finish(fd, syncing: true)
        if finished != 0 {
            unlink(temporary)
            throw CommandFailure("cannot write the session '\(path)': \(POSIXFailure(code: finished).description)", exitCode: ExitStatus.output)
        }
        guard rename(temporary, path) == 0 else {
            let reason = POSIXFailure(code: errno).description
            unlink(temporary)
            throw CommandFailure("cannot save the session '\(path)': \(reason)", exitCode: ExitStatus.output)
        }
    }
}
