internal import CCurl

/// An absolute http or https URL, parsed and normalised by libcurl's URL parser.
public struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    /// The parts, held once: a URL is copied into every request, attempt and response, and
    /// copying one reference costs a fraction of copying eight strings' references.
    private final class Parts: Sendable {
        let scheme: String
        let user: String?
        let password: String?
        let host: String
        let port: Int?
        let path: String
        let query: String?
        let string: String

        init(scheme: String, user: String?, password: String?, host: String, port: Int?, path: String, query: String?, string: String) {
            self.scheme = scheme
            self.user = user
            self.password = password
            self.host = host
            self.port = port
            self.path = path
            self.query = query
            self.string = string
        }
    }

    private let parts: Parts

    /// `http` or `https`, lower-cased.
    public var scheme: String { parts.scheme }
    /// The user name from the authority, percent-decoded (`a%40b` is `a@b`), as credentials
    /// are sent.
    public var user: String? { parts.user }
    /// The password from the authority, percent-decoded.
    public var password: String? { parts.password }
    /// The host name or address as libcurl's parser returns it (an IPv6 address in
    /// brackets), a name in Unicode in its ASCII form (`xn--` labels, `IDNA`).
    public var host: String { parts.host }
    /// The explicit port, nil when the URL has none.
    public var port: Int? { parts.port }
    /// The path, still percent-encoded.
    public var path: String { parts.path }
    /// The query without `?`, still percent-encoded.
    public var query: String? { parts.query }
    /// The complete URL without the fragment, as it is sent.
    public var string: String { parts.string }

    public static func == (lhs: HTTPURL, rhs: HTTPURL) -> Bool {
        lhs.parts === rhs.parts || (lhs.string == rhs.string && lhs.scheme == rhs.scheme && lhs.host == rhs.host && lhs.port == rhs.port
            && lhs.path == rhs.path && lhs.query == rhs.query && lhs.user == rhs.user && lhs.password == rhs.password)
    }

    /// The URL as sent: equal URLs send the same text.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(string)
    }

    /// Parses an absolute URL. Dot segments are removed unless `pathAsIs`.
    public init(parsing text: String, pathAsIs: Bool = false) throws(AFError) {
        if let simple = SimpleURL.parse(text) {
            self = simple
        } else {
            try self.init(base: nil, reference: text, pathAsIs: pathAsIs)
        }
    }

    /// For tests and fuzzing: `text` parsed by libcurl's parser alone, to compare with what
    /// `init(parsing:)` reads without it.
    package static func parsedByLibcurl(_ text: String, pathAsIs: Bool = false) throws(AFError) -> HTTPURL {
        try HTTPURL(base: nil, reference: text, pathAsIs: pathAsIs)
    }

    /// A URL whose parts are already known (`SimpleURL`).
    init(scheme: String, host: String, port: Int?, path: String, query: String?, string: String) {
        parts = Parts(scheme: scheme, user: nil, password: nil, host: host, port: port, path: path, query: query, string: string)
    }

    /// `encodesReference`: spaces and bytes past ASCII in `reference` are percent-encoded (a
    /// space in a query as `+`), as libcurl does to a `Location` it follows and browsers do; a
    /// relative reference got that from libcurl already, an absolute one was refused.
    private init(base: String?, reference: String, pathAsIs: Bool, encodesReference: Bool = false) throws(AFError) {
        CurlRuntime.ensureInitialized()
        guard let handle = curl_url() else { throw .invalidRequest(reason: "out of memory parsing a URL") }
        defer { curl_url_cleanup(handle) }
        let flags = UInt32(pathAsIs ? CURLU_PATH_AS_IS : 0)
        if let base {
            guard curl_url_set(handle, CURLUPART_URL, base, flags) == CURLUE_OK else {
                throw .invalidRequest(reason: "invalid URL '\(MessageQuote.url(base))'")
            }
        }
        let referenceFlags = flags | (encodesReference ? UInt32(CURLU_URLENCODE) | UInt32(CURLU_ALLOW_SPACE) : 0)
        let code = curl_url_set(handle, CURLUPART_URL, reference, referenceFlags)
        guard code == CURLUE_OK else {
            let why = curl_url_strerror(code).map { String(cString: $0) } ?? "cannot parse it"
            throw .invalidRequest(reason: "invalid URL '\(MessageQuote.url(reference))': \(why.lowercasedFirst)")
        }
        func part(_ which: CURLUPart, _ extra: UInt32 = 0) -> String? {
            Self.part(handle, which, extra)
        }
        let rawScheme = part(CURLUPART_SCHEME) ?? ""
        let scheme = rawScheme.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw .invalidRequest(reason: "unsupported URL scheme '\(MessageQuote.capped(scheme))' in '\(MessageQuote.url(reference))'; af speaks http and https")
        }
        guard let host = part(CURLUPART_HOST), !host.isEmpty else {
            throw .invalidRequest(reason: "invalid URL '\(MessageQuote.url(reference))': no host name")
        }
        // libcurl decodes a percent-encoded host; what it decodes to must still be a host
        // name (letters, digits, `-._~`, an IPv6 literal, or non-ASCII for IDN), never control
        // characters or invalid UTF-8 that would reach the Host header and the resolver.
        guard host.unicodeScalars.allSatisfy({ scalar in
            switch scalar.value {
            case 0x61...0x7A, 0x41...0x5A, 0x30...0x39: return true
            case 0x2D, 0x2E, 0x5F, 0x7E, 0x5B, 0x5D, 0x3A: return true  // - . _ ~ [ ] :
            case 0...0x7F: return false
            default:
                return scalar != "\u{FFFD}" && scalar.properties.generalCategory != .format && scalar.properties.generalCategory != .control
            }
        }) else {
            throw .invalidRequest(reason: "invalid URL '\(MessageQuote.url(reference))': the host has characters no host name has")
        }
        let asciiHost: String
        switch IDNA.asciiHost(host) {
        case .success(let ascii):
            asciiHost = ascii
        case .failure(.labelTooLong(let label, let length)):
            let size = length == Int.max ? "far more than that" : "\(length)"
            throw .invalidRequest(reason: "invalid host name: the label '\(MessageQuote.capped(label))' takes \(size) bytes in its ASCII form (IDNA), and DNS allows \(IDNA.maximumLabelLength)")
        }
        // libcurl encodes a followed reference's path and query, not its user name and
        // password: a space left there made a URL that did not parse again.
        let rawUser = part(CURLUPART_USER).map { encodesReference ? Self.encodingSpacesAndNonASCII($0) : $0 }
        let rawPassword = part(CURLUPART_PASSWORD).map { encodesReference ? Self.encodingSpacesAndNonASCII($0) : $0 }
        if encodesReference {
            // Where libcurl renders the URL (an IPv6 host), it renders them encoded too.
            if let rawUser { _ = curl_url_set(handle, CURLUPART_USER, rawUser, 0) }
            if let rawPassword { _ = curl_url_set(handle, CURLUPART_PASSWORD, rawPassword, 0) }
        }
        let rawPort = part(CURLUPART_PORT)
        let rawPath = part(CURLUPART_PATH)
        let query = part(CURLUPART_QUERY)
        if asciiHost != host { _ = curl_url_set(handle, CURLUPART_HOST, asciiHost, 0) }
        parts = Parts(
            scheme: scheme,
            user: rawUser == nil ? nil : part(CURLUPART_USER, UInt32(CURLU_URLDECODE)),
            password: rawPassword == nil ? nil : part(CURLUPART_PASSWORD, UInt32(CURLU_URLDECODE)),
            host: asciiHost,
            port: rawPort.flatMap { Int($0) },
            path: rawPath ?? "/",
            query: query,
            string: Self.compose(scheme: rawScheme, user: rawUser, password: rawPassword, host: asciiHost, port: rawPort, path: rawPath, query: query)
                ?? Self.rendered(handle) ?? reference
        )
    }

    /// `text` with each space and byte past ASCII percent-encoded, as libcurl encodes a
    /// followed reference's path.
    private static func encodingSpacesAndNonASCII(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x20 || $0 >= 0x80 }) else { return text }
        var out: [UInt8] = []
        for byte in text.utf8 {
            if byte == 0x20 || byte >= 0x80 {
                out += Array("%\(Hex.encode([byte], uppercase: true))".utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// One part of a parsed URL, as libcurl gives it.
    private static func part(_ handle: OpaquePointer, _ which: CURLUPart, _ extra: UInt32 = 0) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, which, &out, extra) == CURLUE_OK, let out else { return nil }
        defer { curl_free(out) }
        return String(cString: out)
    }

    /// The URL without its fragment as libcurl renders it (a formatted print, the dearest
    /// part of a parse).
    private static func rendered(_ handle: OpaquePointer) -> String? {
        guard var rendered = part(handle, CURLUPART_URL) else { return nil }
        // Searched as bytes: a Character search walks grapheme clusters.
        if let hash = rendered.utf8.firstIndex(of: UInt8(ascii: "#")) { rendered = String(rendered[..<hash]) }
        return rendered
    }

    /// The URL put together from its parts the way libcurl renders it:
    /// `scheme://[user[:password]@]host[:port]/path[?query]` (an empty query is left out).
    /// Nil for a host libcurl rewrites when rendering (an IPv6 literal, which may carry a
    /// zone; a `%`; non-ASCII), which is then rendered by libcurl.
    private static func compose(scheme: String, user: String?, password: String?, host: String, port: String?, path: String?, query: String?) -> String? {
        guard !libcurlRewrites(host: host) else { return nil }
        var text = scheme
        text += "://"
        if let user { text += user }
        if let password {
            text += ":"
            text += password
        }
        if user != nil || password != nil { text += "@" }
        text += host
        if let port {
            text += ":"
            text += port
        }
        if let path {
            // A byte, not a Character: a combining mark after the slash makes one Character
            // that is not "/", and the path would gain a second slash.
            if path.utf8.first != UInt8(ascii: "/") { text += "/" }
            text += path
        } else {
            text += "/"
        }
        if let query, !query.isEmpty {
            text += "?"
            text += query
        }
        return text
    }

    /// For tests and fuzzing: `text` as libcurl itself renders it (without the fragment),
    /// to compare with `string`, which is put together from the parts; nil when it does not
    /// parse. A host in Unicode is given to libcurl in its ASCII form first, as `init` does.
    package static func libcurlRendering(of text: String) -> String? {
        CurlRuntime.ensureInitialized()
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, text, 0) == CURLUE_OK else { return nil }
        if let host = part(handle, CURLUPART_HOST), case .success(let ascii) = IDNA.asciiHost(host), ascii != host {
            _ = curl_url_set(handle, CURLUPART_HOST, ascii, 0)
        }
        return rendered(handle)
    }

    /// Whether libcurl rewrites `host` when it renders a URL (an IPv6 literal, which may
    /// carry a zone; a `%`; non-ASCII), so that the URL is not put together from its parts.
    package static func libcurlRewrites(host: String) -> Bool {
        !host.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "[") }
    }

    /// Resolves a reference (a `Location` value) against this URL.
    public func resolving(_ reference: String) throws(AFError) -> HTTPURL {
        try HTTPURL(base: string, reference: reference, pathAsIs: false, encodesReference: true)
    }

    /// The port that will be used: the explicit one or the scheme's default.
    public var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// Whether `other` has the same scheme, host and port.
    public func sameOrigin(as other: HTTPURL) -> Bool {
        scheme == other.scheme && host.lowercased() == other.host.lowercased() && effectivePort == other.effectivePort
    }

    /// The URL without user name and password, and otherwise the same: same scheme, host,
    /// port, path and query.
    ///
    /// libcurl's parser removes the two parts; the URL is not cut as text. (Cutting it once
    /// scanned Characters for the end of the authority: a slash followed by a combining mark
    /// is one Character, so the cut went on to an `@` in the path and made what followed it
    /// the host — a redirect could send a request, and its credentials, to another host.)
    /// Should the result not be the same origin, the URL is returned as it is: its
    /// credentials then stay with the host they were given for.
    public func removingCredentials() -> HTTPURL {
        guard user != nil || password != nil else { return self }
        CurlRuntime.ensureInitialized()
        guard let handle = curl_url() else { return self }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, string, UInt32(CURLU_PATH_AS_IS)) == CURLUE_OK,
              curl_url_set(handle, CURLUPART_USER, nil, 0) == CURLUE_OK,
              curl_url_set(handle, CURLUPART_PASSWORD, nil, 0) == CURLUE_OK,
              let text = Self.rendered(handle),
              let stripped = try? HTTPURL(parsing: text, pathAsIs: true),
              stripped.user == nil, stripped.password == nil,
              stripped.scheme == scheme, stripped.host == host, stripped.port == port,
              stripped.path == path, stripped.query == query
        else { return self }
        return stripped
    }

    /// `host:port` for messages.
    public var authority: String { "\(host):\(effectivePort)" }

    /// The path and query as they appear on the request line.
    public var target: String { query.map { "\(path)?\($0)" } ?? path }

    /// The URL as it is sent.
    public var description: String { string }
}

extension String {
    /// The string with its first character lower-cased.
    var lowercasedFirst: String {
        guard let first else { return self }
        return first.lowercased() + dropFirst()
    }
}
