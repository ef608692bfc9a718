import AFEngine

/// Spaces other than the plain one, and characters that show as nothing, in a URL or an
/// option: a no-break space copied from a page joins two words the shell would have split,
/// and neither the URL nor the option it makes shows where.
enum InvisibleCharacters {
    /// A URL argument with one in it (`get\u{A0}example.org` asked for the host
    /// `xn--getexample-fka.org`, and `URL\u{A0}a==1` for a path ending in `%C2%A0a==1`): a
    /// usage error that shows where it is and how to keep one the URL really holds
    /// (percent-encoded); nil when there is none.
    static func urlMessage(_ url: String) -> String? {
        // Every batch line's URL comes here: ASCII has none of them, settled a word at a time.
        guard !url.utf8.isAllASCII, let found = url.unicodeScalars.first(where: isInvisible) else { return nil }
        return "the URL '\(Quote.argument(marked(url)))' has \(invisibleName(found)) in it, as text copied from a page has" + advice(found, encodedInURL: true)
    }

    /// An unknown option that has one in it
    /// (`--follow\u{A0}-v`, two words joined): the message's quote of it, up to that character
    /// and marked there (what follows may be a password: `--auth\u{A0}bob:pw`), and what to
    /// do; nil when it has none. `prefix` is `--` or `-`.
    static func inOption(_ name: Substring, prefix: String) -> (quoted: String, advice: String)? {
        guard !name.utf8.isAllASCII, let found = name.unicodeScalars.first(where: isInvisible) else { return nil }
        let before = String(name.unicodeScalars.prefix { !isInvisible($0) })
        let rest = name.unicodeScalars.count > before.unicodeScalars.count + 1 ? "…" : ""
        return (prefix + before + "[\(Format.codePoint(found))]" + rest,
                "; it has \(invisibleName(found)) in it, as text copied from a page has" + advice(found, encodedInURL: false))
    }

    /// A request item in which a space other than the plain one comes before what reads as
    /// another item or an option (`name=Ada\u{A0}age:=36`, as Option-Space or an input
    /// method's wide space types it): the shell split nothing there, and both went out as one
    /// value (`{"name": "Ada\u{A0}age:=36"}`). A usage error that names the character and
    /// the word after it, showing no value (a header's may be a secret); nil when there is none.
    static func joinedItemMessage(_ argument: String) -> String? {
        // Every item of every batch line comes here: ASCII has none of them.
        guard !argument.utf8.isAllASCII else { return nil }
        let scalars = Array(argument.unicodeScalars)
        for index in scalars.indices where isSpace(scalars[index]) {
            let rest = scalars[(index + 1)...].prefix { !isSpace($0) }
            // Only a word that begins with a dash or holds a separator's character can read
            // as an option or an item: a value of many words (a pasted paragraph, a batch
            // line's megabyte) is not parsed word by word.
            guard rest.first == "-" || rest.contains(where: { $0 == "=" || $0 == ":" || $0 == "@" || $0 == ";" }),
                  let (shown, kind) = wordShown(String(String.UnicodeScalarView(rest))) else { continue }
            // Found: the item's own name and separator, to show in the message.
            guard let lead = RequestItemParser.lead(of: argument) else { return nil }
            // In the name, it joined a word to the item; in the value, it made two one value,
            // which may hold the character when it comes from a file.
            let inName = lead.unicodeScalars.contains(where: isSpace)
            return "'\(Quote.argument(marked(lead)))…' has \(invisibleName(scalars[index])) before '\(Quote.argument(shown))', which reads as \(kind):"
                + " the shell splits words only at plain spaces, so both went into one \(inName ? "item" : "value"); type a plain space between words"
                + (inName ? "" : ", or read a value that holds one from a file (\(Quote.argument(lead))@FILE)")
        }
        return nil
    }

    /// `text` with each of the characters shown as its code point: `a[U+00A0]b`.
    private static func marked(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            if isInvisible(scalar) { shown += "[\(Format.codePoint(scalar))]" } else { shown.unicodeScalars.append(scalar) }
        }
        return shown
    }

    /// How a word that reads as an option or a request item is shown, up to its value, and
    /// what it reads as; nil for any other word.
    private static func wordShown(_ word: String) -> (String, String)? {
        if ParsedArguments.isOptionWord(word) {
            guard word.hasPrefix("--") else { return (String(word.prefix(2)) + (word.count > 2 ? "…" : ""), "an option") }
            let named = word.prefix { $0 != "=" }
            return (String(named) + (named.count < word.count ? "=…" : ""), "an option")
        }
        guard let lead = RequestItemParser.lead(of: word) else { return nil }
        return (lead + (lead.count < word.count ? "…" : ""), "another request item")
    }

    /// A space other than U+0020, which a shell does not split words at.
    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x80 && scalar.properties.isWhitespace
    }

    /// What to do about `found`: a space splits words only when it is a plain one; anything
    /// else invisible is deleted. In a URL, one the URL holds is written percent-encoded.
    private static func advice(_ found: Unicode.Scalar, encodedInURL: Bool) -> String {
        let encoded = "%" + Hex.encode(String(found).utf8, uppercase: true, separator: "%")
        let kept = encodedInURL ? ", or write \(encoded) where the URL holds one" : ""
        return found.properties.isWhitespace
            ? " (the shell splits words only at plain spaces); type a plain space between words\(kept)"
            : "; delete it\(kept)"
    }

    /// Spaces other than U+0020 (and the ASCII controls, which messages show as `\t`, `\n`),
    /// and characters that show as nothing.
    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 { return false }
        if isSpace(scalar) { return true }
        // Not the zero-width joiner and non-joiner: Persian words and emoji sequences hold them.
        return ["\u{200B}", "\u{2060}", "\u{FEFF}", "\u{00AD}"].contains(scalar)
    }

    private static func invisibleName(_ scalar: Unicode.Scalar) -> String {
        let name: String
        switch scalar {
        case "\u{00A0}": name = "a no-break space"
        case "\u{202F}": name = "a narrow no-break space"
        case "\u{3000}": name = "a full-width space"
        case "\u{200B}": name = "a zero-width space"
        case "\u{FEFF}": name = "a byte order mark"
        case "\u{00AD}": name = "a soft hyphen"
        case _ where scalar.properties.isWhitespace: name = "a space character"
        default: name = "an invisible character"
        }
        return "\(name) (\(Format.codePoint(scalar)))"
    }
}
