/// The text of JSON string tokens: escapes resolved to UTF-8.
package enum JSONStringText {
    /// `text` (a string token's bytes between its quotes) with each escape replaced by the
    /// character it names in UTF-8 and every other byte as it is. A surrogate pair becomes
    /// its character; a lone surrogate becomes its three-byte form (which no valid UTF-8
    /// holds, so `String(decoding:as:)` shows it as U+FFFD).
    package static func unescaped(_ text: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            let byte = text[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < text.count else {
                out.append(byte)
                index += 1
                continue
            }
            let code = text[index + 1]
            index += 2
            switch code {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                guard let escape = unicodeEscape(in: text, at: index - 2) else { continue }
                index += escape.length - 2
                appendUTF8(escape.value, to: &out)
            default: out.append(code)
            }
        }
        return out
    }

    /// The `\uXXXX` escape whose backslash is at `start`, joined with the low-surrogate
    /// escape right after it when it is a high surrogate: the code point it names (a lone
    /// surrogate as it is) and the escape's length, 6 or 12. Nil when there is no `\u` with
    /// four hexadecimal digits there.
    package static func unicodeEscape(in text: UnsafeRawBufferPointer, at start: Int) -> (value: UInt32, length: Int)? {
        guard start >= 0, start + 1 < text.count, text[start] == UInt8(ascii: "\\"), text[start + 1] == UInt8(ascii: "u"),
              let unit = hexUnit(text, at: start + 2)
        else { return nil }
        guard (0xD800...0xDBFF).contains(unit), start + 12 <= text.count, text[start + 6] == UInt8(ascii: "\\"),
              text[start + 7] == UInt8(ascii: "u"), let low = hexUnit(text, at: start + 8), (0xDC00...0xDFFF).contains(low)
        else { return (unit, 6) }
        return (0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), 12)
    }

    /// The four hexadecimal digits at `start` (of a `\uXXXX` escape), or nil.
    private static func hexUnit(_ text: UnsafeRawBufferPointer, at start: Int) -> UInt32? {
        guard start >= 0, start + 4 <= text.count else { return nil }
        var value: UInt32 = 0
        for position in start..<(start + 4) {
            let byte = text[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 55)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }

    /// `value` in UTF-8's encoding scheme (surrogates included, as their three bytes).
    private static func appendUTF8(_ value: UInt32, to out: inout [UInt8]) {
        switch value {
        case ..<0x80: out.append(UInt8(value))
        case ..<0x800: out += [UInt8(0xC0 | value >> 6), UInt8(0x80 | value & 0x3F)]
        case ..<0x10000: out += [UInt8(0xE0 | value >> 12), UInt8(0x80 | value >> 6 & 0x3F), UInt8(0x80 | value & 0x3F)]
        default: out += [UInt8(0xF0 | value >> 18), UInt8(0x80 | value >> 12 & 0x3F), UInt8(0x80 | value >> 6 & 0x3F), UInt8(0x80 | value & 0x3F)]
        }
    }
}
