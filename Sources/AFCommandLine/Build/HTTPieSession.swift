import AFEngine

/// An HTTPie session file (`{"__meta__": {"httpie": …}, "headers", "auth", "cookies"}`), read
/// into an af session so that `--session=PATH` works on the sessions a user brings from
/// HTTPie. af never writes one back: it keeps its own format, and HTTPie could no longer
/// read the file.
///
/// HTTPie's format changed over its versions, and each is read: headers as a list of
/// `{"name", "value"}` (3.2) or an object of name to value; credentials as `raw_auth` (3.x:
/// `USER:PASS`, or the token for bearer) or `username` and `password`; cookies as a list of
/// objects with a `domain` (3.1), or an object of name to `{"value", "path", …}` that
/// belonged to the session's host.
enum HTTPieSession {
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
        session.writer = "HTTPie"
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
}
