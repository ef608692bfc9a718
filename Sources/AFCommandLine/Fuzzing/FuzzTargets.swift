import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// The parsers that read untrusted bytes, each wrapped as a fuzz target with the invariant it
/// must keep. `af-fuzz` runs them under libFuzzer (`Fuzz/run.sh`); the test suite replays
/// the committed corpora through the same functions. A broken invariant is a trap.
package enum FuzzTargets {
    /// Every target by name.
    package static let all: [(name: String, run: @Sendable ([UInt8]) -> Void)] = [
        ("items", items),
        ("url", url),
        ("json", json),
        ("json-sort", jsonSorted),
        ("response-head", responseHead),
        ("inflate", EngineFuzzing.inflate),
        ("content-disposition", contentDisposition),
        ("retry-after", retryAfter),
        ("content-range", contentRange),
        ("client-identity", clientIdentity),
        ("config", config),
        ("session", session),
        ("trust-policy", trustPolicy),
        ("netrc", netrc),
        ("markup", markup),
        ("charset", charset),
        ("charset-label", charsetLabel),
        ("body-chunks", bodyChunks),
        ("report-body", reportBody),
        ("batch-line", batchLine),
        ("json-coding", EngineFuzzing.jsonCoding),
    ]

    /// The target called `name`.
    package static func target(named name: String) -> (@Sendable ([UInt8]) -> Void)? {
        all.first { $0.name == name }?.run
    }

    // MARK: Command line

    /// The planner the `batch-line` target plans lines with: made once, as `af batch` makes
    /// it once (it derives the base settings' transfer options and output plan when made).
    private static let batchPlanner = LinePlanner(base: Settings(), environment: Environment(arguments: []))

    /// Lines of an `af batch` file: joined where a line ends with a backslash, split with
    /// shell quoting and planned as a line's command line. Reading line by line whether the
    /// command goes on must agree with splitting the command read so far; words that split
    /// must come back unchanged when quoted again and re-split.
    static func batchLine(_ data: [UInt8]) {
        readInPiecesAsWhole(data)
        let planner = batchPlanner
        // Split at LF bytes, as `LineReader` splits: a String split at the Character "\n"
        // left a CRLF (one Character) inside a line, which no line af reads can hold.
        let lines = data.split(separator: 10, omittingEmptySubsequences: false).prefix(64).map { String(decoding: $0, as: UTF8.self) }
        var next = 0
        while next < lines.count {
            // As `LineReader.nextCommand` joins them.
            var text = lines[next]
            var line = text
            var carry = ShellWords.Carry()
            next += 1
            while true {
                let goesOn = ShellWords.continues(line, from: &carry)
                var endsWithBackslash = false
                do { _ = try ShellWords.split(text) } catch { endsWithBackslash = error == .trailingBackslash }
                if let plain = ShellWords.plainWords(text) {
                    precondition((try? ShellWords.splitQuoted(text)) == plain, "a plain line splits otherwise byte by byte: \(text.utf8.count) bytes")
                }
                precondition(goesOn == endsWithBackslash, "line-by-line continuation disagrees with the split of \(text.utf8.count) bytes")
                guard goesOn, next < lines.count else { break }
                text += "\n" + lines[next]
                line = lines[next]
                next += 1
            }
            // As af batch reads a command: a NUL is refused before the words are split.
            guard let words = try? LinePlanner.words(text) else { continue }
            precondition(!words.contains { $0.utf8.contains(0) }, "a word holds a NUL")
            // Quotes are replaced as bytes: a quote followed by a combining mark is one
            // Character, which a Character-level replace would not see.
            let requoted = words.map { "'" + $0.replacingBytes(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            precondition((try? ShellWords.split(requoted)) == words, "batch words do not survive requoting: \(words.prefix(4))")
            _ = try? planner.plan(words)
        }
    }

    /// A batch's bytes read as `af batch -` reads a pipe — a read at a time, a command line cut
    /// between reads finished by a later one — give the command lines (and the errors, with
    /// their line numbers) that reading them in one piece gives.
    private static func readInPiecesAsWhole(_ data: [UInt8]) {
        // Within one pipe's room, and few enough system calls to keep the fuzzer fast.
        guard data.count <= 16_384 else { return }
        let whole = commandLines(of: data, pieces: [data.count])
        // A byte at a time (a terminal's lines come so), and a size the input picks.
        let sizes = [2, 3, 7, 64, 1000]
        for size in (data.count <= 4096 ? [1] : []) + [sizes[Int(data.last ?? 0) % sizes.count]] {
            let pieces = stride(from: 0, to: data.count, by: size).map { min(size, data.count - $0) }
            let cut = commandLines(of: data, pieces: pieces)
            precondition(cut == whole, "read in pieces of \(size), \(data.count) bytes give other command lines: \(cut.count) against \(whole.count)")
        }
    }

    /// The command lines `LineReader` finds in `data` written to a pipe in `pieces`, each read
    /// when written, as "LINE text" or "LINE ! error".
    private static func commandLines(of data: [UInt8], pieces: [Int]) -> [String] {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return [] }
        defer { close(ends[0]) }
        let reader = LineReader(fd: ends[0], name: "standard input")
        var found: [String] = []
        func collect() {
            while true {
                do throws(CommandFailure) {
                    guard case .command(let text) = try reader.availableCommand() else { return }
                    found.append("\(reader.commandLineNumber) \(text)")
                } catch {
                    found.append("\(reader.commandLineNumber) ! \(error.message)")
                }
            }
        }
        var offset = 0
        for piece in pieces where piece > 0 {
            let written = data[offset..<offset + piece].withUnsafeBytes { write(ends[1], $0.baseAddress, piece) }
            precondition(written == piece, "a pipe took \(written) of \(piece) bytes")
            offset += piece
            try? reader.readReady()
            collect()
        }
        close(ends[1])
        try? reader.readReady()
        collect()
        return found
    }

    /// One request item per line: parsing never traps, and a JSON body built from the data
    /// items is always valid JSON.
    static func items(_ data: [UInt8]) {
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).prefix(64)
        let builder = NestedJSONBuilder()
        for line in lines {
            guard let item = try? RequestItemParser.parse(String(line)) else { continue }
            // Words a no-break space joined into the item are named, never trapped on.
            if item.item.isTypedText { _ = InvisibleCharacters.joinedItemMessage(String(line)) }
            switch item.item {
            case .field(let key, let value):
                try? builder.insert(key: key, json: JSONWriter.quoted(value), item: item.argument)
            case .jsonField(let key, let json):
                guard let valid = try? BodyBuilder.validatedJSON(json, item: item.argument, typedKey: key) else { continue }
                try? builder.insert(key: key, json: valid, item: item.argument)
            default:
                _ = item
            }
        }
        let body = builder.render()
        precondition(JSONScanner.validate(Array(body.utf8)) == nil, "the built body is not valid JSON: \(body.prefix(200))")
    }

    /// A URL argument: building never traps, and what it builds parses again.
    static func url(_ data: [UInt8]) {
        let text = String(decoding: data.prefix(4096), as: UTF8.self)
        // The same text as a `no_proxy` list, read for a name, an IPv4 and an IPv6 host, as
        // libcurl before and after 7.86 reads it: never a trap.
        for host in ["example.test", "127.0.0.1", "[::1]"] {
            _ = ProxySettings.noProxyList(text, sendsAround: host)
            _ = NoProxyList.sendsAround(text, host: host, readsRanges: false)
        }
        for https in [false, true] {
            guard let built = try? URLBuilder.build(text, https: https, query: [("q", text)], pathAsIs: false) else { continue }
            precondition((try? HTTPURL(parsing: built.string, pathAsIs: true)) != nil, "a built URL does not parse again: \(built.string.prefix(200))")
        }
        // A Location a server sends, followed (spaces and bytes past ASCII encoded): what it
        // resolves to is a URL that parses again as it stands. Left out with a NUL or a line
        // break, which no header line holds.
        if !text.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 }), let target = try? HTTPURL(parsing: "http://a.test/b/c?d").resolving(text) {
            precondition((try? HTTPURL(parsing: target.string, pathAsIs: true)) != nil, "a followed Location does not parse again: \(target.string.prefix(200))")
        }
        // The URL as put together from its parts is the URL as libcurl renders it.
        if let parsed = try? HTTPURL(parsing: text), let rendered = HTTPURL.libcurlRendering(of: text) {
            precondition(parsed.string == rendered, "put together \(parsed.string), rendered \(rendered)")
        }
        // Taking the credentials out keeps the origin, the path and the query.
        for candidate in [text, "http://u:p@h/" + text] {
            guard let parsed = try? HTTPURL(parsing: candidate), parsed.user != nil || parsed.password != nil else { continue }
            let stripped = parsed.removingCredentials()
            precondition(stripped.scheme == parsed.scheme && stripped.host == parsed.host && stripped.port == parsed.port
                         && stripped.path == parsed.path && stripped.query == parsed.query, "taking credentials out of \(parsed.string) gave \(stripped.string)")
        }
        // Hiding the passwords of the URLs in a text (`--debug`, messages) hides the password
        // the URL parser reads: what is left parses with the mark in its place.
        // However many slashes follow the scheme (`https:/u:p@h`, `http:u:p@h`). Text with a
        // NUL is left out: libcurl reads a URL as a C string, up to it (no argument or header
        // line holds one).
        for candidate in [text, "http://u:p@h/" + text] where !candidate.utf8.contains(0) {
            guard let parsed = try? HTTPURL(parsing: candidate), let password = parsed.password, !password.isEmpty else { continue }
            let hidden = MessageQuote.withoutPasswords(in: candidate, writing: "HIDDEN")
            precondition((try? HTTPURL(parsing: hidden))?.password == "HIDDEN", "hiding the password of \(candidate.prefix(200)) gave \(hidden.prefix(200))")
        }
        // A guessed correction of a mistyped scheme is an http or https URL that keeps what
        // followed the scheme.
        if let meant = SchemeTypo.correction(of: text) {
            // Compared by bytes: what follows may start with a combining mark, which joins
            // the scheme's last character in one Character.
            let scheme = meant.utf8.starts(with: "https://".utf8) ? 8 : meant.utf8.starts(with: "http://".utf8) ? 7 : 0
            let kept = Array(meant.utf8.dropFirst(scheme))
            precondition(scheme > 0 && Array(text.utf8).suffix(kept.count) == kept[...],
                         "a scheme correction of \(text.prefix(100)) gave \(meant.prefix(100))")
        }
        // A proxy URL af lets through names a scheme libcurl speaks as a proxy, or none.
        if ProxyAddress.problem(text) == nil, let offset = text.utf8Offset(of: "://") {
            let scheme = String(decoding: text.utf8.prefix(offset), as: UTF8.self).lowercased()
            precondition(ProxyAddress.schemes.contains(scheme), "a proxy URL with the scheme \(scheme.prefix(40)) passed")
        }
        // A URL read without libcurl's parser is the URL libcurl's parser reads, part by part.
        for candidate in [text, "http://" + text, "http://h/" + text, "https://127.0.0.1:8080/?" + text] {
            guard let simple = try? HTTPURL(parsing: candidate) else { continue }
            let full = try? HTTPURL.parsedByLibcurl(candidate)
            precondition(simple == full, "read simply as \(simple), by libcurl as \(String(describing: full))")
        }
    }

    /// The formatter keeps every token: the tokens of its output are the tokens of its input,
    /// however the input is cut into chunks.
    static func json(_ data: [UInt8]) {
        checkFormatting(data, sortKeys: false)
    }

    /// With `--sort-keys` the output's tokens are a permutation of the input's.
    static func jsonSorted(_ data: [UInt8]) {
        checkFormatting(data, sortKeys: true)
    }

    private static func checkFormatting(_ data: [UInt8], sortKeys: Bool) {
        let split = data.isEmpty ? 0 : Int(data[0]) % (data.count + 1)
        guard JSONScanner.validate(data) == nil else {
            // Invalid input must still not trap, and what is shown (the formatted part, then
            // the rest as it came) is the same whether the input comes whole or in pieces.
            let pieces = [split, data.count - split]
            let shown = shownInvalid(data, pieces: pieces, sortKeys: sortKeys)
            precondition(shownInvalid(data, pieces: [data.count], sortKeys: sortKeys) == shown,
                         "feeding in pieces changed what invalid JSON shows")
            // Every byte of the input is shown: only whitespace outside strings differs.
            let isSpace: (UInt8) -> Bool = { $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 }
            let given = data.filter { !isSpace($0) }, kept = shown.filter { !isSpace($0) }
            precondition(sortKeys ? given.sorted() == kept.sorted() : given == kept, "invalid JSON lost or gained bytes")
            if sortKeys {
                // Nothing is lost: the same bytes as without sorting (records that ended
                // before the problem sorted, the rest in its own order).
                let plain = shownInvalid(data, pieces: pieces)
                precondition(shown.count == plain.count && shown.sorted() == plain.sorted(), "sorting lost or changed what invalid JSON shows")
            }
            return
        }
        let (out, _) = formatValid(data, split: split, JSONFormatter.Style(indent: 2, sortKeys: sortKeys))
        if !sortKeys {
            // Painted output (its own scanning loop) is the plain output with colours around
            // tokens, its strings shown for reading (DEL, C1 controls and bytes that are no
            // UTF-8 escaped; outside strings the layout is ASCII, which that leaves alone).
            let (painted, _) = formatValid(data, split: split, JSONFormatter.Style(indent: 2, theme: Theme.monokai))
            var forReading: [UInt8] = []
            out.withUnsafeBytes { UnicodeEscapes.decodeForDisplay($0, decodingEscapes: false, into: &forReading) }
            precondition(withoutColours(painted) == forReading, "colours changed the layout")
            // For a terminal (escapes decoded) nothing is written that a terminal would obey:
            // no control character but the line breaks of the layout, no DEL, no C1 control.
            let (shownOnTerminal, _) = formatValid(data, split: split, JSONFormatter.Style(indent: 2, decodesEscapes: true))
            precondition(!Self.holdsTerminalControl(shownOnTerminal), "a control character reached the terminal")
        }
        let before = tokens(data)
        let after = tokens(out)
        if sortKeys {
            precondition(before.sorted { $0.lexicographicallyPrecedes($1) } == after.sorted { $0.lexicographicallyPrecedes($1) },
                         "sorting changed the tokens")
            checkKeyOrder(out)
            checkSortLimit(data, split: split, sorted: out)
        } else {
            precondition(before == after, "formatting changed the tokens")
        }
    }

    /// Whether `bytes` hold what a terminal would obey: a control character but a line break
    /// or tab, DEL, or a C1 control (`TerminalText`'s rule).
    static func holdsTerminalControl(_ bytes: [UInt8]) -> Bool {
        String(decoding: bytes, as: UTF8.self).unicodeScalars.contains(where: TerminalText.isUnsafe)
    }

    /// What the body printer shows for JSON (valid or not) fed in pieces of the given sizes:
    /// the formatted part, then the failing token to the end of its piece and the pieces not
    /// fed, or, for input cut short, what the formatter could not finish (also for the
    /// formatter's tests).
    static func shownInvalid(_ data: [UInt8], pieces: [Int], sortKeys: Bool = false) -> [UInt8] {
        shown(data, pieces: pieces, style: JSONFormatter.Style(indent: 2, sortKeys: sortKeys))
    }

    static func shown(_ data: [UInt8], pieces: [Int], style: JSONFormatter.Style) -> [UInt8] {
        var formatter = JSONFormatter(style: style)
        var out: [UInt8] = []
        var start = 0
        for size in pieces {
            let end = start + size
            do {
                try formatter.feed(Array(data[start..<end]), into: &out)
            } catch {
                return out + formatter.unformattedTail + data[end...]
            }
            start = end
        }
        do {
            try formatter.finish(into: &out)
        } catch {
            return out + formatter.unformattedTail
        }
        return out
    }

    /// The bytes without `ESC [ ... m` sequences (also for the formatter's tests).
    static func withoutColours(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x1B, index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") {
                index += 2
                while index < bytes.count, bytes[index] != UInt8(ascii: "m") { index += 1 }
                index += 1
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    /// Sorting that gives up at a limit (a byte count taken from the input) loses nothing:
    /// the bytes formatting without sorting writes (what was sorted before the limit was
    /// reached stays sorted). A limit not reached changes nothing.
    private static func checkSortLimit(_ data: [UInt8], split: Int, sorted: [UInt8]) {
        let limit = Int(data.last ?? 0) % (data.count + 1)
        let (limited, gaveUp) = formatValid(data, split: split, JSONFormatter.Style(indent: 2, sortKeys: true, sortLimit: limit))
        guard gaveUp else {
            precondition(limited == sorted, "a limit not reached changed the output")
            return
        }
        let plain = formatValid(data, split: split, JSONFormatter.Style(indent: 2)).output
        precondition(limited.count == plain.count && limited.sorted() == plain.sorted(), "giving up sorting lost or changed bytes")
    }

    /// Formats valid JSON fed in two pieces (split at `split`); returns the output and
    /// whether sorting gave up.
    private static func formatValid(_ data: [UInt8], split: Int, _ style: JSONFormatter.Style) -> (output: [UInt8], gaveUp: Bool) {
        var formatter = JSONFormatter(style: style)
        var out: [UInt8] = []
        do {
            try formatter.feed(Array(data[..<split]), into: &out)
            try formatter.feed(Array(data[split...]), into: &out)
            try formatter.finish(into: &out)
        } catch {
            preconditionFailure("valid JSON failed to format: \(error.description)")
        }
        return (out, formatter.gaveUpSorting)
    }

    /// Every object's keys in `output` come in the order of their texts' Unicode scalars.
    private static func checkKeyOrder(_ output: [UInt8]) {
        var scanner = JSONScanner()
        var sink = CollectingSink()
        try? scanner.feed(output, into: &sink)
        try? scanner.finish(into: &sink)
        // The previous key of each open object (nil for arrays and before an object's first key).
        var previous: [[UInt8]?] = []
        for token in sink.tokens {
            switch token.kind {
            case .beginObject, .beginArray: previous.append(nil)
            case .endObject, .endArray: _ = previous.popLast()
            case .string where token.isKey:
                let text = token.bytes.dropFirst().dropLast().withUnsafeBytes { JSONStringText.unescaped($0) }
                if let last = previous.last, let earlier = last {
                    precondition(!text.lexicographicallyPrecedes(earlier), "keys out of order")
                }
                if !previous.isEmpty { previous[previous.count - 1] = text }
            default: break
            }
        }
    }

    private static func tokens(_ bytes: [UInt8]) -> [[UInt8]] {
        var scanner = JSONScanner()
        var sink = CollectingSink()
        try? scanner.feed(bytes, into: &sink)
        try? scanner.finish(into: &sink)
        return sink.tokens.map(\.bytes)
    }

    /// XML indentation keeps every token: without whitespace, output and input are equal;
    /// colouring keeps the layout too.
    static func markup(_ data: [UInt8]) {
        let text = String(decoding: data.prefix(1 << 16), as: UTF8.self)
        if let indented = MarkupFormatter.indent(text, by: 2, colors: nil) {
            precondition(indented.unicodeScalars.filter { !$0.properties.isWhitespace }.elementsEqual(text.unicodeScalars.filter { !$0.properties.isWhitespace }),
                         "indenting changed a token")
        }
        // Colouring adds colour sequences and nothing else; indenting with colours is the
        // plain indentation with colours. (Text with an escape byte of its own is left out:
        // removing colour sequences would remove its sequences too.)
        let colors = MarkupFormatter.Colors(Theme.auto)
        guard !data.prefix(1 << 16).contains(0x1B) else { return }
        if let coloured = MarkupFormatter.colour(text, colors: colors) {
            precondition(withoutColours(Array(coloured.utf8)) == Array(text.utf8), "colouring changed the text")
        }
        if let plain = MarkupFormatter.indent(text, by: 2, colors: nil),
           let painted = MarkupFormatter.indent(text, by: 2, colors: colors) {
            precondition(withoutColours(Array(painted.utf8)) == Array(plain.utf8), "colours changed the indentation")
        }
    }

    /// Text decoded for a terminal: the same text whether the body comes whole or in two
    /// pieces, in every charset af decodes (the first byte picks one, the second the split).
    static func charset(_ data: [UInt8]) {
        guard data.count >= 2 else { return }
        let labels = ["utf-8", "", "windows-1252", "shift_jis", "utf-16", "iso-2022-jp", "big5", "euc-jp", "gb18030", "utf-32le"]
        let label = labels[Int(data[0]) % labels.count]
        let body = Array(data[2...])
        let split = Int(data[1]) % (body.count + 1)
        func decoder() -> CharsetDecoder? { label.isEmpty ? .sniffing() : CharsetDecoder(label: label) }
        guard let whole = decoder(), let pieces = decoder() else { return }
        let once = whole.decode(body, final: true)
        let twice = pieces.decode(body[..<split]) + pieces.decode(body[split...], final: true)
        // Sniffing decides on the first piece with bytes beyond ASCII, which the split may
        // cut short, so only a declared charset must agree.
        if !label.isEmpty {
            precondition(once == twice, "decoding \(label) in two pieces changed the text")
        }
    }

    /// A charset label as a server's `Content-Type`, a document or `--response-charset` gives
    /// it (any bytes, with Python's spellings tried after iconv's): it never traps, a label
    /// with no letter or digit names no charset (iconv would take "" as the locale's), and a
    /// charset it names decodes a body in two pieces as in one. The first byte says how long
    /// the label is, the second where the body is cut.
    static func charsetLabel(_ data: [UInt8]) {
        guard data.count >= 2 else { return }
        let length = min(Int(data[0]) % 48, data.count - 2)
        let label = String(decoding: data[2..<(2 + length)], as: UTF8.self)
        let body = Array(data[(2 + length)...])
        let split = Int(data[1]) % (body.count + 1)
        guard let whole = CharsetDecoder(label: label), let pieces = CharsetDecoder(label: label) else { return }
        precondition(label.utf8.contains { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) },
                     "'\(label)' names a charset without a letter or digit")
        let once = whole.decode(body, final: true)
        let twice = pieces.decode(body[..<split]) + pieces.decode(body[split...], final: true)
        precondition(once == twice, "decoding '\(label)' in two pieces changed the text")
    }

    /// A response body shown as the network splits it into chunks (BodyPrinter): it never
    /// traps; piped on, its bytes come out exactly; and formatted JSON, and text in a declared
    /// charset, come out the same however it is split. (More than once the first chunk
    /// decided what a whole body was: its charset, whether it was JSON, whether it was
    /// binary, whether it had an anti-XSSI prefix.) The first byte picks the type, the
    /// second the style, the third how the body is cut.
    static func bodyChunks(_ data: [UInt8]) {
        guard data.count >= 3 else { return }
        let types = ["application/json", "text/plain; charset=utf-8", "text/plain; charset=windows-1252", "text/plain",
                     "text/html", "application/xml", "application/x-ndjson", "application/octet-stream", "text/plain; charset=shift_jis"]
        let type = types[Int(data[0]) % types.count]
        let styles = [
            BodyStyle(format: false, theme: nil, indent: 4, sortKeys: false, terminal: false, stream: false, responseCharset: nil),
            BodyStyle(format: true, theme: nil, indent: 4, sortKeys: false, terminal: false, stream: false, responseCharset: nil),
            BodyStyle(format: true, theme: .auto, indent: 2, sortKeys: false, terminal: true, stream: false, responseCharset: nil),
            BodyStyle(format: true, theme: nil, indent: 4, sortKeys: true, terminal: true, stream: false, responseCharset: nil),
            BodyStyle(format: true, theme: nil, indent: 4, sortKeys: false, terminal: true, stream: true, responseCharset: nil),
            BodyStyle(format: false, theme: .auto, indent: 4, sortKeys: false, terminal: false, stream: false, responseCharset: nil),
        ]
        let style = styles[Int(data[1]) % styles.count]
        let body = Array(data[3...].prefix(1 << 16))
        let cuts = pieceSizes(of: body.count, seed: data[2])
        let whole = shown(body, cutInto: [body.count], type: type, style: style)
        let pieces = shown(body, cutInto: cuts, type: type, style: style)
        if !style.format, !style.escapes {
            precondition(whole == body && pieces == body, "a body piped on was changed")
        }
        // A NUL, a stream's lines and undeclared charsets may be told apart only as they come.
        let declared = type == "application/json" || type.containsBytes(of: "charset=")
        // On a terminal no control character a server sent is passed on raw, nor a byte that
        // is no UTF-8 (without colours every escape byte is the server's). In colours into a
        // pipe (read through `less -R` or `cat`), the same but for the layout's own line ends
        // (`--pretty=colors` keeps a JSON body's CR LF).
        for output in [whole, pieces] where style.escapes {
            let plain = style.theme == nil ? output : withoutColours(output)
            let safe = String(validating: plain, as: UTF8.self).map { text in
                !text.unicodeScalars.contains { TerminalText.isUnsafe($0) && (style.terminal || $0 != "\r") }
            } ?? false
            precondition(safe, "a control character or a byte that is not UTF-8 reached \(style.terminal ? "the terminal" : "coloured output"): \(String(decoding: plain, as: UTF8.self).debugDescription)")
        }
        // Nothing is lost where the body is shown as text: each of its printable ASCII bytes
        // is in what is shown, in order (formatting adds and moves only blanks, escaping
        // only adds). Bodies without bytes that a charset, a JSON escape decoded on a
        // terminal, or a NUL (binary) could change, and not sorted. A short body that was not
        // JSON after all came out as nothing.
        let keepsASCII = type.hasPrefix("application/json") || type.hasPrefix("text/plain; charset=utf-8") || type.hasPrefix("text/html")
            || type.hasPrefix("application/xml") || type.hasPrefix("application/x-ndjson") || type == "text/plain"
        if style.escapes, keepsASCII, !style.sortKeys, !body.contains(where: { $0 >= 0x80 || $0 == 0 || $0 == UInt8(ascii: "\\") }) {
            let printable = body.filter { (0x21..<0x7F).contains($0) }
            for output in [whole, pieces] {
                var rest = withoutColours(output)[...]
                let kept = printable.allSatisfy { byte in
                    guard let found = rest.firstIndex(of: byte) else { return false }
                    rest = rest[(found + 1)...]
                    return true
                }
                precondition(kept, "a body shown as text (\(type)) lost bytes: \(String(decoding: body, as: UTF8.self).debugDescription) came out as \(String(decoding: output, as: UTF8.self).debugDescription)")
            }
        }
        if declared, !style.stream, !body.contains(0) {
            precondition(whole == pieces, "a body cut into \(cuts) was shown differently (\(type)): \(String(decoding: whole, as: UTF8.self).debugDescription) against \(String(decoding: pieces, as: UTF8.self).debugDescription)")
        }
    }

    /// Sizes from 1 to 16 bytes that add up to `count`, in a pattern `seed` picks: where a
    /// body arriving from the network is cut.
    static func pieceSizes(of count: Int, seed: UInt8) -> [Int] {
        var sizes: [Int] = []
        var at = 0
        var pattern = UInt32(seed) &* 2_654_435_761
        while at < count {
            let size = Int(pattern >> 28) + 1
            pattern = pattern &* 1_103_515_245 &+ 12345
            sizes.append(min(size, count - at))
            at += size
        }
        return sizes
    }

    /// A report's body (`--report=json`), written from pieces: whatever the bytes and
    /// wherever the pieces are cut, the value is the same as from one piece, and it is valid
    /// JSON in valid UTF-8 (the report around it is).
    static func reportBody(_ data: [UInt8]) {
        guard let seed = data.first else { return }
        let body = Array(data.dropFirst().prefix(1 << 16))
        let whole = reported(body, cutInto: [body.count])
        let pieces = reported(body, cutInto: pieceSizes(of: body.count, seed: seed))
        precondition(whole == pieces, "a report's body cut into pieces came out differently: \(String(decoding: whole, as: UTF8.self).debugDescription) against \(String(decoding: pieces, as: UTF8.self).debugDescription)")
        precondition(String(validating: whole, as: UTF8.self) != nil, "a report's body is not UTF-8")
        precondition(JSONScanner.validate(whole) == nil, "a report's body is not one JSON value: \(String(decoding: whole, as: UTF8.self).debugDescription)")
    }

    /// The body in pieces of `sizes`, as a report reads it back.
    private struct Pieces: ReportBodySource {
        let body: [UInt8]
        let sizes: [Int]

        func replay(_ piece: (UnsafeRawBufferPointer) throws(AFError) -> Bool) throws(AFError) {
            var offset = 0
            for size in sizes {
                let more = try Array(body[offset..<(offset + size)]).withBytes { chunk throws(AFError) in try piece(chunk) }
                offset += size
                if !more { return }
            }
        }

        func prefix(_ count: Int) -> [UInt8] { Array(body.prefix(count)) }
    }

    /// What `ReportBodyWriter` writes for `body` read back in pieces of `sizes`.
    private static func reported(_ body: [UInt8], cutInto sizes: [Int]) -> [UInt8] {
        let source = Pieces(body: body, sizes: sizes)
        let out = OutputChannel(holdingUpTo: 64 << 20, isTerminal: false) {
            .failure(.output(OutputFailure(kind: .writeFailed, message: "held output overflowed")))
        }
        let writer = ReportBodyWriter(pending: [], out: out)
        do throws(AFError) {
            try writer.write(source, form: ReportBodyWriter.form(of: source))
        } catch {
            preconditionFailure("writing to held output failed: \(error)")
        }
        return out.release().bytes + writer.pending
    }

    /// What a `BodyPrinter` writes for `body` delivered in chunks of `sizes`.
    private static func shown(_ body: [UInt8], cutInto sizes: [Int], type: String, style: BodyStyle) -> [UInt8] {
        let head = ResponseHead(status: 200, reason: "OK", httpVersion: "HTTP/1.1", headers: [HTTPHeader("Content-Type", type)])
        let printer = BodyPrinter(head: head, style: style)
        let out = OutputChannel(holdingUpTo: 64 << 20, isTerminal: style.terminal) {
            .failure(.output(OutputFailure(kind: .writeFailed, message: "held output overflowed")))
        }
        var offset = 0
        do throws(AFError) {
            for size in sizes {
                try Array(body[offset..<(offset + size)]).withBytes { chunk throws(AFError) in try printer.write(chunk, to: out) }
                offset += size
            }
            try printer.finish(to: out)
        } catch {
            preconditionFailure("writing to held output failed: \(error)")
        }
        return out.release().bytes
    }

    // MARK: Engine parsers

    /// Response head lines: never trap, whatever the lines and limits.
    static func responseHead(_ data: [UInt8]) {
        EngineFuzzing.responseHead(data)
    }

    /// A server's file name never leaves the download directory, never hides an extension
    /// behind an invisible character and never looks like an option.
    static func contentDisposition(_ data: [UInt8]) {
        let text = String(decoding: data.prefix(8192), as: UTF8.self)
        let suggested = DownloadNaming.filename(fromContentDisposition: text) ?? text
        for name in [DownloadNaming.sanitize(suggested), DownloadNaming.sanitize(text)] {
            // Bytes, as the file system and a shell see them: a combining mark after `/`, `.`
            // or `-` makes one Character that compares equal to none of them.
            precondition(!name.containsByte(UInt8(ascii: "/")) && !name.containsByte(UInt8(ascii: "\\")), "a name with a directory: \(name)")
            precondition(name.utf8.first != UInt8(ascii: ".") && name.utf8.first != UInt8(ascii: "-"), "a hidden or option-like name: \(name)")
            precondition(name.utf8.count <= 200, "a name over 200 bytes")
            precondition(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0.properties.generalCategory == .format },
                         "a control or format character in \(name.debugDescription)")
        }
    }

    /// `Retry-After` and HTTP dates: never trap, and a delay is finite and not negative.
    /// A resumed download's `Content-Range`, at an offset the first eight bytes give: a range
    /// to append starts at the offset and ends after it, within the length it gives, and reads
    /// the same when written out again; one that starts elsewhere says where, unless unread.
    /// The same bytes as a `Range: bytes=N-` value read as N written out again.
    static func contentRange(_ data: [UInt8]) {
        var offset: Int64 = 0
        for byte in data.prefix(8) { offset = offset << 8 | Int64(byte) }
        offset = offset & Int64.max
        let value = String(decoding: data.dropFirst(8).prefix(1024), as: UTF8.self)
        for at in [offset, 1000] {
            switch DownloadSink.resumedRange(value, offset: at) {
            case .appendable(let end, let total):
                precondition(end > at && total.map { $0 >= end } ?? true, "appended \(at)..<\(end) of \(String(describing: total))")
                let again = "bytes \(at)-\(end - 1)/\(total.map(String.init) ?? "*")"
                precondition(DownloadSink.resumedRange(again, offset: at) == .appendable(end: end, total: total), "\(again) reads otherwise")
            case .otherStart(let start):
                precondition(start != at, "a range at the offset read as starting elsewhere")
            case .invalid:
                break
            }
        }
        // The request's own `Range: bytes=N-`, read back to count a resumed body's bytes
        // toward --max-filesize: N reads the same when written out again.
        for text in [value, "bytes=" + value] {
            if let start = ByteRanges.restStart(text) {
                precondition(start >= 0 && ByteRanges.restStart("bytes=\(start)-") == start, "\(text) reads as \(start)")
            }
        }
    }

    /// A `--cert` file and a `--cert-key` file (split where the first two bytes say) read with
    /// and without a pass phrase: never a trap, OpenSSL never asks for one, a key is called
    /// encrypted only when no pass phrase was given and wrongly opened only when one was.
    static func clientIdentity(_ data: [UInt8]) {
        guard data.count >= 2 else { return }
        let body = Array(data.dropFirst(2).prefix(64 << 10))
        let split = min(body.count, Int(data[0]) << 8 | Int(data[1]))
        let certificate = Array(body[..<split])
        let key = split == body.count ? nil : Array(body[split...])
        let unasked = ClientIdentity.problem(certificate: certificate, key: key, passPhrase: nil)
        precondition(unasked != .wrongPassPhrase, "no pass phrase was given, yet it was wrong")
        let given = ClientIdentity.problem(certificate: certificate, key: key, passPhrase: "pass")
        precondition(given != .passPhraseNeeded, "a pass phrase was given, yet one was needed")
        if unasked != .passPhraseNeeded { precondition(given == unasked, "a pass phrase changed the verdict on a key that asks for none") }
        // The same bytes as a CA bundle or CRL file (checked before sending), and as a
        // server's certificate whose names an error lists.
        if unasked != .noCertificate(looksBinary: certificate.first == 0x30) {
            precondition(Certificates.holdsPEM(.certificate, in: certificate), "a PEM certificate the client check read is no CA bundle's")
        }
        _ = Certificates.holdsPEM(.revocationList, in: body)
        _ = EngineFuzzing.subjectAltNames(body)
    }

    static func retryAfter(_ data: [UInt8]) {
        let text = String(decoding: data.prefix(1024), as: UTF8.self)
        if let seconds = RetryPolicy.retryAfterSeconds(text) {
            precondition(seconds.isFinite && seconds >= 0, "Retry-After gave \(seconds)")
        }
        _ = HTTPDate.parse(text)
    }

    // MARK: af's own files

    static func config(_ data: [UInt8]) {
        withFile(data, name: "config.json") { directory, _ in
            let environment = Environment(arguments: [], variables: ["AF_CONFIG_DIR": directory])
            guard let (options, _) = try? ConfigFile.defaultOptions(environment: environment) else { return }
            // What a config may hold goes through the option parser like the command line.
            if let parsed = try? ParsedArguments.parse(options, source: "fuzz") {
                var settings = Settings()
                for option in parsed.options { try? settings.apply(option) }
            }
        }
    }

    /// Never traps; a session read is one libcurl can carry, and the Cookie line printed for
    /// it (`--offline`, `--curl`) stays one line. What af writes back reads back, in af's
    /// layout and in HTTPie's: the same session where the layout holds every part of it
    /// (af's own, HTTPie's lists; HTTPie's older objects keep one header and one cookie a name).
    static func session(_ data: [UInt8]) {
        withFile(data, name: "session.json") { _, path in
            guard let url = try? HTTPURL(parsing: "http://example.org/"), let secure = try? HTTPURL(parsing: "https://sub.example.org/a/b"),
                  let session = try? SessionFile.load(path: path, url: url) else { return }
            precondition(session.cookies.allSatisfy(\.isWellFormed), "a session read with a cookie libcurl cannot carry")
            for target in [url, secure] {
                let line = session.cookieLine(for: target, given: [HTTPHeader("Cookie", "given=1")], now: 1_000_000_000) ?? ""
                precondition(!line.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }, "a printed Cookie line with a line break")
            }
            withFile(Array(session.text.utf8), name: "written.json") { _, written in
                let again: SessionFile
                do throws(CommandFailure) {
                    again = try SessionFile.load(path: written, url: url)
                } catch {
                    preconditionFailure("a session af wrote that it cannot read back: \(error.message)")
                }
                precondition((again.httpie == nil) == (session.httpie == nil), "a session written back in another program's layout")
                let whole = session.httpie.map { $0.document["headers"]?.objectValue == nil && $0.document["cookies"]?.objectValue == nil } ?? true
                precondition(!whole || again.holdsTheSame(as: session), "a session that reads back changed")
            }
        }
    }

    static func trustPolicy(_ data: [UInt8]) {
        withFile(data, name: "policy.json") { _, path in
            _ = try? TrustPolicyFile.load(path: path, caBundle: nil, extras: [])
        }
    }

    /// Never traps, and a file reads the same with CRLF line ends as with LF ones (where no
    /// quote or backslash can make a CR part of a token).
    static func netrc(_ data: [UInt8]) {
        let text = String(decoding: data, as: UTF8.self)
        let parsed = Netrc(text: text)
        guard !text.containsByte(UInt8(ascii: "\"")), !text.containsByte(UInt8(ascii: "\\")) else { return }
        let unix = Netrc(text: text.replacingBytes(of: "\r\n", with: "\n"))
        for host in ["example.org", "a.test"] {
            precondition(parsed.credentials(for: host) == unix.credentials(for: host), "CRLF line ends read differently")
        }
    }

    /// Writes `data` to a scratch file (one directory per process) and runs `body` with it.
    private static func withFile(_ data: [UInt8], name: String, _ body: (String, String) -> Void) {
        let directory = scratchDirectory
        let path = directory + "/" + name
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        _ = data.withUnsafeBytes { FileIO.writeAll(fd, $0) }
        close(fd)
        body(directory, path)
    }

    private static let scratchDirectory: String = {
        var template = Array("/tmp/af-fuzz-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return mkdtemp(base) != nil
        }
        guard made else { return "/tmp" }
        atexit { FuzzTargets.removeScratchDirectory() }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Empties and removes the scratch directory when the process exits (it holds only the
    /// files `withFile` wrote).
    private static func removeScratchDirectory() {
        let directory = scratchDirectory
        guard let stream = opendir(directory) else { return }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { unlink(directory + "/" + name) }
        }
        closedir(stream)
        rmdir(directory)
    }
}
