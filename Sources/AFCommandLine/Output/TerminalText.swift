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

/// Decodes a byte stream in a given charset, chunk by chunk.
struct CharsetDecoder {
    enum Charset: Equatable { case utf8, latin1, windows1252, ascii, utf16le, utf16be }

    let charset: Charset
    private var pending: [UInt8] = []

    init(charset: Charset) {
        self.charset = charset
    }

    /// A decoder for a charset label, or nil when af does not know it.
    init?(label: String) {
        switch label.lowercased().trimmingCharacters(in: " \"'") {
        case "utf-8", "utf8": charset = .utf8
        case "iso-8859-1", "latin1", "latin-1", "iso8859-1", "l1": charset = .latin1
        case "windows-1252", "cp1252": charset = .windows1252
        case "us-ascii", "ascii": charset = .ascii
        case "utf-16le": charset = .utf16le
        case "utf-16be", "utf-16": charset = .utf16be
        default: return nil
        }
    }

    /// Decodes `bytes`; an incomplete trailing sequence waits for the next chunk.
    mutating func decode(_ bytes: some Collection<UInt8>, final: Bool = false) -> String {
        var input = pending
        input.append(contentsOf: bytes)
        pending = []
        switch charset {
        case .utf8:
            var cut = input.count
            if !final {
                // Keep an incomplete multi-byte sequence for the next chunk.
                var back = 0
                while back < min(3, input.count), input[input.count - 1 - back] & 0xC0 == 0x80 { back += 1 }
                if back < input.count {
                    let lead = input[input.count - 1 - back]
                    let needed = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0
                    if needed > back { cut = input.count - 1 - back }
                }
            }
            pending = Array(input[cut...])
            return String(decoding: input[..<cut], as: UTF8.self)
        case .latin1, .ascii:
            return String(String.UnicodeScalarView(input.map { Unicode.Scalar($0) }))
        case .windows1252:
            return String(String.UnicodeScalarView(input.map { byte in
                guard (0x80...0x9F).contains(byte), let mapped = Unicode.Scalar(Self.windows1252High[Int(byte - 0x80)]) else {
                    return Unicode.Scalar(byte)
                }
                return mapped
            }))
        case .utf16le, .utf16be:
            let even = input.count - input.count % 2
            pending = Array(input[even...])
            var units: [UInt16] = []
            var index = 0
            while index < even {
                let pair = charset == .utf16le ? UInt16(input[index]) | UInt16(input[index + 1]) << 8 : UInt16(input[index]) << 8 | UInt16(input[index + 1])
                units.append(pair)
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        }
    }

    private static let windows1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]
}

/// Pieces of `Content-Type` values.
enum MediaType {
    /// The media type without parameters, lower-cased.
    static func essence(_ value: String?) -> String {
        guard let value else { return "" }
        return value.split(separator: ";").first.map { $0.trimmingCharacters(in: " \t").lowercased() } ?? ""
    }

    /// The `charset` parameter, if any.
    static func charset(_ value: String?) -> String? {
        guard let value else { return nil }
        for parameter in value.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: " \t").lowercased() == "charset" {
                return parts[1].trimmingCharacters(in: " \t\"")
            }
        }
        return nil
    }

    /// Whether a media type is JSON (`application/json`, `*+json`, `text/json`, NDJSON).
    static func isJSON(_ essence: String) -> Bool {
        essence == "application/json" || essence == "text/json" || essence.hasSuffix("+json")
            || essence == "application/x-ndjson" || essence == "application/ndjson" || essence == "application/jsonl"
            || essence == "application/json-seq"
    }

    /// Whether a media type is certainly binary.
    static func isBinary(_ essence: String) -> Bool {
        let prefixes = ["image/", "audio/", "video/", "font/"]
        let exact: Set<String> = [
            "application/octet-stream", "application/zip", "application/gzip", "application/pdf", "application/x-tar",
            "application/zstd", "application/x-bzip2", "application/x-xz", "application/wasm", "application/x-protobuf",
            "application/protobuf", "application/vnd.google.protobuf", "application/x-7z-compressed", "application/msgpack",
        ]
        return exact.contains(essence) || prefixes.contains { essence.hasPrefix($0) && essence != "image/svg+xml" }
    }
}
