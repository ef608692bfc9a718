import AFEngine

/// Keeps error lines readable whatever the user typed or a server sent: arguments quoted in
/// messages are capped, so a 2 MB item gives a one-line error, not a 2 MB one, and control
/// characters in a message are shown, not obeyed.
enum Quote {
    /// `text`, or its first 120 bytes' worth of characters followed by `…` and the full
    /// length (`MessageQuote`, which the engine's messages use too), with the password of
    /// any URL in it written `***`: a message goes to standard error, which a CI job keeps in
    /// its log, and the URL argument is not the only one that holds a URL (`Referer:URL`, a
    /// second URL, a URL in curly quotes or with a no-break space in it, each named as typed).
    static func argument(_ text: String) -> String { MessageQuote.capped(MessageQuote.withoutPasswords(in: text, writing: "***")) }

    /// `text` as a shell word (quoted where the shell would split or expand it), capped as
    /// `argument` caps: a command a message tells the user to type.
    static func shellWord(_ text: String) -> String { argument(CurlCommand.quote(text)) }

    /// The most bytes of an argument that a message quotes.
    static var limit: Int { MessageQuote.limit }

    /// `text` with its control characters (C0, DEL, C1) written out as `\r`, `\n`, `\t` or
    /// `\x1B`: a message quotes arguments, file contents and what servers send (a reason
    /// phrase, a header), and a line break must not split its one line, nor an escape
    /// sequence from a server recolour or rewrite the user's terminal. `\xNN` is the notation
    /// a shown body uses (`TerminalText`) and `invalidUTF8` uses for a stray byte, so one
    /// message never mixes two.
    static func controls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\r": escaped += "\\r"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            default:
                // Every control is at most U+009F: one byte's two digits.
                escaped += "\\x" + Hex.encode([UInt8(truncatingIfNeeded: scalar.value)], uppercase: true)
            }
        }
        return escaped
    }

    /// `bytes` as text with each byte that is not part of valid UTF-8 written `\xNN`; nil
    /// when they are UTF-8 text. For arguments and batch lines, which af reads as UTF-8: a
    /// byte in another encoding would otherwise turn into U+FFFD unseen and be sent as such.
    static func invalidUTF8<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        // Every batch line comes here, twice in a checked file: ASCII is settled a word at a time.
        if bytes.isAllASCII { return nil }
        let bytes = Array(bytes)
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var text = ""
        var offset = 0
        var invalid = false
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                text.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                invalid = true
                for byte in bytes[offset..<(offset + length)] { text += "\\x" + Hex.encode([byte], uppercase: true) }
                offset += length
            case .emptyInput:
                return invalid ? text : nil
            }
        }
    }

    /// What the terminal would obey (`TerminalText.isUnsafe`), and the tab and line break it
    /// lets through, which would break a message's one line.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar == "\n" || TerminalText.isUnsafe(scalar)
    }
}
