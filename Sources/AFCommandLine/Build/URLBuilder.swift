import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Turns the URL argument into an absolute URL (SPEC §1 shorthands).
enum URLBuilder {
    /// Applies shorthands (`:3000/x`, `example.org`, `--https`), percent-encodes characters
    /// that cannot appear in a URL, and appends query items.
    static func build(_ given: String, https: Bool, query: [(name: String, value: String)], pathAsIs: Bool) throws(CommandFailure) -> HTTPURL {
        // An empty argument (`af "$URL"` with URL unset) read as "http://", with no host; so
        // did one of nothing but control characters ("check the URL ''").
        let argument = withoutSurroundingControls(given)
        if argument.isEmpty {
            let what = given.isEmpty ? "" : given.utf8.allSatisfy({ $0 == 32 || $0 == 9 }) ? " (only blanks)" : " (only blanks and control characters)"
            throw .usage("the URL argument is empty\(what); give the URL to request (a variable that should hold it may be unset)")
        }
        let expanded = try expand(argument, https: https)
        var text = encodeInvalidCharacters(expanded)
        if !query.isEmpty {
            text = PercentEncoding.appendingQuery(PercentEncoding.query(query), to: text)
        }
        let parsed: HTTPURL
        do {
            parsed = try HTTPURL(parsing: text, pathAsIs: pathAsIs)
        } catch {
            if let meant = SchemeTypo.correction(of: argument) {
                throw .usage("\(error); did you mean '\(MessageQuote.url(meant))'?")
            }
            if Self.hasBareIPv6Address(text) {
                throw .usage("\(error); an IPv6 address goes in brackets, as in http://[::1]:8080/")
            }
            // A space is percent-encoded before parsing, so the parser saw "a%20b.com" and
            // quoted that: name the host as typed.
            if let host = Self.hostWithBlank(expanded) {
                throw .usage("invalid URL '\(MessageQuote.url(argument))': the host '\(MessageQuote.capped(host))' has a space in it; a host name has none")
            }
            if Self.hasTwoAtSigns(text) {
                throw .usage("\(error); an '@' in a user name or password is written %40 (or give them with -a USER:PASSWORD)")
            }
            if let password = Self.passwordCutShort(text) {
                // The parser's reason would quote the password, which it took for a port.
                throw .usage("invalid URL '\(MessageQuote.url(password.shown))': its password holds a '\(password.character)', which ends a URL's host part; write it \(password.encoded) (or give the credentials with -a USER:PASSWORD)")
            }
            // The parser's reason quotes the URL it read; the argument is named again only
            // when a shorthand or encoding made that differ from what was typed.
            throw .usage(text == argument ? "\(error); check the URL" : "\(error); check the URL '\(MessageQuote.url(argument))'")
        }
        // `https//host/x` (the colon left out) is a URL too, to a host named "https": no one's
        // host, and a search domain could make it someone's.
        if parsed.host.utf8.count <= 5, ["http", "https"].contains(parsed.host.lowercased()), let meant = SchemeTypo.correction(of: argument) {
            throw .usage("invalid URL '\(MessageQuote.url(argument))': it names the host '\(parsed.host)'; did you mean '\(MessageQuote.url(meant))'?")
        }
        return parsed
    }

    /// The argument without the spaces and control characters around it, as a browser reads
    /// a URL (WHATWG URL: C0 controls and spaces at either end are dropped): `af "$(cat
    /// url.txt)"` of a file with CRLF line ends kept the CR, sent as `%0D` at the end of
    /// the path, and `af ' example.org'` named a host ' '.
    static func withoutSurroundingControls(_ argument: String) -> String {
        let bytes = argument.utf8
        guard let first = bytes.first, let last = bytes.last, first <= 0x20 || last <= 0x20 else { return argument }
        guard let start = bytes.firstIndex(where: { $0 > 0x20 }), let end = bytes.lastIndex(where: { $0 > 0x20 }) else { return "" }
        return String(argument[start...end])
    }

    /// Whether the URL's host part holds two or more colons outside brackets, as an IPv6
    /// address written without them (`http://::1/`, `fe80::1:8080`) does.
    static func hasBareIPv6Address(_ url: String) -> Bool {
        guard let offset = url.utf8Offset(of: "://") else { return false }
        let host = hostAndPort(url.utf8.dropFirst(offset + 3))
        return !host.contains(UInt8(ascii: "[")) && host.count(where: { $0 == UInt8(ascii: ":") }) >= 2
    }

