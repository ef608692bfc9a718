import AFEngine

/// What a URL argument cannot be. A word in the URL's place that is plainly something else
/// was sent as a URL all the same: curl's `-d @data.json URL` left `@data.json` there (the
/// `-d` of af and HTTPie takes no value), which af read as `http://@data.json/`, a host
/// called data.json with empty credentials, and it looked that host up; curl's
/// `--json '{"a":1}' URL` failed as a URL with a bad port. Both are usage errors before
/// anything is sent, naming the option before the word when there was one.
extension RequestBuilder {
    /// Refuses `url`, the argument in the URL's place, when it is a body file item (`@FILE`)
    /// or a JSON document; `follows` is the option without a value typed right before it.
    static func refuseNonURL(_ url: String, follows: FlagBefore?) throws(CommandFailure) {
        var hint: String { follows.flatMap { curlValueHint($0, value: url) } ?? "" }
        if let message = TypographicPunctuation.quotedURLMessage(url) ?? InvisibleCharacters.urlMessage(url) { throw .usage(message + hint) }
        if url.hasPrefix("@") {
            let item = Quote.shellWord(url)
            throw .usage("'\(Quote.argument(url))' is where the URL goes, and no URL starts with @: a file sent as the body is an item after the URL, as in af POST URL \(item)\(hint)")
        }
        // The bytes are copied for the scanner only when they may be JSON (this runs for every
        // line of a batch).
        if let first = url.utf8.first(where: { $0 != 32 && $0 != 9 && $0 != 10 && $0 != 13 }), first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
           JSONScanner.validate(Array(url.utf8)) == nil {
            let shown = url.count > 40 ? Quote.argument(String(url.prefix(37))) + "..." : Quote.argument(url)
            throw .usage("'\(shown)' is a JSON document where the URL goes: send it as the body after the URL, with --raw, @FILE or standard input, or as items such as name=value and name:=json\(hint)")
        }
    }

    /// Whether `argument`, in an item's place, is a URL without its scheme that was meant as
    /// the URL while the word before it took the URL's place: a host with a dot or
    /// `localhost` (`example.org/x`, no item), or one with a port and a path
    /// (`localhost:8080/x`, which parses as a header named after the host). Asked only when
    /// the URL argument came right after an option that takes no value in af but a value in
    /// curl (`-m 5 localhost:8080/x`), where the URL argument is surely that value; a file
    /// of that name is an item that forgot its `@`.
    static func isURLMeantAfterFlag(_ argument: String) -> Bool {
        guard looksLikeURL(argument), !FileSystem.exists(argument) else { return false }
        guard let item = try? RequestItemParser.parse(argument).item else { return true }
        guard case .header(_, let value) = item else { return false }
        // `host:8080/path`: a port and a path are no header value.
        let port = value.utf8.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        return !port.isEmpty && value.utf8.dropFirst(port.count).first.map { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? true
    }

    /// "; 'VALUE' came right after FLAG, which takes no value in af (what curl meant)" for an
    /// option that takes a value in curl: a letter such as `-m` or `-d`, or `--json` (`-j`);
    /// nil for another (`--offline`, `-v`), which no one typed a value for.
    static func curlValueHint(_ flag: FlagBefore, value: String) -> String? {
        if flag.long == "json" {
            return "; '\(Quote.argument(value))' came right after \(flag.described), which takes no value in af (curl's --json takes the document)"
        }
        return flag.letter == nil ? nil : flagValueHint(flag, value: value)
    }
}
