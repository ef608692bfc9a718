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
}
