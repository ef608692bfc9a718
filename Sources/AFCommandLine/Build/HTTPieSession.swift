import AFEngine

/// An HTTPie session file (`{"__meta__": {"httpie": …}, "headers", "auth", "cookies"}`), read
/// into an af session so that `--session=PATH` works on the sessions a user brings from
/// HTTPie, and written back in HTTPie's own layout (the one it was read in), so that HTTPie
/// and af can go on using it in turn.
///
/// HTTPie's format changed over its versions, and each is read: headers as a list of
/// `{"name", "value"}` (3.2) or an object of name to value; credentials as `raw_auth` (3.x:
/// `USER:PASS`, or the token for bearer) or `username` and `password`; cookies as a list of
/// objects with a `domain` (3.1), or an object of name to `{"value", "path", …}` that
/// belonged to the session's host.
enum HTTPieSession {
    /// What an HTTPie session file was read from, to write it back the way it was written.
    struct Source: Sendable {
        /// The file's document as read: the order of its members, the layout of each (lists
        /// or objects; `raw_auth` or `username` and `password`), and what af does not use
        /// (`__meta__`, a header HTTPie left out as null), all kept as they were.
        let document: JSONValue
        /// The host the session was read for, whose cookies an unbound cookie of the file
        /// (`"domain": ""`) stood for.
        let host: String
    }

