import AFEngine

/// What af keeps out of the output that gets kept or pasted — the bug report `--debug`
/// writes, and the request `--report=json` records: the values of credentials. Both name
/// them (which scheme, which cookies) so that they still show what was sent, but a debug
/// report gets pasted, and `-a`'s password hidden in the argument list was printed a few
/// lines below it, base64-encoded, in libcurl's trace of the sent head; and a CI job keeps
/// its reports as artifacts, where a token from `--auth-cmd` or a netrc would outlive the
/// job. (The headers of the report's response are the server's, and stay as they came.)
///
/// Credentials are the values of `Authorization`, `Proxy-Authorization`, `Cookie`,
/// `Set-Cookie` and of every `--secret-header` (the headers a cross-origin redirect drops),
/// and passwords in URLs. `-v` and `--print=H` still show heads as sent: that output is
/// asked for by name, and read rather than kept.
struct CredentialRedaction: Sendable {
    static let hidden = "(hidden)"

    /// The headers whose values are hidden: those a cross-origin redirect drops, and the
    /// cookies a server sets.
    private let names: Set<HTTPHeaders.Name>

    init(secretHeaders: [String]) {
        names = Set(RedirectPolicy.credentialHeaders + [.setCookie] + secretHeaders.map { HTTPHeaders.Name($0) })
    }

    /// Whether header `name` is a credential: one a cross-origin redirect drops, or named by
    /// `--secret-header`. (Without building the set `init` makes: the report asks for every
    /// header of every line of a batch.)
    static func isCredential(_ name: HTTPHeaders.Name, secretHeaders: [String]) -> Bool {
        RedirectPolicy.credentialHeaders.contains(name) || secretHeaders.contains { HTTPHeaders.Name($0) == name }
    }

    /// A head line as libcurl traces it (`Name: value`), its value hidden when it is a
    /// credential; other lines as they are.
    func headLine(_ line: Substring) -> String {
        guard let colon = line.firstIndex(of: ":") else { return String(line) }
        let name = line[..<colon]
        guard let shown = hiddenValue(name: name, value: line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }) else { return String(line) }
        return String(name) + ": " + shown
    }

    /// The value a report shows for a header af sent: hidden when it is a credential.
    func value(of header: HTTPHeader) -> String {
        hiddenValue(name: Substring(header.name.rawValue), value: Substring(header.value)) ?? header.value
    }

    /// One of libcurl's notes, with a cookie's value (`Added cookie sid="…" for domain …`)
    /// and a URL's password (`Uses proxy env variable … == 'http://u:p@proxy'`) hidden.
    func note(_ line: Substring) -> String {
        let text = withoutURLPasswords(String(line))
        for verb in ["Added cookie ", "Replaced cookie "] where text.hasPrefix(verb) {
            let bytes = Array(text.utf8)
            guard let open = bytes.firstIndex(of: UInt8(ascii: "\"")),
                  let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "\"")) else { return text }
            return String(decoding: bytes[...open], as: UTF8.self) + Self.hidden + String(decoding: bytes[close...], as: UTF8.self)
        }
        return text
    }

    /// An argument with a credential header item's value (`Authorization:Bearer x`) and a
    /// URL's password (`http://ada:pw@host`, also in `--proxy=https:http://u:p@proxy`) hidden.
    func argument(_ text: String) -> String {
        if case .header(let name, let value)? = try? RequestItemParser.parse(text).item,
           let shown = hiddenValue(name: Substring(name), value: Substring(value)) {
            return name + ":" + shown
        }
        return withoutURLPasswords(text)
    }

    /// The value shown for header `name`, or nil when it is no credential: an authorization's
    /// scheme is kept (`Basic (hidden)`), and a cookie's name (`sid=(hidden)`), with a
    /// `Set-Cookie`'s attributes after it.
    private func hiddenValue(name: Substring, value: Substring) -> String? {
        let header = HTTPHeaders.Name(String(name))
        guard names.contains(header) else { return nil }
        switch header {
        case .authorization, .proxyAuthorization:
            guard let space = value.firstIndex(of: " ") else { return Self.hidden }
            return String(value[..<space]) + " " + Self.hidden
        case .cookie:
            return value.split(separator: ";").map { pair in
                let trimmed = pair.drop { $0 == " " }
                return (trimmed.firstIndex(of: "=").map { String(trimmed[..<$0]) + "=" } ?? "") + Self.hidden
            }.joined(separator: "; ")
        case .setCookie:
            let first = value.prefix { $0 != ";" }
            let cookie = (first.firstIndex(of: "=").map { String(first[..<$0]) + "=" } ?? "") + Self.hidden
            return cookie + String(value.dropFirst(first.count))
        default:
            return Self.hidden
        }
    }

    /// `text` with the password of every `scheme://user:password@` in it hidden.
    func withoutURLPasswords(_ text: String) -> String {
        MessageQuote.withoutPasswords(in: text, writing: Self.hidden)
    }
}
