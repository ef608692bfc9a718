/// RFC 9110's `token`: a header's name, a method, a parameter's value unquoted.
package enum HTTPToken {
    /// Whether `text` is a token: one or more ASCII letters, digits and `!#$%&'*+-.^_`|~`.
    package static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || marks.contains(byte)
        }
    }

    /// The marks a token may hold besides letters and digits (`tchar`).
    private static let marks = Set("!#$%&'*+-.^_`|~".utf8)
}
