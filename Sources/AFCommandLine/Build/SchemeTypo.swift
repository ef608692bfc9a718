/// Mistyped schemes in a URL argument, and what was meant: `http//host` (no colon),
/// `http:://host` (two), `http:host:8080` (no slashes), `http:\\host` (backslashes),
/// `htps://host` (a letter off). Asked only once the URL has failed —
/// it would not parse, or its "host" `http` did not resolve — so a URL that works is never
/// second-guessed.
enum SchemeTypo {
    private static let schemes = ["http", "https"]

    /// The URL `text` was probably meant to be, or nil when it does not look like a mistyped
    /// `http://` or `https://`.
    static func correction(of text: String) -> String? {
        let bytes = Array(text.utf8)
        let letters = bytes.prefix { isLetter($0) }
        guard !letters.isEmpty, letters.count < bytes.count else { return nil }
        let word = String(decoding: letters, as: UTF8.self).lowercased()
        var rest = bytes[letters.count...]
        let colons = rest.prefix { $0 == UInt8(ascii: ":") }.count
        rest = rest.dropFirst(colons)
        // Backslashes too: `http:\\host`, as Windows paths are written.
        let slashes = rest.prefix { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }.count
        let remainder = String(decoding: rest.dropFirst(slashes), as: UTF8.self)
        if schemes.contains(word), colons == 1, slashes == 0, !rest.isEmpty {
            // `http:host:8080/x`, the slashes left out; `http:8080` is the host `http` with a
            // port, no typo.
            let first = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
            guard first.contains(where: { $0 < UInt8(ascii: "0") || $0 > UInt8(ascii: "9") }) else { return nil }
            return word + "://" + remainder
        }
        guard slashes >= 2, !rest.dropFirst(slashes).isEmpty else { return nil }
        if schemes.contains(word) {
            // `http//host`, `http:://host` or `http:\\host`; `http://host` and `http:/host` are
            // not typos.
            let backslashed = rest.prefix(slashes).contains(UInt8(ascii: "\\"))
            guard colons == 0 || colons >= 2 || backslashed else { return nil }
            return word + "://" + remainder
        }
        // Where both are one edit away (`httsp`), the one of the same length: a swap or a
        // wrong letter is likelier than a letter too many.
        let near = schemes.filter { distance(word, $0) == 1 }.sorted { abs($0.utf8.count - word.utf8.count) < abs($1.utf8.count - word.utf8.count) }
        guard colons == 1, slashes == 2, let meant = near.first else { return nil }
        return meant + "://" + remainder
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    /// Whether one insertion, deletion, substitution or swap of neighbours turns `a` into
    /// `b`: 1 then, else 0 for equal words and 2 for anything farther.
    static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8), y = Array(b.utf8)
        if x == y { return 0 }
        if abs(x.count - y.count) > 1 { return 2 }
        let prefix = zip(x, y).prefix { $0 == $1 }.count
        let suffix = zip(x.reversed(), y.reversed()).prefix { $0 == $1 }.count
        if x.count == y.count {
            // One substitution, or two neighbours swapped.
            if prefix + suffix >= x.count - 1 { return 1 }
            let i = prefix
            if i + 1 < x.count, x[i] == y[i + 1], x[i + 1] == y[i], Array(x[(i + 2)...]) == Array(y[(i + 2)...]) { return 1 }
            return 2
        }
        // One letter more in the longer word.
        return prefix + suffix >= min(x.count, y.count) ? 1 : 2
    }
}
