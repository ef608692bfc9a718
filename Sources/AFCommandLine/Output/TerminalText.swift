/// Making server-supplied text safe to show on a terminal.
enum TerminalText {
    /// The text with control characters (except tab and newline), DEL and C1 controls
    /// replaced by visible escapes such as `\x1B`, so a server cannot drive the terminal.
    ///
    /// Worked over the UTF-8 bytes: a hostile body can be nothing but control characters,
    /// and one escape must cost a few byte copies, not a string built per character.
    static func escaped(_ text: String, highlight: String = "") -> String {
        var text = text
        let escaped = text.withUTF8 { bytes -> [UInt8]? in
            // Most text has nothing to escape: found without building a copy.
            guard mayNeedEscapes(bytes) else { return nil }
            return escapedBytes(bytes, highlight: highlight)
        }
        guard let escaped else { return text }
        return String(decoding: escaped, as: UTF8.self)
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

    /// Valid UTF-8 (a Swift string's) with each control character escaped: C0 and DEL are
    /// single bytes, and a C1 control is 0xC2 followed by 0x80–0x9F, so no other sequence
    /// can be mistaken for one.
    private static func escapedBytes(_ bytes: UnsafeBufferPointer<UInt8>, highlight: String) -> [UInt8] {
        let painted = !highlight.isEmpty
        let colour = Array(highlight.utf8)
        let reset = painted ? Array(Theme.reset.utf8) : []
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 4)
        // Through buffer pointers: appending an array's contents retains it each time.
        colour.withUnsafeBufferPointer { colour in
            reset.withUnsafeBufferPointer { reset in
                var index = 0
                while index < bytes.count {
                    var value = bytes[index]
                    index += 1
                    if value == 0xC2, index < bytes.count, (0x80...0x9F).contains(bytes[index]) {
                        value = bytes[index]
                        index += 1
                    } else if (value >= 0x20 || value == 0x09 || value == 0x0A) && value != 0x7F {
                        out.append(value)
                        continue
                    }
                    if painted { out.append(contentsOf: colour) }
                    out.append(UInt8(ascii: "\\"))
                    out.append(UInt8(ascii: "x"))
                    out.append(hex[Int(value >> 4)])
                    out.append(hex[Int(value & 15)])
                    if painted { out.append(contentsOf: reset) }
                }
            }
        }
        return out
    }
}
