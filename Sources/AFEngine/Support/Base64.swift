/// Standard base64 (RFC 4648, with padding).
package enum Base64 {
    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// Encodes bytes.
    package static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let text = bytes.withContiguousStorageIfAvailable({ encode($0) }) { return text }
        return encode(Array(bytes))
    }

    /// Encodes bytes held in one piece, three at a time into a buffer sized up front (a
    /// report's binary body goes through here).
    package static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let count = (bytes.count + 2) / 3 * 4
        guard count > 0 else { return "" }
        return alphabet.withUTF8Buffer { table in
            String(unsafeUninitializedCapacity: count) { out in
                var read = 0
                var written = 0
                while read + 3 <= bytes.count {
                    let value = UInt32(bytes[read]) << 16 | UInt32(bytes[read + 1]) << 8 | UInt32(bytes[read + 2])
                    out[written] = table[Int(value >> 18 & 63)]
                    out[written + 1] = table[Int(value >> 12 & 63)]
                    out[written + 2] = table[Int(value >> 6 & 63)]
                    out[written + 3] = table[Int(value & 63)]
                    read += 3
                    written += 4
                }
                let left = bytes.count - read
                if left > 0 {
                    let second = left == 2 ? UInt32(bytes[read + 1]) : 0
                    let value = UInt32(bytes[read]) << 16 | second << 8
                    out[written] = table[Int(value >> 18 & 63)]
                    out[written + 1] = table[Int(value >> 12 & 63)]
                    out[written + 2] = left == 2 ? table[Int(value >> 6 & 63)] : UInt8(ascii: "=")
                    out[written + 3] = UInt8(ascii: "=")
                    written += 4
                }
                return written
            }
        }
    }

    /// Decodes text, ignoring whitespace; nil when it is not base64.
    package static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - 65)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - 97 + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - 48 + 52)
            case UInt8(ascii: "+"), UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "/"), UInt8(ascii: "_"): values.append(63)
            case UInt8(ascii: "="): padding += 1
            case 9, 10, 13, 32: continue
            default: return nil
            }
            if padding > 0, byte != UInt8(ascii: "=") { return nil }
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var value: UInt32 = 0
            for (offset, item) in chunk.enumerated() { value |= UInt32(item) << (18 - 6 * UInt32(offset)) }
            out.append(UInt8(value >> 16 & 255))
            if chunk.count > 2 { out.append(UInt8(value >> 8 & 255)) }
            if chunk.count > 3 { out.append(UInt8(value & 255)) }
            index += 4
        }
        return out
    }
}
