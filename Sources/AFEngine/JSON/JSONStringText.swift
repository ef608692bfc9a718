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
                guard var value = hexUnit(text, at: index) else { continue }
                index += 4
                if (0xD800...0xDBFF).contains(value), index + 6 <= text.count, text[index] == UInt8(ascii: "\\"),
                   text[index + 1] == UInt8(ascii: "u"), let low = hexUnit(text, at: index + 2), (0xDC00...0xDFFF).contains(low) {
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                }
                appendUTF8(value, to: &out)
            default: out.append(code)
            }
        }
        return out
    }

    /// The four hexadecimal digits at `start` (of a `\uXXXX` escape), or nil.
    package static func hexUnit(_ text: UnsafeRawBufferPointer, at start: Int) -> UInt32? {
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
