/// Making server-supplied text safe to show on a terminal.
enum TerminalText {
    /// The text with control characters (except tab and newline), DEL and C1 controls
    /// replaced by visible escapes such as `\x1B`, so a server cannot drive the terminal.
    static func escaped(_ text: String, highlight: String = "") -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                out += Theme.paint(escape(scalar), highlight)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value == 0x09 || value == 0x0A { return false }
        return value < 0x20 || value == 0x7F || (0x80...0x9F).contains(value)
    }

    static func escape(_ scalar: Unicode.Scalar) -> String {
        let digits = Array("0123456789ABCDEF")
        let value = Int(scalar.value)
        if value <= 0xFF { return "\\x" + String([digits[value >> 4], digits[value & 15]]) }
        return "\\u{\(String(value, radix: 16))}"
    }
}
