/// Line breaks where a value must be one line (a header value, credentials), and the one a
/// hurried user meets most: the CR that `$(cat FILE)` leaves of a file with CRLF line ends,
/// whose LF the shell strips.
enum LineBreaks {
    /// Whether `text` holds a CR, an LF or a NUL, which no header line or credentials can.
    static func breaksALine(_ text: String) -> Bool {
        text.utf8.contains(where: isBreak)
    }

    /// Whether the only such byte in `text` is a CR at its end.
    static func endsWithStrayCarriageReturn(_ text: String) -> Bool {
        let bytes = text.utf8
        return bytes.last == 13 && !bytes.dropLast().contains(where: isBreak)
    }

    /// What to say of such a CR, after "ends with a carriage return (\r), ".
    static let strayCarriageReturnAdvice = "as text from a file with CRLF line ends does; remove it (tr -d '\\r')"

    private static func isBreak(_ byte: UInt8) -> Bool {
        byte == 13 || byte == 10 || byte == 0
    }
}
