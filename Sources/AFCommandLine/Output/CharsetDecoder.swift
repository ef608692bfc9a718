import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Decodes a byte stream in a charset, chunk by chunk, for display: UTF-8 in Swift, any other
/// charset glibc's `iconv` knows (windows-1250, big5, shift_jis, koi8-r, utf-16…) through
/// iconv. Bytes the charset cannot decode become U+FFFD; a sequence cut by the end of a chunk
/// waits for the next one. Without a declared charset (`sniffing()`), the body's start
/// decides on a byte order mark (or UTF-16 `<?xml`); otherwise the first bytes that are not
/// ASCII do, since ASCII reads the same in every candidate: UTF-8 when they are valid UTF-8,
/// else the charset the start's XML declaration or HTML `<meta>` names (`CharsetSniffer`),
/// else windows-1252. A body that ends in the middle of a UTF-8 sequence is not UTF-8.
///
/// Not thread-safe: its owner serialises calls.
final class CharsetDecoder {
    private enum Engine {
        case utf8
        case iconv(iconv_t)
        /// Undecided until the first bytes.
        case sniffing
    }

    private var engine: Engine
    private var pending: [UInt8] = []
    /// A sniffing decoder has looked at the body's start (for a byte order mark and a
    /// declaration); `declared` is the charset the start names, if any.
    private var startSeen = false
    private var declared: String?
    /// The charset encodes text with NUL bytes (UTF-16, UTF-32 and their kin), so a NUL in
    /// the body does not make it binary. A sniffing decoder knows once it has settled.
    private(set) var encodesWithNULs: Bool

    private init(_ engine: Engine, encodesWithNULs: Bool = false) {
        self.engine = engine
        self.encodesWithNULs = encodesWithNULs
    }

    deinit {
        if case .iconv(let handle) = engine { iconv_close(handle) }
    }

    /// UTF-8.
    static func utf8() -> CharsetDecoder { CharsetDecoder(.utf8) }

    /// Whether this decoder reads UTF-8 (and so leaves UTF-8 bytes as they are).
    var isUTF8: Bool {
        if case .utf8 = engine { return true }
        return false
    }

    /// A decoder that settles its charset on the body itself (see the type's description).
    static func sniffing() -> CharsetDecoder { CharsetDecoder(.sniffing) }

    /// A decoder for a charset label (`utf-8`, `ISO-8859-2`, `"big5"`), or nil when iconv
    /// does not know it.
    convenience init?(label: String) {
        guard let given = Self.charsetName(label) else { return nil }
        for name in Self.spellings(of: given) {
            if name == "utf-8" || name == "utf8" {
                self.init(.utf8)
                return
            }
            if let handle = Self.open(name) {
                self.init(.iconv(handle), encodesWithNULs: Self.isWide(name))
                return
            }
        }
        return nil
    }

    /// `name`, then, for a name with `_`, iconv's spellings of Python's codec names, which a
    /// Python server may send (`euc_jp`, `iso2022_jp`, `utf_8`, `latin_1`): with `-` for `_`,
    /// then without `_`.
    private static func spellings(of name: String) -> [String] {
        guard name.contains("_") else { return [name] }
        let hyphenated = String(name.map { $0 == "_" ? "-" : $0 })
        let joined = String(name.filter { $0 != "_" })
        // Each keeps the name's letters and digits (`charsetName`), so none is "".
        return [name, hyphenated, joined].map { windows1252Labels.contains($0) ? "windows-1252" : $0 }
    }

