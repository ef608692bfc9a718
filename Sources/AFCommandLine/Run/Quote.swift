/// Keeps error lines readable whatever the user typed: arguments quoted in messages are
/// capped, so a 2 MB item gives a one-line error, not a 2 MB one.
enum Quote {
    /// The most characters of an argument that a message quotes.
    static let limit = 120

    /// `text`, or its first `limit` characters followed by `…` and the full length.
    static func argument(_ text: String) -> String {
        guard text.utf8.count > limit else { return text }
        var prefix = ""
        for character in text {
            guard prefix.utf8.count + character.utf8.count <= limit else { break }
            prefix.append(character)
        }
        return "\(prefix)… (\(text.utf8.count) bytes)"
    }
}