    /// The host of `url` (as typed, with its scheme) when it holds a space or a tab.
    static func hostWithBlank(_ url: String) -> String? {
        guard let offset = url.utf8Offset(of: "://") else { return nil }
        let host = hostAndPort(url.utf8.dropFirst(offset + 3))
        guard host.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else { return nil }
        // Without a port after it (`:8080`).
        var name = host[...]
        if let colon = name.lastIndex(of: UInt8(ascii: ":")), name[name.index(after: colon)...].allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            name = name[..<colon]
        }
        return String(decoding: name, as: UTF8.self)
    }

    /// Whether the URL's authority holds more than one `@`, as credentials with an `@` in
    /// them, written as they are, make it (`http://u:p@ss@host/`).
    static func hasTwoAtSigns(_ url: String) -> Bool {
        guard let offset = url.utf8Offset(of: "://") else { return false }
        return url.utf8.dropFirst(offset + 3).urlAuthority.count(where: { $0 == UInt8(ascii: "@") }) >= 2
    }

    /// For a URL whose password holds a `#`, `?` or `/` written as it is
    /// (`http://bob:pa#ss@host/`): that character ended the authority, so the parser took
    /// `bob:pa` for a host and a port, and the rest for the fragment (or path, or query).
    /// Nil for any other URL (an `@` later in a path, after another `/`, is the path's own).
    static func passwordCutShort(_ url: String) -> PasswordCut? {
        guard let offset = url.utf8Offset(of: "://") else { return nil }
        let rest = url.utf8.dropFirst(offset + 3)
        let authority = rest.urlAuthority
        guard authority.endIndex < rest.endIndex, !authority.contains(UInt8(ascii: "@")),
              let colon = authority.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let cut = authority.endIndex
        let after = rest[rest.index(after: cut)...]
        guard let at = after.firstIndex(of: UInt8(ascii: "@")), !after[..<at].contains(UInt8(ascii: "/")) else { return nil }
        let shown = String(decoding: url.utf8[..<colon], as: UTF8.self) + ":***@" + String(decoding: after[after.index(after: at)...], as: UTF8.self)
        let character = Character(Unicode.Scalar(rest[cut]))
        return PasswordCut(shown: shown, character: character, encoded: "%" + Hex.encode(String(character).utf8, uppercase: true, separator: "%"),
                           user: String(decoding: authority[..<colon], as: UTF8.self), cut: after[..<at])
    }

    /// A password that a `#`, `?` or `/` in it cut short (`passwordCutShort`).
    struct PasswordCut {
        /// The URL with its credentials hidden: `http://bob:***@host/`.
        let shown: String
        /// The character, and as the URL writes it (`%23`).
        let character: Character
        let encoded: String
        /// The user (`bob`), and what came between the character and the `@` (`ss`).
        let user: String
        let cut: Substring.UTF8View
    }

    /// The host and port of a URL's authority, from the bytes after its `scheme://` (or a
    /// whole `HOST:PORT` text): up to the first `/`, `?` or `#`, without a `USER:PASSWORD@`.
    static func hostAndPort<Bytes: BidirectionalCollection>(_ bytes: Bytes) -> Bytes.SubSequence where Bytes.Element == UInt8 {
        let authority = bytes.urlAuthority
        guard let at = authority.lastIndex(of: UInt8(ascii: "@")) else { return authority }
        return authority[authority.index(after: at)...]
    }

    /// The URL with a scheme (and `localhost` for `:PORT` forms).
    static func expand(_ argument: String, https: Bool) throws(CommandFailure) -> String {
        if startsWithSchemeAndHost(argument) { return argument }
        if argument == "-" {
            // It was looked up as a host named "-" (a DNS failure, exit 1).
            throw .usage("'-' is not a URL: give the URL to request (a body comes from standard input by itself; af batch - reads command lines from it)")
        }
        let scheme = https ? "https://" : "http://"
        if argument.hasPrefix("://") {
            // HTTPie's `://host/path`: the default scheme, written out.
            let rest = argument.dropFirst(3)
            guard let first = rest.first, first != "/", first != ":" else {
                throw .usage("invalid URL '\(MessageQuote.url(argument))': no host after '://'")
            }
            return scheme + rest
        }
        if argument.hasPrefix("//"), let first = argument.utf8.dropFirst(2).first, first != UInt8(ascii: "/") {
            // A scheme-relative URL, as HTML writes them (`//cdn.example.org/x.js`, RFC 3986
            // §4.2): the default scheme (it was "http:////cdn…", "unsupported number of slashes").
            return scheme + argument.dropFirst(2)
        }
        if argument.hasPrefix(":") {
            let rest = argument.dropFirst()
            if rest.isEmpty { return scheme + "localhost" }
            if rest.first == "/" { return scheme + "localhost" + rest }
            if rest.first?.isASCIIDigit == true { return scheme + "localhost:" + rest }
        }
        if let fixed = slashesMended(argument) { return fixed }
        if schemeLength(of: argument) != nil { return argument }
        return scheme + argument
    }

    /// Whether `argument` is a scheme, `://` and then something other than a slash
    /// (`http://host/…`): a whole URL already, as every line of a typical batch is, which
    /// `expand` returns as it is. One pass over the bytes: asking the shorthand checks in turn
    /// cost about 650 instructions more a line of a batch.
    static func startsWithSchemeAndHost(_ argument: String) -> Bool {
        guard let length = schemeLength(of: argument) else { return false }
        guard let next = argument.utf8.dropFirst(length + 3).first else { return false }
        return next != UInt8(ascii: "/")
    }

    /// The length of the scheme `argument` starts with, when `://` follows it: a run of
    /// letters, digits, `+`, `.` and `-`; nil for any other start.
    static func schemeLength(of argument: String) -> Int? {
        var argument = argument
        return argument.withUTF8 { bytes in
            var index = 0
            while index < bytes.count, bytes[index].isURLSchemeByte { index += 1 }
            guard index > 0, index + 2 < bytes.count, bytes[index] == UInt8(ascii: ":"),
                  bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") else { return nil }
            return index
        }
    }

    /// `http:/host` and `https:///host`, a slash short or over, as curl reads them
    /// (`http://host`), rather than a host named "http" with an empty port; nil otherwise.
    /// Compared as bytes: this runs for every URL of a batch.
    static func slashesMended(_ argument: String) -> String? {
        var argument = argument
        // In place, without building arrays: most URLs have two slashes and leave at once.
        let mended = argument.withUTF8 { bytes -> (colon: Int, rest: Int)? in
            // "http:" or "https:", in any case.
            let colon = bytes.count > 4 && bytes[4] == UInt8(ascii: ":") ? 4 : bytes.count > 5 && bytes[5] == UInt8(ascii: ":") ? 5 : 0
            guard colon > 0 else { return nil }
            for index in 0..<colon {
                let letter: UInt8 = index == 0 ? 0x68 : index == 3 ? 0x70 : index == 4 ? 0x73 : 0x74  // h t t p s
                guard bytes[index] | 0x20 == letter else { return nil }
            }
            var rest = colon + 1
            while rest < bytes.count, bytes[rest] == UInt8(ascii: "/") { rest += 1 }
            let slashes = rest - colon - 1
            guard slashes > 0, slashes != 2, rest < bytes.count else { return nil }
            return (colon, rest)
        }
        guard let (colon, rest) = mended else { return nil }
        let bytes = Array(argument.utf8)
        return String(decoding: bytes[..<colon], as: UTF8.self) + "://" + String(decoding: bytes[rest...], as: UTF8.self)
    }

    /// Whether `host` is an IPv4 or IPv6 address (bare or in brackets), or nil for a name.
    static func addressFamily(of host: String) -> TransferOptions.IPVersion? {
        var text = Substring(host)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        var storage = in6_addr()
        return String(text).withCString { pointer -> TransferOptions.IPVersion? in
            if inet_pton(AF_INET, pointer, &storage) == 1 { return .v4 }
            if inet_pton(AF_INET6, pointer, &storage) == 1 { return .v6 }
            return nil
        }
    }

    /// Percent-encodes spaces, controls, non-ASCII and the few printable characters that are
    /// never valid in a URL; existing `%XX` escapes are kept.
    static func encodeInvalidCharacters(_ text: String) -> String {
        // Looked for in place (the generic search steps through an iterator byte by byte).
        let needed = text.utf8.withContiguousStorageIfAvailable { $0.contains(where: needsEncoding) } ?? text.utf8.contains(where: needsEncoding)
        guard needed else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if needsEncoding(byte) {
                out.append(contentsOf: ("%" + hex(byte)).utf8)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func needsEncoding(_ byte: UInt8) -> Bool {
        switch byte {
        case 0...0x20, 0x7F...0xFF, UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\\"),
             UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
            return true
        default:
            return false
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        Hex.encode([byte], uppercase: true)
    }
}

