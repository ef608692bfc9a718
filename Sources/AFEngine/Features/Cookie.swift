/// A cookie as libcurl's cookie engine keeps it (the Netscape cookie-file fields).
public struct Cookie: Sendable, Equatable {
    /// The cookie name.
    public var name: String
    /// The cookie value.
    public var value: String
    /// The domain, without a leading dot.
    public var domain: String
    /// Whether subdomains of `domain` receive it too (a `Domain` attribute was given).
    public var includeSubdomains: Bool
    /// The path prefix it is sent for.
    public var path: String
    /// Sent over https only.
    public var secure: Bool
    /// Marked `HttpOnly` by the server.
    public var httpOnly: Bool
    /// Expiry in seconds since the epoch; 0 for a session cookie.
    public var expires: Int
    /// The server set bytes that are not UTF-8: `name` and `value` hold them one byte per
    /// character (ISO-8859-1), and they go back to servers as those bytes. (Read as UTF-8
    /// alone they became U+FFFD, and the cookie sent back was another cookie.)
    public var isLatin1: Bool

    /// Creates a cookie; by default a host-only session cookie for `/`.
    public init(name: String, value: String, domain: String, includeSubdomains: Bool = false, path: String = "/",
                secure: Bool = false, httpOnly: Bool = false, expires: Int = 0, isLatin1: Bool = false)
    {
        self.name = name
        self.value = value
        self.domain = domain
        self.includeSubdomains = includeSubdomains
        self.path = path
        self.secure = secure
        self.httpOnly = httpOnly
        self.expires = expires
        self.isLatin1 = isLatin1
    }

    /// Whether libcurl can carry the cookie as it is: a name, and no control character in it
    /// (a tab only in the value, as libcurl takes from a server). A line break in an edited
    /// session's value would otherwise start another line of libcurl's cookie list (another
    /// cookie, for any domain), and a tab in a name or path would shift the list's fields.
    public var isWellFormed: Bool {
        func plain(_ text: String, tab: Bool) -> Bool {
            !text.utf8.contains { ($0 < 0x20 && !(tab && $0 == 0x09)) || $0 == 0x7F }
        }
        return !name.isEmpty && plain(name, tab: false) && plain(value, tab: true) && plain(domain, tab: false) && plain(path, tab: false)
    }

    /// Parses one line of libcurl's cookie list (Netscape format) as its bytes: UTF-8, or
    /// ISO-8859-1 (`isLatin1`) when they are not UTF-8.
    public init?(netscapeBytes bytes: some Collection<UInt8>) {
        let (line, isLatin1) = String.utf8OrLatin1(bytes)
        self.init(netscapeLine: line)
        self.isLatin1 = isLatin1
    }

    /// The Netscape line as the bytes libcurl reads back: UTF-8, or one byte per character
    /// for a cookie whose bytes were not UTF-8 (a character past U+00FF, which such a
    /// cookie only has if edited, goes as UTF-8).
    public var netscapeBytes: [UInt8] {
        isLatin1 ? netscapeLine.latin1Bytes : Array(netscapeLine.utf8)
    }

    /// Parses one line of libcurl's cookie list (Netscape format).
    public init?(netscapeLine line: String) {
        var text = line
        var httpOnly = false
        if text.hasPrefix("#HttpOnly_") {
            httpOnly = true
            text.removeFirst("#HttpOnly_".count)
        }
        let fields = text.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 7, let expires = Int(fields[4]) else { return nil }
        var domain = fields[0]
        if domain.hasPrefix(".") { domain.removeFirst() }
        self.init(name: fields[5], value: fields[6...].joined(separator: "\t"), domain: domain,
                  includeSubdomains: fields[1] == "TRUE", path: fields[2], secure: fields[3] == "TRUE", httpOnly: httpOnly, expires: expires)
    }

    /// The Netscape line libcurl reads back.
    public var netscapeLine: String {
        let host = includeSubdomains ? "." + domain : domain
        return "\(httpOnly ? "#HttpOnly_" : "")\(host)\t\(includeSubdomains ? "TRUE" : "FALSE")\t\(path)\t\(secure ? "TRUE" : "FALSE")\t\(expires)\t\(name)\t\(value)"
    }

    /// What makes two cookies the same cookie (RFC 6265 §5.3): a newer one with the same
    /// name, domain and path replaces the older.
    public struct Identity: Hashable, Sendable {
        public let name: String
        public let domain: String
        public let path: String
    }

    /// This cookie's name, domain and path.
    public var identity: Identity { Identity(name: name, domain: domain, path: path) }

    /// Whether a request to `url` at `now` carries the cookie (RFC 6265 §5.4): its host is
    /// the cookie's domain (or below it, with `includeSubdomains`), its path the cookie's
    /// path or one under it, its scheme https for a `secure` cookie, and it has not expired.
    public func isSent(to url: HTTPURL, at now: Int) -> Bool {
        let host = url.host.lowercased(), domain = self.domain.lowercased()
        guard host == domain || (includeSubdomains && host.hasSuffix("." + domain)) else { return false }
        let target = url.path.isEmpty ? "/" : url.path
        let pathMatches = target == path || (target.hasPrefix(path)
            && (path.hasSuffix("/") || target.utf8.dropFirst(path.utf8.count).first == UInt8(ascii: "/")))
        return pathMatches && (!secure || url.scheme == "https") && !isExpired(at: now)
    }

    /// Whether it has expired at `now` (seconds since the epoch).
    public func isExpired(at now: Int) -> Bool {
        expires != 0 && expires <= now
    }
}