    /// The name iconv is asked for, for a label from a header, an option or a document:
    /// trimmed of blanks and quotes, lower case, nil when it cannot be a charset name: one
    /// with no letter or digit (`!!!`, `?`, `+`) is none, though glibc's iconv, which drops
    /// such characters from a name, takes what is left, "", as the locale's charset. The
    /// Latin-1 and ASCII labels mean windows-1252, as browsers read them (the WHATWG Encoding
    /// Standard): such pages are windows-1252 in practice, and their 0x80–0x9F bytes are curly
    /// quotes, dashes and €, not C1 control characters.
    private static func charsetName(_ label: String) -> String? {
        let name = label.trimmingCharacters(in: " \"'").lowercased()
        guard name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }),
              name.utf8.contains(where: { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }) else { return nil }
        return windows1252Labels.contains(name) ? "windows-1252" : name
    }

    private static let windows1252Labels: Set<String> = [
        "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100", "iso8859-1",
        "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "x-cp1252",
    ]

    private static func isWide(_ name: String) -> Bool {
        ["utf-16", "utf16", "utf-32", "utf32", "ucs-2", "ucs2", "ucs-4", "ucs4", "unicode"].contains { name.utf8.starts(with: $0.utf8) }
    }

    /// Whether iconv (or af itself) can decode `label`.
    static func knows(_ label: String) -> Bool {
        CharsetDecoder(label: label) != nil
    }

    private static func open(_ name: String) -> iconv_t? {
        let handle = iconv_open("UTF-8", name)
        guard let handle, handle != iconv_t(bitPattern: -1) else { return nil }
        return handle
    }

    /// Settles a sniffing decoder's charset, if these next bytes decide it, as `decode` would
    /// (without decoding them); returns `encodesWithNULs`.
    func settle(on next: some Collection<UInt8>) -> Bool {
        if case .sniffing = engine { settle(pending + Array(next), final: false) }
        return encodesWithNULs
    }

    /// Settles the charset on `input` (what has not been decoded yet) when it can tell: it
    /// stays undecided while everything but a sequence the end may have cut is ASCII, unless
    /// `final`.
    private func settle(_ input: [UInt8], final: Bool) {
        if !startSeen {
            // A mark is up to four bytes (a UTF-32 one starts like a UTF-16 one): a shorter
            // start waits for more, decoding nothing, unless it is the whole body.
            guard input.count >= 4 || final else { return }
            if let marked = CharsetSniffer.markedCharset(input), let handle = Self.open(marked) {
                engine = .iconv(handle)
                encodesWithNULs = true
                return
            }
            startSeen = true
            declared = CharsetSniffer.declaredCharset(input).flatMap(Self.charsetName)
        }
        let complete = final ? input.count : Self.completeUTF8Prefix(input)
        // Undecided: ASCII reads the same in UTF-8, windows-1252 and any declared charset. A
        // Latin-1 body whose first chunk was ASCII was taken for UTF-8, and every later é
        // shown as U+FFFD; so was one whose only accent was its last byte.
        if !final, !input[..<complete].contains(where: { $0 >= 0x80 }) { return }
        if String(validating: input[..<complete], as: UTF8.self) != nil {
            engine = .utf8
            return
        }
        // A declaration in the document counts only where UTF-8 does not fit: a page that says
        // iso-8859-1 but is valid UTF-8 (common) shows as UTF-8. One naming UTF-8 or UTF-16
        // is wrong about these bytes, and one iconv does not know is no help.
        if let declared, !declared.hasPrefix("utf"), !Self.isWide(declared), let handle = Self.open(declared) {
            engine = .iconv(handle)
            return
        }
        engine = Self.open("windows-1252").map { .iconv($0) } ?? .utf8
    }

    /// Decodes `bytes`; `final` flushes what waited for more.
    func decode(_ bytes: some Collection<UInt8>, final: Bool = false) -> String {
        var input: [UInt8]
        if pending.isEmpty, let whole = bytes as? [UInt8] {
            // Shared, not copied: a whole document (markup is decoded in one piece) would
            // otherwise be held a third time while it becomes text.
            input = whole
        } else {
            input = pending
            input.append(contentsOf: bytes)
        }
        pending = []
        if case .sniffing = engine { settle(input, final: final) }
        switch engine {
        case .sniffing where !startSeen:
            pending = input
            return ""
        case .utf8, .sniffing:
            // Undecided, the bytes before the cut are ASCII.
            let cut = final ? input.count : Self.completeUTF8Prefix(input)
            pending = Array(input[cut...])
            return String(decoding: input[..<cut], as: UTF8.self)
        case .iconv(let handle):
            return convert(input, with: handle, final: final)
        }
    }

    private func convert(_ input: [UInt8], with handle: iconv_t, final: Bool) -> String {
        var out: [UInt8] = []
        var source = input
        var offset = 0
        var buffer = [CChar](repeating: 0, count: max(64, input.count * 4 + 16))
        while offset < source.count {
            var inLeft = source.count - offset
            var outLeft = buffer.count
            let (consumed, produced, failure) = source.withUnsafeMutableBufferPointer { sourceBuffer -> (Int, Int, Int32) in
                buffer.withUnsafeMutableBufferPointer { target -> (Int, Int, Int32) in
                    guard let sourceBase = sourceBuffer.baseAddress, let targetBase = target.baseAddress else { return (0, 0, 0) }
                    var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(sourceBase + offset).assumingMemoryBound(to: CChar.self)
                    var outPointer: UnsafeMutablePointer<CChar>? = targetBase
                    let before = inLeft
                    let result = iconv(handle, &inPointer, &inLeft, &outPointer, &outLeft)
                    return (before - inLeft, target.count - outLeft, result == -1 ? errno : 0)
                }
            }
            out.append(contentsOf: buffer[0..<produced].map { UInt8(bitPattern: $0) })
            offset += consumed
            switch failure {
            case 0:
                continue
            case E2BIG:
                continue
            case EINVAL where !final:
                // A sequence cut by the end of the chunk: wait for the rest.
                pending = Array(source[offset...])
                offset = source.count
            default:
                // An invalid (or, at the end, incomplete) sequence: show U+FFFD, skip a byte.
                out.append(contentsOf: [0xEF, 0xBF, 0xBD])
                offset += 1
                iconv(handle, nil, nil, nil, nil)
            }
        }
        source.removeAll()
        return String(decoding: out, as: UTF8.self)
    }

    /// How many leading bytes of `bytes` are complete UTF-8 sequences (a multi-byte
    /// sequence cut by the end waits).
    private static func completeUTF8Prefix(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { UTF8Cut.wholeLength($0) }
    }

    /// Whether `bytes` is valid UTF-8 up to a sequence the end may have cut.
    static func isValidUTF8Prefix(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes[..<completeUTF8Prefix(bytes)], as: UTF8.self) != nil
    }
}
