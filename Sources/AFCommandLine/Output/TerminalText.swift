/// Making server-supplied text safe to show on a terminal.
enum TerminalText {
    /// The text with control characters (except tab and newline), DEL and C1 controls
    /// replaced by visible escapes such as `\x1B`, so a server cannot drive the terminal.
    static func escaped(_ text: String, highlight: String = "") -> String {
        // Most text has nothing to escape: found over the bytes, without building a copy
        // scalar by scalar.
        if text.utf8.withContiguousStorageIfAvailable({ !mayNeedEscapes($0) }) == true { return text }
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

    /// Whether UTF-8 `bytes` may hold something `escaped` replaces: a C0 control other than
    /// tab and newline, DEL, or 0xC2, which starts every C1 control (0xC2 0x80–0x9F).
    static func mayNeedEscapes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.contains { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A) || $0 == 0x7F || $0 == 0xC2 }
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
