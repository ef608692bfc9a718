/// File names for downloads: what the server suggests, reduced to a safe base name.
public enum DownloadNaming {
    /// The name for a response: `Content-Disposition` (`filename*` before `filename`), else the
    /// last URL path segment, else `index` with an extension from `Content-Type`. Always a
    /// safe base name.
    public static func suggestedFilename(for head: ResponseHead?, url: String) -> String {
        if let disposition = head?.headers.value(for: .contentDisposition), let name = filename(fromContentDisposition: disposition) {
            let safe = sanitize(name)
            if !safe.isEmpty { return safe }
        }
        if let segment = lastPathSegment(of: url) {
            let safe = sanitize(segment)
            if !safe.isEmpty { return safe }
        }
        let type = head?.headers.value(for: .contentType) ?? ""
        return "index" + (MIMEType.fileExtension(for: type).map { ".\($0)" } ?? "")
    }

    /// The file name a `Content-Disposition` value carries; `filename*` (RFC 6266/8187) wins.
    public static func filename(fromContentDisposition value: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in splitParameters(value).dropFirst() {
            guard let (name, content) = parameter.splitOnce(byte: UInt8(ascii: "=")) else { continue }
            let key = name.trimmingCharacters(in: " \t").lowercased()
            var raw = content.trimmingCharacters(in: " \t")
            if key == "filename*" {
                // charset'language'percent-encoded
                let pieces = raw.split(byte: UInt8(ascii: "'"), maxSplits: 2, omittingEmptySubsequences: false)
                if pieces.count == 3 {
                    let charset = pieces[0].lowercased()
                    let bytes = percentDecode(String(pieces[2]))
                    extended = charset == "iso-8859-1" ? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
                        : String(decoding: bytes, as: UTF8.self)
                }
            } else if key == "filename" {
                let scalars = raw.unicodeScalars
                if scalars.count >= 2, scalars.first == "\"", scalars.last == "\"" {
                    var unescaped = String.UnicodeScalarView()
                    var escaping = false
                    for scalar in scalars.dropFirst().dropLast() {
                        if escaping || scalar != "\\" {
                            unescaped.append(scalar)
                            escaping = false
                        } else {
                            escaping = true
                        }
                    }
                    raw = String(unescaped)
                }
                plain = raw
            }
        }
        return extended ?? plain
    }

    /// A safe base name: no directories, no `..`, no leading dot, no control or invisible
    /// format characters (the right-to-left override that makes `evil\u{202E}txt.exe` look
    /// like `evilexe.txt`), no leading `-` (which a shell command would take for an option)
    /// or `~` (which a shell expands to a home directory: a file named `~` is one `rm -r ~`
    /// away from the user's home); such a name gets a `_` in front. At most 200 bytes. Empty
    /// when nothing usable is left.
    ///
    /// Every test is on Unicode scalars, not characters: a combining mark after `/` or `.`
    /// makes one character of the two, which compares equal to neither, so a character test
    /// would miss the slash in `a/\u{301}b` (and write into the directory `a`) or the dot in
    /// `.\u{301}x`.
    public static func sanitize(_ name: String) -> String {
        var scalars = Substring(name).unicodeScalars
        if let slash = scalars.lastIndex(where: { $0 == "/" || $0 == "\\" }) {
            scalars = scalars[scalars.index(after: slash)...]
        }
        var cleaned = String(String.UnicodeScalarView(scalars.filter { scalar in
            !(scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
                || scalar.properties.generalCategory == .format)
        }))
        cleaned = cleaned.trimmingCharacters(in: " \t")
        // No leading dot, nor a combining mark left leading once a dot before it is gone.
        while let first = cleaned.unicodeScalars.first, first == "." || Self.isMark(first) {
            cleaned.unicodeScalars.removeFirst()
        }
        if let first = cleaned.unicodeScalars.first, first == "-" || first == "~" { cleaned = "_" + cleaned }
        return shortened(cleaned, to: 200)
    }

    /// `name` cut to at most `limit` bytes of UTF-8 at its end, but before its extension (up
    /// to 16 bytes, `.tar` kept with the one after it), so a long name still opens with the
    /// right program.
    static func shortened(_ name: String, to limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        var (stem, ext) = splitExtension(name)
        // The 16 bytes are the last extension's; `.tar` before it comes along.
        if ext.utf8.count - (ext.hasPrefix(".tar.") ? 4 : 0) > 16 { (stem, ext) = (name, "") }
        while !stem.isEmpty, stem.utf8.count + ext.utf8.count > limit { stem.removeLast() }
        return stem.isEmpty ? String(ext.dropFirst()) : stem + ext
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    /// `name-1.ext`, `name-2.ext`, … for the `attempt`-th alternative.
    public static func numbered(_ name: String, _ attempt: Int) -> String {
        guard attempt > 0 else { return name }
        let (stem, ext) = splitExtension(name)
        return "\(stem)-\(attempt)\(ext)"
    }

    /// `name` as stem and extension: from its last dot (not a leading one), with `.tar` kept
    /// with the extension after it (`.tar.gz`); the extension is empty when there is no dot.
    static func splitExtension(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return (name, "") }
        var stem = String(name[..<dot])
        var ext = String(name[dot...])
        if stem.hasSuffix(".tar") {
            stem.removeLast(4)
            ext = ".tar" + ext
        }
        return (stem, ext)
    }

    static func lastPathSegment(of url: String) -> String? {
        guard let parsed = try? HTTPURL(parsing: url) else { return nil }
        guard let segment = parsed.path.split(byte: UInt8(ascii: "/")).last else { return nil }
        let decoded = String(decoding: percentDecode(String(segment)), as: UTF8.self)
        return decoded.isEmpty ? nil : decoded
    }

    /// Splits on `;` outside double quotes, scalar by scalar: a `;` or `"` followed by a
    /// combining mark is one `Character` with it, but still a separator or a quote.
    private static func splitParameters(_ value: String) -> [String] {
        var parts: [String] = []
        var current = String.UnicodeScalarView()
        var quoted = false
        var escaping = false
        for scalar in value.unicodeScalars {
            if escaping {
                current.append(scalar)
                escaping = false
                continue
            }
            switch scalar {
            case "\\" where quoted:
                current.append(scalar)
                escaping = true
            case "\"":
                quoted.toggle()
                current.append(scalar)
            case ";" where !quoted:
                parts.append(String(current))
                current = String.UnicodeScalarView()
            default:
                current.append(scalar)
            }
        }
        parts.append(String(current))
        return parts
    }

    private static func percentDecode(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                out.append(value)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }
}
