/// The charset a body names itself when its `Content-Type` names none: a byte order mark,
/// the start of an XML document in UTF-16, an XML declaration
/// (`<?xml version="1.0" encoding="KOI8-R"?>`) or an HTML `<meta charset>` (either form) in
/// the first kilobyte, as browsers and XML parsers find it.
enum CharsetSniffer {
    /// How far into a body a declaration is looked for (HTML's prescan reads 1,024 bytes).
    static let window = 1024

    /// The charset a byte order mark or a UTF-16 `<?` at the start says.
    static func markedCharset(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0xFF, 0xFE, 0, 0]) || bytes.starts(with: [0, 0, 0xFE, 0xFF]) { return "utf-32" }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) { return "utf-16" }
        if bytes.starts(with: [0x3C, 0, 0x3F, 0]) { return "utf-16le" }
        if bytes.starts(with: [0, 0x3C, 0, 0x3F]) { return "utf-16be" }
        return nil
    }

    /// Whether `bytes` are the start of a UTF-16 or UTF-32 byte order mark that more bytes
    /// would decide (`FF FE` is UTF-16 unless `00 00` follows).
    static func mayStartAMark<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        guard bytes.count < 4 else { return false }
        let marks: [[UInt8]] = [[0xFF, 0xFE, 0, 0], [0, 0, 0xFE, 0xFF], [0xFE, 0xFF]]
        return marks.contains { $0.count > bytes.count && $0.starts(with: bytes) }
    }

    /// The charset label an XML declaration or an HTML `<meta>` near the start declares.
    static func declaredCharset(_ bytes: [UInt8]) -> String? {
        let head = Array(bytes.prefix(window))
        if head.starts(with: Array("<?xml".utf8)) {
            let end = find("?>", in: head, from: 0) ?? head.count
            return find("encoding", in: head, from: 0).flatMap { $0 < end ? label(in: head, after: $0 + 8, until: end) : nil }
        }
        var from = 0
        while let meta = find("<meta", in: head, from: from) {
            let end = head[meta...].firstIndex(of: UInt8(ascii: ">")) ?? head.count
            if let charset = find("charset", in: head, from: meta), charset < end, let name = label(in: head, after: charset + 7, until: end) {
                return name
            }
            from = end
        }
        return nil
    }

    /// The label after `=` (and an optional quote) at `start`, spaces allowed around the `=`.
    private static func label(in bytes: [UInt8], after start: Int, until end: Int) -> String? {
        var index = start
        while index < end, bytes[index] == 32 { index += 1 }
        guard index < end, bytes[index] == UInt8(ascii: "=") else { return nil }
        index += 1
        while index < end, bytes[index] == 32 || bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") { index += 1 }
        let first = index
        while index < end, isLabelByte(bytes[index]) { index += 1 }
        return index > first ? String(decoding: bytes[first..<index], as: UTF8.self) : nil
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"): true
        default: false
        }
    }

    /// Where `needle` (lower-case ASCII) first occurs at or after `from`, ignoring ASCII case.
    private static func find(_ needle: StaticString, in bytes: [UInt8], from: Int) -> Int? {
        let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
        guard !pattern.isEmpty, bytes.count >= pattern.count, from <= bytes.count - pattern.count else { return nil }
        for index in from...(bytes.count - pattern.count) where (0..<pattern.count).allSatisfy({ lowered(bytes[index + $0]) == pattern[$0] }) {
            return index
        }
        return nil
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
