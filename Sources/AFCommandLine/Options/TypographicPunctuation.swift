import AFEngine

/// The dashes and quotes a word processor, a chat client or a web page puts where a command
/// had `--` and `'`: a command line copied from a document arrives with `–follow` (an en
/// dash) or `“https://example.org/x”`, which a shell passes on as they are. Read literally,
/// `–follow` took the URL's place and `“https` became a host name (`xn--https-hw3b`), sent
/// for and not found; af names the character instead.
enum TypographicPunctuation {
    /// Dashes that stand for `-` or `--` in copied text: hyphen, non-breaking hyphen, figure
    /// dash, en dash, em dash, horizontal bar, minus sign, small em dash, small hyphen-minus,
    /// fullwidth hyphen-minus.
    static let dashes: Set<Unicode.Scalar> = ["\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2015}", "\u{2212}", "\u{FE58}", "\u{FE63}", "\u{FF0D}"]

    /// The character's name in a message: `an en dash (U+2013)`.
    static func described(_ scalar: Unicode.Scalar) -> String {
        let name: String
        switch scalar {
        case "\u{2013}": name = "an en dash"
        case "\u{2014}": name = "an em dash"
        case "\u{2212}": name = "a minus sign"
        case "\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}": name = "a curly quote"
        case _ where dashes.contains(scalar): name = "a typographic dash"
        default: name = "a typographic quote"
        }
        return "\(name) (\(Format.codePoint(scalar)))"
    }

    /// A word in an option's place that begins with a typographic dash (`–follow`,
    /// `—output=x`, `–v`, `-–follow`): a usage error that names the dash and, when the rest is
    /// one of af's options, the option meant; nil for any other word. A value after `=` is
    /// left out (`–auth=bob:pw`). No URL begins so; a request item that does goes after `--`.
    static func dashedOptionMessage(_ word: String, origin: String) -> String? {
        // Every argument of every batch line comes here: each of the dashes begins with the
        // byte 0xE2 or 0xEF in UTF-8, and most words at once with something else.
        guard let lead = word.utf8.first(where: { $0 != UInt8(ascii: "-") }), lead == 0xE2 || lead == 0xEF,
              let first = word.unicodeScalars.first(where: { $0 != "-" }), dashes.contains(first) else { return nil }
        let body = Substring(word).drop { $0 == "-" || $0.unicodeScalars.count == 1 && dashes.contains($0.unicodeScalars[$0.unicodeScalars.startIndex]) }
        let name = String(body.splitOnce(byte: UInt8(ascii: "="))?.before ?? body)
        let dash = String(word.prefix(word.count - body.count))
        func intro(_ shown: String) -> String {
            "'\(Quote.argument(shown))'\(origin) has \(described(first)) for '-', as text copied from a document has"
        }
        if ParsedArguments.namesLongOption(name) { return "\(intro(dash + name)); did you mean '--\(name)'?" }
        // A document's dash most often stood for `--`; letters are read as a cluster when they
        // are one or two (`–v`, `–pb`) or all take no value (`–vF`), and never shown when they
        // reach `-a` and its password (`–abob:pw`).
        let secret = ParsedArguments.clusterEndsInSecret(name)
        let allFlags = name.allSatisfy { OptionTable.option(short: $0).map { $0.value == .flag } ?? false }
        if !name.isEmpty, name == body, !secret, name.count <= 2 || allFlags, ParsedArguments.isOptionWord("-" + name) {
            return "\(intro(dash + name)); did you mean '-\(Quote.argument(name))'?"
        }
        // Another name is shown with what it may have meant, unless it may be `-a` and a
        // password with nothing else to tell it by (`–data` is curl's --data, not `-d -a ta`).
        let plain = !name.isEmpty && name.utf8.allSatisfy { $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        let hint = plain ? Suggestions.knownHint(for: name) : nil
        let named = plain && (!secret || hint != nil)
        return intro(named || name.isEmpty ? dash + name : dash + "…") + ((named ? hint : nil) ?? "; a request item that begins with it goes after '--'")
    }

    /// A URL argument in quotes the shell did not take off (`“https://example.org/x”` copied
    /// from a document, `'"https://…"'` quoted twice), or in the brackets a mail or a Markdown
    /// page wraps a link in (`<https://…>`, `` `https://…` ``, `(https://…)`): a usage error
    /// that names the character and gives the URL without them; nil when the argument begins
    /// with none. No URL begins so (an IPv6 address's `[` is not among them).
    static func quotedURLMessage(_ url: String) -> String? {
        // Every batch line's URL comes here: most begin with a letter, `:` or `/`, at once.
        guard let lead = url.utf8.first, lead >= 0x80 || "\"'<`(".utf8.contains(lead),
              let first = url.unicodeScalars.first, isWrapper(first) else { return nil }
        // As many taken off the end as the start had: `(…/X_(y))` keeps its own `)`.
        var scalars = Substring(url).unicodeScalars
        var opened = 0
        while let head = scalars.first, isWrapper(head) { scalars.removeFirst(); opened += 1 }
        while opened > 0, let tail = scalars.last, isWrapper(tail) { scalars.removeLast(); opened -= 1 }
        let bare = String(scalars)
        let what: String, them: String
        switch first {
        case "\"", "'": (what, them) = ("a quote the shell kept (quoted twice?)", "the quotes")
        case "<": (what, them) = ("'<', as a mail or a Markdown page wraps a link", "the brackets")
        case "`": (what, them) = ("'`', as Markdown marks code", "the backticks")
        case "(": (what, them) = ("'('", "the parentheses")
        default: (what, them) = ("\(described(first)), as text copied from a document has", "the quotes")
        }
        let instead = bare.isEmpty ? "" : ": af \(CurlCommand.quote(bare))"
        return "the URL '\(Quote.argument(url))' begins with \(what); leave \(them) out\(Quote.argument(instead))"
    }

    /// What may wrap a URL pasted from elsewhere.
    private static func isWrapper(_ scalar: Unicode.Scalar) -> Bool {
        Format.typographicQuotes.contains(scalar) || "\"'<>`()".unicodeScalars.contains(scalar)
    }
}