    /// Where HTTPie keeps the named session `name` for `url`'s host, when that file exists:
    /// `sessions/HOST/NAME.json` (`HOST_PORT` for a port given in the URL) under
    /// `$HTTPIE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/httpie`, else `~/.config/httpie`.
    static func namedSessionPath(_ name: String, url: HTTPURL, environment: Environment) -> String? {
        let base = environment.variables["HTTPIE_CONFIG_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? environment.configHome + "/httpie"
        let host = url.host.replacingBytes(of: ":", with: "_")
        let hosts = url.port.map { [host + "_\($0)", host] } ?? [host]
        return hosts.map { "\(base)/sessions/\($0)/\(name).json" }.first(where: FileSystem.exists)
    }

    /// Whether `document` is an HTTPie session: one HTTPie wrote (its `__meta__`), or one
    /// written by hand for HTTPie, as its documentation and its own tests write them
    /// (`{"headers": {"X-Api-Key": "…"}}`), which holds HTTPie's keys and no other.
    static func isOne(_ document: JSONValue) -> Bool {
        guard document["af_session"] == nil else { return false }
        if let meta = document["__meta__"] {
            return meta["httpie"] != nil || meta["about"]?.stringValue == "HTTPie session file"
        }
        guard let members = document.objectValue, !members.isEmpty else { return false }
        return members.allSatisfy { key, _ in ["headers", "cookies", "auth"].contains(key) }
    }

    /// The session `document` holds, for requests to `url`; `corrupt` makes the error for a
    /// part af cannot read.
    static func read(_ document: JSONValue, path: String, url: HTTPURL, corrupt: (String) -> CommandFailure) throws(CommandFailure) -> SessionFile {
        // A named HTTPie session belongs to the host of its directory, one given by path to
        // every host; either way it is read for the host asked now.
        var session = SessionFile(path: path, host: url.authority)
        session.httpie = Source(document: document, host: url.host)
        session.headers = try headers(document["headers"], corrupt: corrupt)
        session.auth = try credentials(document["auth"], corrupt: corrupt)
        session.cookies = try cookies(document["cookies"], host: url.host, corrupt: corrupt)
        return session
    }

    private static func headers(_ value: JSONValue?, corrupt: (String) -> CommandFailure) throws(CommandFailure) -> [HTTPHeader] {
        guard let value, value != .null else { return [] }
        if let list = value.arrayValue {
            var headers: [HTTPHeader] = []
            for item in list {
                guard let name = item["name"]?.stringValue, let text = item["value"]?.stringValue else {
                    throw corrupt("has a header without a name and a value")
                }
                headers.append(HTTPHeader(name, text))
            }
            return headers
        }
        guard let members = value.objectValue else { throw corrupt("has \"headers\" that are neither a list nor an object") }
        // HTTPie writes null for a header it leaves out.
        return members.compactMap { name, text in text.stringValue.map { HTTPHeader(name, $0) } }
    }

    private static func credentials(_ value: JSONValue?, corrupt: (String) -> CommandFailure) throws(CommandFailure) -> Credentials? {
        guard let value, value != .null, let type = value["type"]?.stringValue else { return nil }
        guard let scheme = Credentials.Scheme(rawValue: type) else {
            throw corrupt("uses the auth type '\(Quote.argument(type))', which af does not speak (basic, digest, bearer)")
        }
        if let raw = value["raw_auth"]?.stringValue {
            if scheme == .bearer { return Credentials(user: "", password: raw, scheme: .bearer) }
            let parts = raw.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            return Credentials(user: String(parts[0]), password: parts.count > 1 ? String(parts[1]) : "", scheme: scheme)
        }
        guard let user = value["username"]?.stringValue else { throw corrupt("has an \"auth\" without raw_auth or username") }
        let password = value["password"]?.stringValue ?? ""
        return scheme == .bearer ? Credentials(user: "", password: user, scheme: .bearer) : Credentials(user: user, password: password, scheme: scheme)
    }

    private static func cookies(_ value: JSONValue?, host: String, corrupt: (String) -> CommandFailure) throws(CommandFailure) -> [Cookie] {
        guard let value, value != .null else { return [] }
        var cookies: [Cookie] = []
        func add(name: String, _ item: JSONValue) throws(CommandFailure) {
            guard let text = item["value"]?.stringValue else { throw corrupt("has a cookie '\(Quote.argument(name))' without a value") }
            // A cookie without a domain (or an empty one) was set for the session's host alone.
            let domain = item["domain"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            cookies.append(try SessionFile.checked(Cookie(
                name: name, value: text,
                domain: domain.map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 } ?? host,
                includeSubdomains: domain?.hasPrefix(".") ?? false,
                path: item["path"]?.stringValue ?? "/",
                secure: item["secure"]?.boolValue ?? false,
                expires: item["expires"]?.numberText.map { Saturating.int(Double($0) ?? 0) } ?? 0
            ), corrupt: corrupt))
        }
        if let list = value.arrayValue {
            for item in list {
                guard let name = item["name"]?.stringValue else { throw corrupt("has a cookie without a name") }
                try add(name: name, item)
            }
        } else if let members = value.objectValue {
            for (name, item) in members { try add(name: name, item) }
        } else {
            throw corrupt("has \"cookies\" that are neither a list nor an object")
        }
        return cookies
    }

    /// The text of `session` as HTTPie writes a session (four spaces of indentation), in the
    /// layout of the file it was read from: its headers, credentials and cookies replace
    /// those of `source`'s document, whose other members stay as they were. A part the file
    /// did not have is added only when there is something in it.
    static func text(of session: SessionFile, source: Source) -> String {
        let document = source.document
        var members = document.objectValue ?? []
        func had(_ key: String) -> Bool { document[key].map { $0 != .null } ?? false }
        if had("headers") || !session.headers.isEmpty {
            put(headers(session.headers, replacing: document["headers"]), at: "headers", in: &members)
        }
        if had("cookies") || !session.cookies.isEmpty {
            put(cookies(session.cookies, replacing: document["cookies"], host: source.host), at: "cookies", in: &members)
        }
        if let auth = session.auth { put(credentials(auth, replacing: document["auth"]), at: "auth", in: &members) }
        var json = JSONWriter(layout: .indented(4))
        json.value(.object(members))
        return json.text + "\n"
    }

    /// Gives the member of `members` that `same` matches (the one named `key` exactly, unless
    /// given) the value `value`, or adds it at the end.
    private static func put(_ value: JSONValue, at key: String, in members: inout [(String, JSONValue)], same: ((String) -> Bool)? = nil) {
        if let index = members.firstIndex(where: { same?($0.0) ?? ($0.0 == key) }) {
            members[index].1 = value
        } else {
            members.append((key, value))
        }
    }

    /// Headers as a list of `{"name", "value"}` (3.2), or as an object of name to value
    /// (earlier), where the file had one: a repeated name then keeps its last value, and a
    /// header HTTPie wrote as null stays.
    private static func headers(_ headers: [HTTPHeader], replacing old: JSONValue?) -> JSONValue {
        guard let members = old?.objectValue else {
            return .array(headers.map { .object([("name", .string($0.name.rawValue)), ("value", .string($0.value))]) })
        }
        var object: [(String, JSONValue)] = []
        for header in headers {
            put(.string(header.value), at: header.name.rawValue, in: &object) { HTTPHeaders.Name($0) == header.name }
        }
        let named = Set(headers.map(\.name))
        object += members.filter { $0.1 == .null && !named.contains(HTTPHeaders.Name($0.0)) }
        return .object(object)
    }

    /// Credentials as `{"raw_auth", "type"}` (3.x: `USER:PASS`, or a bearer's token), or as
    /// `{"password", "type", "username"}` where the file held a user that way (HTTPie before
    /// 3.0; 3.x writes that layout with nulls for a session without credentials, and reads
    /// a bearer's token only as `raw_auth`).
    private static func credentials(_ credentials: Credentials, replacing old: JSONValue?) -> JSONValue {
        let type = JSONValue.string(credentials.scheme.rawValue)
        if credentials.scheme != .bearer, old?["username"]?.stringValue != nil, old?["raw_auth"] == nil {
            return .object([("password", .string(credentials.password)), ("type", type), ("username", .string(credentials.user))])
        }
        let raw = credentials.scheme == .bearer ? credentials.password : credentials.user + ":" + credentials.password
        return .object([("raw_auth", .string(raw)), ("type", type)])
    }

    /// Cookies as a list of objects with their `domain` (3.1), or as an object of name to
    /// `{"expires", "path", "secure", "value"}` (earlier) where the file had one. That layout
    /// has no domain: whoever reads it sends its cookies to the session's host, so only the
    /// cookies of that host go in it (one another host set on a redirect would be sent where
    /// it was never meant to go). A cookie read from the file unbound to a domain (`""`, null
    /// or none, which HTTPie reads as `""`) and still for the host it was read for is written
    /// back unbound.
    private static func cookies(_ cookies: [Cookie], replacing old: JSONValue?, host: String) -> JSONValue {
        func expires(_ cookie: Cookie) -> JSONValue { cookie.expires != 0 ? .number(String(cookie.expires)) : .null }
        if old?.objectValue != nil {
            var object: [(String, JSONValue)] = []
            for cookie in cookies where cookie.domain.lowercased() == host.lowercased() {
                put(.object([("expires", expires(cookie)), ("path", .string(cookie.path)), ("secure", .bool(cookie.secure)), ("value", .string(cookie.value))]),
                    at: cookie.name, in: &object)
            }
            return .object(object)
        }
        // The unbound cookies of the file, by name and path.
        func key(_ name: String, _ path: String) -> String { name + "\u{0}" + path }
        var unbound: [String: JSONValue] = [:]
        for item in old?.arrayValue ?? [] {
            let domain = item["domain"] ?? .string("")
            guard let name = item["name"]?.stringValue, domain == .null || domain == .string("") else { continue }
            unbound[key(name, item["path"]?.stringValue ?? "/")] = domain
        }
        return .array(cookies.map { cookie in
            var domain = JSONValue.string(cookie.includeSubdomains ? "." + cookie.domain : cookie.domain)
            if !cookie.includeSubdomains, cookie.domain.lowercased() == host.lowercased(), let written = unbound[key(cookie.name, cookie.path)] {
                domain = written
            }
            return .object([("domain", domain), ("expires", expires(cookie)), ("name", .string(cookie.name)),
                             ("path", .string(cookie.path)), ("secure", .bool(cookie.secure)), ("value", .string(cookie.value))])
        })
    }
}
