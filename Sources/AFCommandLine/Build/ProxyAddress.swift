import AFEngine

/// The URL part of `--proxy SCHEME:URL`, checked as libcurl will read it, so that a proxy
/// it cannot use is a usage error before anything is sent rather than a connection failure
/// (a scheme it does not speak was even tried as a plain HTTP proxy).
enum ProxyAddress {
    /// The proxy schemes libcurl speaks; a URL without one is an HTTP proxy.
    static let schemes = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    /// Whether `url` (with or without its scheme) has a `USER:PASSWORD@` part.
    static func holdsCredentials(_ url: String) -> Bool {
        let afterScheme = url.utf8Offset(of: "://").map { url.utf8.dropFirst($0 + 3) } ?? url.utf8[...]
        return afterScheme.urlAuthority.contains(UInt8(ascii: "@"))
    }

    /// `value` (a `--proxy` value, `SCHEME:URL`, or a URL) with the password of its
    /// `USER:PASSWORD@` replaced by `***`, as messages show it.
    static func withoutPassword(_ value: String) -> String {
        if let (scheme, url) = value.splitOnce(byte: UInt8(ascii: ":")), url.containsBytes(of: "://") {
            return "\(scheme):\(MessageQuote.withoutPassword(String(url)))"
        }
        return MessageQuote.withoutPassword(value)
    }

    /// Why `url` cannot name a proxy, or nil when it can.
    static func problem(_ url: String) -> String? {
        // libcurl refuses such a URL ("Unsupported proxy syntax in '…'", quoting it whole,
        // password and all) only once the request is under way.
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            return "a URL holds no spaces or control characters; percent-encode them (a space is %20)"
        }
        var bytes = Array(url.utf8)[...]
        if let offset = url.utf8Offset(of: "://") {
            let scheme = String(decoding: bytes.prefix(offset), as: UTF8.self).lowercased()
            guard schemes.contains(scheme) else {
                return "'\(scheme)' is no proxy scheme af can use: \(schemes.dropLast().joined(separator: ", ")) or \(schemes.last ?? "")"
            }
            bytes = bytes.dropFirst(offset + 3)
        }
        var authority = URLBuilder.hostAndPort(bytes)
        var port: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                return "'[' without ']' around the proxy's IPv6 address"
            }
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { return "only ':PORT' may follow the ']' of the proxy's address" }
                port = after.dropFirst()
            }
        } else {
            let colons = authority.count { $0 == UInt8(ascii: ":") }
            if colons > 1 { return "an IPv6 address goes in brackets, as in http://[::1]:3128" }
            if let colon = authority.firstIndex(of: UInt8(ascii: ":")) {
                port = authority[(colon + 1)...]
                authority = authority[..<colon]
            }
            if authority.isEmpty { return "no proxy host" }
        }
        if let port {
            let text = String(decoding: port, as: UTF8.self)
            guard PortNumber.parse(text) != nil else { return PortNumber.refusal(text) }
        }
        return nil
    }
}
