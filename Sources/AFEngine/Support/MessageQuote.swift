/// Text quoted in an error message, capped: a message is one line a person reads, and what
/// it quotes can be anything a user typed or a server sent (a 2 MB argument, a 90 KB
/// `Location`, a 100 KB reason phrase), which must not turn the line into a page.
package enum MessageQuote {
    /// The most bytes of UTF-8 a message quotes of one piece of text.
    package static let limit = 120

    /// `text`, or its first characters up to `limit` bytes followed by `…` and the full
    /// length in bytes.
    package static func capped(_ text: some StringProtocol) -> String {
        guard text.utf8.count > limit else { return String(text) }
        var prefix = ""
        for character in text {
            guard prefix.utf8.count + character.utf8.count <= limit else { break }
            prefix.append(character)
        }
        return "\(prefix)… (\(text.utf8.count) bytes)"
    }

    /// A URL as a message quotes it: capped, and with the password of a `USER:PASSWORD@` in
    /// it written `***`. A message goes to standard error, which a CI job keeps in its log;
    /// the user knows what they typed, and the error is about the rest of the URL.
    package static func url(_ text: some StringProtocol) -> String {
        capped(withoutPassword(String(text)))
    }

    /// `text` with the password of its authority's user information replaced by `***`
    /// (nothing changed without one).
    package static func withoutPassword(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard let user = userInformation(bytes, from: authorityStart(bytes)), let colon = password(in: bytes, user) else { return text }
        return String(decoding: bytes[..<(colon + 1)] + Array("***".utf8) + bytes[user.upperBound...], as: UTF8.self)
    }

    /// `text` with the password of every URL in it (each `scheme://USER:PASSWORD@`, however
    /// many slashes follow the scheme) replaced by `replacement`: for text that holds several
    /// URLs, or a URL among other words (a proxy setting, a list of proxies, a line of
    /// libcurl's trace).
    package static func withoutPasswords(in text: String, writing replacement: String) -> String {
        guard text.containsByte(UInt8(ascii: ":")), text.containsByte(UInt8(ascii: "@")) else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            out.append(byte)
            index += 1
            // Each authority ends at its first `/` or white space (which no URL holds), so it
            // never reaches into the next URL.
            guard byte == UInt8(ascii: ":"), let start = authority(bytes, afterColon: index - 1),
                  let user = userInformation(bytes, from: start, upToSpace: true), let colon = password(in: bytes, user) else { continue }
            out += bytes[index...colon]
            out += replacement.utf8
            index = user.upperBound
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` without the user information of its authority (`USER:PASSWORD@`), as a proxy
    /// URL is named in messages.
    package static func withoutCredentials(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard let user = userInformation(bytes, from: authorityStart(bytes)) else { return text }
        return String(decoding: bytes[..<user.lowerBound] + bytes[(user.upperBound + 1)...], as: UTF8.self)
    }

    /// Where the authority of the URL in `bytes` starts: after its scheme and the slashes
    /// after it, or (without a scheme) after any slashes it starts with.
    private static func authorityStart(_ bytes: [UInt8]) -> Int {
        let scheme = bytes.prefix(while: \.isURLSchemeByte)
        if scheme.endIndex < bytes.count, bytes[scheme.endIndex] == UInt8(ascii: ":"),
           let start = authority(bytes, afterColon: scheme.endIndex) {
            return start
        }
        return bytes.prefix(while: isSlash).endIndex
    }

    /// Where the authority starts when the `:` at `colon` ends a URL's scheme: after the
    /// slashes that follow it, which the URL parser (libcurl's) skips however many there are
    /// and whichever way they lean (`https://`, `https:/`, `https:\\`); with none, only
    /// after `http:` or `https:`, since in `user:password@host` the colon is the password's.
    /// Nil when the colon ends no scheme.
    private static func authority(_ bytes: [UInt8], afterColon colon: Int) -> Int? {
        let start = bytes[(colon + 1)...].prefix(while: isSlash).endIndex
        if start > colon + 1 { return start }
        let scheme = bytes[..<colon].reversed().prefix(while: \.isURLSchemeByte).count
        let name = bytes[(colon - scheme)..<colon].lazy.map { $0 | 0x20 }
        return name.elementsEqual("http".utf8) || name.elementsEqual("https".utf8) ? start : nil
    }

    private static func isSlash(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\")
    }

    /// Where, in `bytes`, the `USER[:PASSWORD]` before the last `@` of the authority starting
    /// at `start` lies (ended by white space too with `upToSpace`); nil without an `@` there.
    private static func userInformation(_ bytes: [UInt8], from start: Int, upToSpace: Bool = false) -> Range<Int>? {
        let authority = bytes[start...].urlAuthority
        let end = upToSpace ? authority.firstIndex { $0 == 0x20 || (0x09...0x0D).contains($0) } ?? authority.endIndex : authority.endIndex
        return authority[..<end].lastIndex(of: UInt8(ascii: "@")).map { start..<$0 }
    }

    /// The `:` before the password in the user information `user`; nil without a password.
    private static func password(in bytes: [UInt8], _ user: Range<Int>) -> Int? {
        guard let colon = bytes[user].firstIndex(of: UInt8(ascii: ":")), colon + 1 < user.upperBound else { return nil }
        return colon
    }
}
