import AFEngine

/// The request a command line describes, with what output needs to know about it.
///
/// Made once and then only read: its parts are held in one object, so that the copies a
/// batch line's request goes through (the plan, the run, the output) cost one reference each.
struct BuiltRequest: Sendable {
    struct Parts: Sendable {
        let description: RequestDescription
        let url: HTTPURL
        let body: BuiltBody
        let methodWasExplicit: Bool
        let session: SessionFile?
        let givenCredentials: Credentials?
        let givenHeaders: [HTTPHeader]
        let readFiles: Bool
    }

    private let storage: CopyOnWrite<Parts>

    init(_ parts: Parts) {
        storage = CopyOnWrite(parts)
    }

    var description: RequestDescription { storage.values.description }
    var url: HTTPURL { storage.values.url }
    var body: BuiltBody { storage.values.body }
    var methodWasExplicit: Bool { storage.values.methodWasExplicit }
    /// The `--session` file, when one is used.
    var session: SessionFile? { storage.values.session }
    /// Credentials given on this command line (`-a` or the URL), for the session to keep.
    var givenCredentials: Credentials? { storage.values.givenCredentials }
    /// Header items given on this command line, for the session to keep.
    var givenHeaders: [HTTPHeader] { storage.values.givenHeaders }
    /// Whether building it read a file (an item's or the session's): built again later, it
    /// could come out otherwise.
    var readFiles: Bool { storage.values.readFiles }
}

/// Turns positionals and settings into a `RequestDescription` (SPEC §1–§3).
enum RequestBuilder {
    static let userAgent = "af/\(AFVersion.current)"

    /// Whether `word` reads as a METHOD: ASCII letters only (`get`, `PROPFIND`).
    static func isMethodWord(_ word: String) -> Bool {
        !word.isEmpty && word.allSatisfy { $0.isASCII && $0.isLetter }
    }

    /// Splits positionals into METHOD, URL and items: the first positional is a method when
    /// another follows and it is made of letters only — unless that next one is plainly a
    /// data, query or file item (`af localhost a=1` means the URL `localhost`).
    static func split(_ positionals: [Positional]) throws(CommandFailure) -> (method: String?, url: String, items: [String]) {
        guard let first = positionals.first else {
            throw .usage("no URL given; usage: af [OPTIONS] [METHOD] URL [REQUEST_ITEM ...] (see 'af --help')")
        }
        if positionals.count >= 2, isMethodWord(first.text),
           !isBodyOrQueryItem(positionals[1].text)
        {
            let rest = positionals.dropFirst().map(\.text)
            if let mistake = schemeAsMethod(first.text, followedBy: rest) ?? commandAsMethod(first.text, followedBy: rest) { throw mistake }
            return (first.text.uppercased(), positionals[1].text, positionals.dropFirst(2).map(\.text))
        }
        return (nil, first.text, positionals.dropFirst().map(\.text))
    }

    /// `af https example.org/x` (a space for "://") or `af http GET URL` (a habit from
    /// HTTPie's `http` command) would send the method HTTP or HTTPS, which no server knows:
    /// a usage error with the command meant, before anything is sent.
    static func schemeAsMethod(_ word: String, followedBy rest: [String]) -> CommandFailure? {
        let scheme = word.lowercased()
        guard scheme == "http" || scheme == "https", let next = rest.first else { return nil }
        let meant: String
        if isURL(next) || next.hasPrefix(":") {
            meant = "af " + rest.joined(separator: " ")
        } else if rest.count >= 2, next.allSatisfy({ $0.isASCII && $0.isLetter }) {
            meant = "af \(next) \(isURL(rest[1]) ? "" : scheme + "://")\(rest[1])"
        } else {
            meant = "\(scheme)://\(next)"
        }
        return .usage("'\(Quote.argument(word)) \(Quote.argument(next))' reads as the method \(word.uppercased()) and the URL '\(Quote.argument(next))'; did you mean '\(Quote.argument(meant))'?")
    }

    /// The name of a command where the method goes: `af af get URL` (af typed twice, or a
    /// command pasted after it), `af curl URL`, `af xh URL` sent the method AF, CURL or XH,
    /// which no server knows. A usage error with the command meant; a method of that name is
    /// sent when written in capitals (`af CURL URL`), as no one types a command so.
    static func commandAsMethod(_ word: String, followedBy rest: [String]) -> CommandFailure? {
        guard ["af", "curl", "wget", "xh", "xhs", "httpie"].contains(word), !rest.isEmpty else { return nil }
        let meant = Quote.argument("af " + rest.map { CurlCommand.quote($0) }.joined(separator: " "))
        return .usage("'\(word)' reads as the method \(word.uppercased()), and \(word) is a command, not a method; did you mean '\(meant)'? "
            + "(a method \(word.uppercased()) is sent when written in capitals: af \(word.uppercased()) URL)")
    }

    /// Whether an argument is a method name af cannot send as METHOD: upper-case letters with
    /// digits, `-` or `_` among them (`M-SEARCH`, `VERSION-CONTROL`), which no URL a person
    /// types looks like.
    static func isMethodBeyondLetters(_ argument: String) -> Bool {
        let bytes = argument.utf8
        guard bytes.count <= 32, bytes.contains(where: { $0 >= 65 && $0 <= 90 }) else { return false }
        var beyond = false
        for byte in bytes {
            switch byte {
            case 65...90: continue
            case 48...57, UInt8(ascii: "-"), UInt8(ascii: "_"): beyond = true
            default: return false
            }
        }
        return beyond
    }

    /// Whether an argument starts as an absolute http or https URL does.
    static func isURL(_ argument: String) -> Bool {
        let head = argument.utf8.prefix(8).map { $0 | 0x20 }
        return head.starts(with: "http://".utf8) || head.starts(with: "https://".utf8)
    }

    /// Whether an argument in an item's place is a URL: one with its scheme, or the
    /// localhost shorthand (`:3000/x`), which no item can be (a header needs a name).
    static func isURLArgument(_ argument: String) -> Bool {
        isURL(argument) || (argument.hasPrefix(":") && looksLikeURL(argument))
    }

    /// Whether an argument parses as an item other than a header (headers look like
    /// `host:port`, so they cannot tell a URL from an item).
    static func isBodyOrQueryItem(_ argument: String) -> Bool {
        guard !argument.containsBytes(of: "://"), !argument.hasPrefix(":"), let item = try? RequestItemParser.parse(argument).item else { return false }
        switch item {
        case .header, .unsetHeader, .emptyHeader, .headerFromFile: return false
        default: return true
        }
    }

    /// - Parameters:
    ///   - options: the transfer options of `settings`, when the caller has them already
    ///     (`af batch` makes them once for every line without options of its own).
    ///   - holdsPipes: a body file that is a pipe is read whole here, before the transfer
    ///     (`BodyBuilder.Spooler`); `af batch`, which checks its lines before it runs them,
    ///     leaves it to the transfer.
    static func build(
        positionals: [Positional], settings: Settings, environment: Environment, options known: TransferOptions? = nil, holdsPipes: Bool = true
    ) throws(CommandFailure) -> BuiltRequest {
        let (explicitMethod, urlArgument, itemArguments) = try split(positionals)
        var items: [SourcedItem] = []
        let urlFollows = (explicitMethod == nil ? positionals.first : positionals.dropFirst().first)?.follows
        if let method = explicitMethod { try refuseValueAsMethod(positionals[0], method: method) }
        try refuseNonURL(urlArgument, follows: urlFollows)
        for index in itemArguments.indices {
            try refuseNonItems(itemArguments, at: index, method: explicitMethod, url: urlArgument, urlFollows: urlFollows, settings: settings)
        }
        let itemPositionals = Array(positionals.suffix(itemArguments.count))
        if let curlValue = curlValueAfterLetter(itemPositionals) { throw curlValue }
        for (index, argument) in itemArguments.enumerated() {
            do throws(CommandFailure) {
                var sourced = try RequestItemParser.parse(argument)
                if sourced.item.readsFile { sourced.item = sourced.item.expandingHome(environment.homeDirectory) }
                items.append(sourced)
            } catch {
                // Not an item: perhaps curl's value for the letter before it (`-m 10`).
                throw splitHeaderValue(itemArguments, at: index, secretHeaders: settings.secretHeaders)
                    ?? urlAfterItems(method: explicitMethod, url: urlArgument, items: itemArguments, at: index, urlFollows: urlFollows)
                    ?? methodBeyondLetters(method: explicitMethod, url: urlArgument, items: itemArguments, at: index)
                    ?? CommandFailure(error.message + letterHint(itemPositionals[index].follows, value: argument), exitCode: error.exitCode)
            }
        }
        // Two items (or an item and an option) a no-break space joined into one.
        for (item, argument) in zip(items, itemArguments) where item.item.isTypedText {
            if let message = InvisibleCharacters.joinedItemMessage(argument) { throw .usage(message) }
        }
        if let last = items.last, let message = CarriageReturn.itemMessage(last) { throw .usage(message) }
        let standardInput: String?
        (items, standardInput) = try StandardInputItems.resolve(items, settings: settings, environment: environment)
        try InputIsOutput.check(items, settings: settings, environment: environment)

        // Said when a value item's pipe (`a==@-`, `X:@fifo`) gives nothing for a while; made
        // only for items that read files (not for every line of a batch).
        let valueNotice = items.contains(where: \.item.readsFile)
            ? StandardInput.waitNotice(stderr: environment.stderr, quiet: settings.quiet, delays: environment.noticeDelays) : nil
        var query: [(name: String, value: String)] = []
        for item in items {
            switch item.item {
            case .query(let name, let value): query.append((name, value))
            case .queryFromFile(let name, let path): query.append((name, try FileReading.line(atPath: path, item: item.argument, notice: valueNotice)))
            default: break
            }
        }
        let parsed: HTTPURL
        do {
            parsed = try URLBuilder.build(urlArgument, https: settings.https, query: query, pathAsIs: settings.pathAsIs)
        } catch {
            // Items typed before a URL without its scheme (`af a=1 localhost:8080/x`): the URL
            // parsed as a header item, and the first item failed as the URL.
            throw itemArguments.indices.lazy.compactMap { urlAfterItems(method: explicitMethod, url: urlArgument, items: itemArguments, at: $0, urlFollows: urlFollows) }.first ?? error
        }
        let url = parsed.removingCredentials()
        if settings.ipVersion != .any, settings.unixSocket == nil, let family = URLBuilder.addressFamily(of: url.host),
           proxySettings(settings, environment: environment).explicitProxy(forScheme: url.scheme) == nil {
            // Connecting straight to an address of the other family: libcurl would only fail to
            // connect, which reads as a server that is down. (A proxy, from --proxy or the
            // environment, connects for it instead.)
            if family == .v6, settings.ipVersion == .v4 {
                throw .usage("-4 (--ipv4) cannot reach the IPv6 address \(url.host); drop -4")
            }
            if family == .v4, settings.ipVersion == .v6 {
                throw .usage("-6 (--ipv6) cannot reach the IPv4 address \(url.host); drop -6")
            }
        }
        try checkProxyVariable(settings, environment: environment, url: url)
        if settings.authCmd != nil, settings.auth != nil || parsed.user != nil {
            throw .usage("--auth-cmd supplies the credentials; drop -a (or the user in the URL), or drop --auth-cmd")
        }
        var session: SessionFile?
        if let name = settings.session {
            let path = try SessionFile.path(for: name, url: url, environment: environment)
            let option = settings.sessionReadOnlyName != nil && settings.session == settings.sessionReadOnlyName ? "--session-read-only" : "--session"
            try InputIsOutput.checkSession(path, option: option, environment: environment)
            session = try SessionFile.load(path: path, url: url, option: option)
            if !settings.sessionReadOnly {
                try SessionFile.checkWritable(path: path, home: SessionFile.isPath(name) ? nil : environment.homeHoldingConfig)
            }
        }
        let applicable = session.flatMap { $0.applies(to: url) ? $0 : nil }
        let body = try BodyBuilder.build(items: items, settings: settings, environment: environment, standardInputItem: standardInput, holdsPipes: holdsPipes,
                                         valueNotice: valueNotice)
        // Standard input may already be spooled to a temporary file: a failure from here on
        // removes it rather than leaving the user's data behind.
        do throws(CommandFailure) {
            let method = HTTPMethod(rawValue: explicitMethod ?? (body.body.isEmpty ? "GET" : "POST"))
            if settings.download, method == .head {
                // It saved an empty file under the resource's name and called it saved.
                throw .usage("-d (--download) saves the response body, and a HEAD response has none: drop -d to see the headers, or use GET")
            }
            // libcurl sends a HEAD without its body: -v printed the body as sent, and it was
            // dropped. (An empty one, `@/dev/null`, is no body to lose.)
            if method == .head, (try? body.body.contentLength()).map({ $0 != 0 }) ?? true {
                let source = switch body.origin {
                case .standardInput: "standard input (-I ignores it)"
                case .file(let path), .heldFile(let path, _): "'@\(Quote.argument(path))'"
                case .multipart: "the multipart form"
                case .none, .text: settings.raw != nil ? "--raw" : "the data items"
                }
                throw .usage("a HEAD request sends no body, and \(source) would be one; drop it, or use GET or POST")
            }

            var (headers, suppressed) = try headerList(items: items, body: body, settings: settings, sessionHeaders: applicable?.headers ?? [], valueNotice: valueNotice)
            var options: TransferOptions
            if let known { options = known } else { options = try transferOptions(settings, environment: environment) }
            try frameBody(&headers, options: &options, body: body, method: method)
            var challenge: Credentials?
            let given = try Authentication.credentials(settings: settings, url: parsed, environment: environment)
            if let credentials = given ?? (settings.authCmd == nil ? applicable?.auth : nil) {
                switch credentials.scheme {
                case .digest:
                    challenge = credentials
                case .basic, .bearer:
                    if !headers.contains(.authorization) {
                        headers.add(name: .authorization, value: credentials.authorizationValue)
                    }
                }
            }
            var description = RequestDescription(
                method: method,
                url: url.string,
                headers: headers,
                suppressedHeaders: suppressed,
                body: body.body,
                challengeCredentials: challenge,
                options: options
            )
            description.parsed = (url, settings.pathAsIs)
            if RequestHeadLimit.isExceeded(by: description) { throw headTooLarge(description, items: items) }
            let givenHeaders = items.compactMap { item -> HTTPHeader? in
                if case .header(let name, let value) = item.item { return HTTPHeader(name, value) }
                return nil
            }
            return BuiltRequest(BuiltRequest.Parts(
                description: description, url: url, body: body, methodWasExplicit: explicitMethod != nil,
                session: session, givenCredentials: given, givenHeaders: givenHeaders,
                readFiles: session != nil || items.contains { $0.item.readsFile }
            ))
        } catch {
            body.removeTemporaryFiles()
            throw error
        }
    }

    /// A request whose URL and headers libcurl would refuse to put in one request head (it
    /// fails the transfer as out of memory): a usage error naming the largest part, before
    /// anything is sent.
    static func headTooLarge(_ description: RequestDescription, items: [SourcedItem]) -> CommandFailure {
        var largest = "the URL"
        var largestSize = description.url.utf8.count
        for header in description.headers where header.value.utf8.count > largestSize {
            largestSize = header.value.utf8.count
            let item = items.first { $0.item.headerName.map { HTTPHeaders.Name($0) } == Optional(header.name) }
            largest = "the header '\(header.name.rawValue)'\(item.map { " from '\(Quote.argument($0.argument))'" } ?? "")"
        }
        let total = RequestHeadLimit.estimatedSize(of: description)
        let limit = "the request's URL and headers come to \(total) bytes, more than libcurl puts in a request head (1 MiB)"
        // No part is much of it: many headers (a batch line with thousands of items).
        guard largestSize * 4 >= total else {
            return .usage("\(limit), in \(description.headers.count) headers; send fewer headers, or their values in the body")
        }
        return .usage("\(limit), \(largestSize) of them \(largest); send large values in the body")
    }

    /// Default headers, then the user's header items: a user header replaces the default of
    /// the same name, `Name:` removes it (and stops libcurl adding its own), `Name;` sends it
    /// empty, and a repeated name is sent repeatedly.
    /// `valueNotice` is said when a header item's pipe gives nothing for a while.
    static func headerList(
        items: [SourcedItem], body: BuiltBody, settings: Settings, sessionHeaders: [HTTPHeader] = [], valueNotice: StandardInput.WaitNotice? = nil
    ) throws(CommandFailure) -> (HTTPHeaders, [HTTPHeaders.Name]) {
        var defaults = HTTPHeaders(minimumCapacity: 4)
        defaults.add(name: .userAgent, value: userAgent)
        let savesToFile = settings.download || settings.output != nil
        let encodings = savesToFile ? "identity" : CurlRuntime.acceptEncodingValue
        if !encodings.isEmpty { defaults.add(name: .acceptEncoding, value: encodings) }
        defaults.add(name: .accept, value: body.isJSON ? "application/json, */*;q=0.5" : "*/*")
        if let type = body.contentType { defaults.add(name: .contentType, value: type) }

        var user: [HTTPHeader] = []
        var suppressed: [HTTPHeaders.Name] = []
        var overridden = Set<HTTPHeaders.Name>()
        for item in items {
            switch item.item {
            case .header(let name, let value):
                let header = HTTPHeader(name, value)
                try check(header, item: item.argument, secretHeaders: settings.secretHeaders)
                user.append(header)
                overridden.insert(header.name)
            case .headerFromFile(let name, let path):
                let header = HTTPHeader(name, try FileReading.line(atPath: path, item: item.argument, notice: valueNotice))
                try check(header, item: item.argument, secretHeaders: settings.secretHeaders)
                user.append(header)
                overridden.insert(header.name)
            case .emptyHeader(let name):
                let header = HTTPHeader(name, "")
                try check(header, item: item.argument, secretHeaders: settings.secretHeaders)
                user.append(header)
                overridden.insert(header.name)
            case .unsetHeader(let name):
                let header = HTTPHeaders.Name(name)
                try check(HTTPHeader(name, "x"), item: item.argument, secretHeaders: settings.secretHeaders)
                user.removeAll { $0.name == header }
                overridden.insert(header)
                suppressed.append(header)
            default:
                break
            }
        }
        // Session headers come first, every one of a repeated name, unless this command line
        // gives (or unsets) that name.
        let fromSession = sessionHeaders.filter { !overridden.contains($0.name) }
        overridden.formUnion(fromSession.map(\.name))
        user = fromSession + user
        guard !user.isEmpty || !overridden.isEmpty else { return (defaults, suppressed) }
        var headers = HTTPHeaders(minimumCapacity: defaults.count + user.count)
        for header in defaults where !overridden.contains(header.name) { headers.add(header) }
        for header in user { headers.add(header) }
        return (headers, suppressed)
    }

    /// af frames the body itself, so a user's `Content-Length` or `Transfer-Encoding` may not
    /// contradict it: a request whose head promises other bytes than it sends desynchronises
    /// the connection (the rest is read as another request). A matching `Content-Length` is
    /// kept; `Transfer-Encoding: chunked` is `--chunked`; anything else is a usage error.
    /// A multipart `Content-Type` the user gave gets af's boundary.
    static func frameBody(_ headers: inout HTTPHeaders, options: inout TransferOptions, body: BuiltBody, method: HTTPMethod) throws(CommandFailure) {
        if let type = headers.value(for: .contentType), type.lowercased().hasPrefix("multipart/"), !type.lowercased().containsBytes(of: "boundary="),
           case .multipart(let form) = body.origin
        {
            headers.set(name: .contentType, value: "\(type); boundary=\(form.boundaryParameter)")
        }
        let length = headers.value(for: .contentLength)
        let encoding = headers.value(for: .transferEncoding)
        guard length != nil || encoding != nil else { return }
        if length != nil, encoding != nil {
            throw .usage("Content-Length and Transfer-Encoding together make the body's end ambiguous; drop both (af frames the body)")
        }
        let sendsBody = !body.body.isEmpty && method != .head
        if let encoding {
            guard encoding.trimmingCharacters(in: " \t").lowercased() == "chunked" else {
                throw .usage("Transfer-Encoding: \(Quote.argument(encoding)) is not something af can send; drop it (af frames the body), or use --chunked")
            }
            guard sendsBody else { throw .usage("Transfer-Encoding: chunked needs a body to send; drop the header") }
            headers.remove(name: .transferEncoding)
            options.chunked = true
            return
        }
        let given = length?.trimmingCharacters(in: " \t") ?? ""
        let actual: Int64?
        do {
            actual = sendsBody ? try body.body.contentLength() : 0
        } catch {
            throw CommandFailure(error.description, exitCode: ExitStatus.noInput)
        }
        guard let actual, !options.chunked else {
            throw .usage("Content-Length: \(Quote.argument(given)) cannot describe a body that is streamed; drop the header (af frames the body)")
        }
        guard Int64(given) == actual else {
            throw .usage("Content-Length: \(Quote.argument(given)) does not match the body, which has \(actual) bytes; drop the header (af sets it)")
        }
    }

    /// Arguments that are plainly not items, refused with what was probably meant: a
    /// separator typed apart from its name or value (`name = value`, `name= value`,
    /// `name =value`), and a JSON document
    /// typed where curl takes one (`-d '{…}'`, `--json '{…}'`), which read as a header with a
    /// strange name.
    /// A URL among the items is refused too: as typed before the items when the URL argument
    /// is plainly an item (`urlAfterItems`), else as a second URL.
    /// `urlFollows`: the option without a value right before the URL argument, if any.
    static func refuseNonItems(
        _ items: [String], at index: Int, method: String?, url: String, urlFollows: FlagBefore? = nil, settings: Settings
    ) throws(CommandFailure) {
        let argument = items[index]
        if RequestItemParser.separators.contains(argument) {
            throw .usage("'\(argument)' alone is not a request item: write each item without spaces around its separator, such as name=value or name:=json")
        }
        // `name= value`, `q== swift`: the value typed apart from its separator (a header's,
        // `Name: value`, is answered where items are parsed, with every word of the value).
        if index > 0, case let previous = items[index - 1], ["=", "==", ":="].contains(where: { previous.hasSuffix($0) }),
           !isURLArgument(argument), (try? RequestItemParser.parse(argument)) == nil {
            let joined = Quote.shellWord(previous + argument)
            throw .usage("'\(Quote.argument(argument))' is not a request item; the item before it, '\(Quote.argument(previous))', ends with its separator: write the two as one argument, \(joined)")
        }
        // `name =value`, `X-Id :abc`: the name typed apart from its separator and value
        // (`X-Id :7` is a URL: `:7` is localhost's port 7).
        if index + 1 < items.count, case let next = items[index + 1], ["=", ":"].contains(where: { next.hasPrefix($0) }),
           !RequestItemParser.separators.contains(next), !isURLArgument(argument), !isURLArgument(next),
           (try? RequestItemParser.parse(argument)) == nil, let joined = try? RequestItemParser.parse(argument + next).item {
            let intro = "'\(Quote.argument(argument))' is not a request item; the item after it"
            if case .header(let name, _) = joined, CredentialRedaction.isCredential(HTTPHeaders.Name(name), secretHeaders: settings.secretHeaders) {
                throw .usage("\(intro) (not shown: a credential) begins with its separator: write the two as one argument, \(Quote.shellWord(name + ":VALUE"))")
            }
            throw .usage("\(intro), '\(Quote.argument(next))', begins with its separator: write the two as one argument, \(Quote.shellWord(argument + next))")
        }
        if isURLArgument(argument) {
            if !settings.download, let misplaced = urlAfterItems(method: method, url: url, items: items, at: index, urlFollows: urlFollows) { throw misplaced }
            // It would be sent as a header named http or https: `curl URL1 URL2` fetches both,
            // and an option af reads as a flag (curl's -m 5) leaves its value as the URL.
            // A short flag right before it is named when curl's letter takes a value (`-x`, not
            // `-v`); a long one always (`--json '{}'`, which curl's --json takes).
            let hint: String
            if method == nil, isMethodBeyondLetters(url) {
                hint = "; a METHOD is letters only, so '\(url)' was read as the URL (af cannot send that method)"
            } else if let flagged = urlFollows.flatMap({ flagValueHint($0, value: url) }) {
                hint = flagged
            } else if settings.download, isBodyOrQueryItem(url) {
                hint = "; -d means --download in af, as in HTTPie: data items go after the URL (af POST URL name=value)"
            } else if !url.containsBytes(of: "."), !url.containsBytes(of: "://"), !url.hasPrefix(":"), url.lowercased() != "localhost" {
                hint = "; if '\(Quote.argument(url))' was meant as an option's value, that option takes none in af (see af --help)"
            } else {
                hint = "; for many requests, list them in a file for af batch"
            }
            throw .usage("'\(Quote.argument(argument))' is a URL after the URL '\(Quote.argument(url))': af makes one request per run\(hint)")
        }
        // `af -m 5 localhost:8080/x`: curl's value for the letter took the URL's place, and the
        // URL without its scheme read as an item (a header named localhost) or failed as one.
        if let urlFollows, let hint = curlValueHint(urlFollows, value: url), isURLMeantAfterFlag(argument),
           urlAfterItems(method: method, url: url, items: items, at: index, urlFollows: urlFollows) == nil {
            throw .usage("'\(Quote.argument(argument))' is a URL after the URL '\(Quote.argument(url))': af makes one request per run\(hint)")
        }
        let bytes = Array(argument.utf8)
        guard let first = bytes.first(where: { $0 != 32 && $0 != 9 && $0 != 10 && $0 != 13 }), first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
              JSONScanner.validate(bytes) == nil
        else { return }
        let shown = argument.count > 40 ? Quote.argument(String(argument.prefix(37))) + "..." : Quote.argument(argument)
        let download = settings.download ? "; -d means --download in af, as in HTTPie" : ""
        throw .usage("'\(shown)' is a JSON document, not a request item: send it as the body with --raw, @FILE or standard input, or as items such as name=value and name:=json\(download)")
    }

    /// A data item typed right after `-F`, `-d` or `-b` as curl's value for that letter, which
    /// af reads as a flag (--follow, --download, --body) and an item that sends something
    /// else: curl's `-F 'file=@photo.png'` uploads the file, where the item sends its text as
    /// a JSON field; curl's `-d 'a=1'` sends a form, where the item sends JSON and `-d` saves
    /// the response as a file; curl's `-b 'id=1'` sends a cookie, where the item makes the
    /// request a POST of JSON. Refused, with af's spelling; the long option says the flag is
    /// meant.
    static func curlValueAfterLetter(_ items: some Sequence<Positional>) -> CommandFailure? {
        for positional in items {
            guard let letter = positional.follows?.letter, letter == "F" || letter == "d" || letter == "b",
                  let item = try? RequestItemParser.parse(positional.text).item else { continue }
            let text = Quote.argument(positional.text)
            switch (letter, item) {
            case ("F", .fieldFromFile):
                let upload = Quote.argument(positional.text.replacingBytes(of: "=@", with: "@"))
                return .usage("'\(text)' came right after -F, which is --follow in af and takes no value: curl's -F '\(text)' "
                    + "uploads the file, which is the item \(upload) here (multipart/form-data); to follow redirects and send the file's text as a JSON field, write --follow")
            case ("d", .bodyFile):
                return .usage("'\(text)' came right after -d, which is --download in af and takes no value: curl's -d '\(text)' sends the file as the body, "
                    + "as the item '\(text)' alone does here; to save the response as a file as well, write --download")
            case ("d", .field), ("d", .jsonField), ("d", .fieldFromFile), ("d", .jsonFieldFromFile):
                return .usage("'\(text)' came right after -d, which is --download in af and takes no value: curl's -d '\(text)' sends a form, "
                    + "which is -f (--form) with the item '\(text)' here (without -f the item sends JSON); to save the response as a file as well, write --download")
            case ("b", .field):
                let cookie = Quote.argument("Cookie:" + positional.text)
                return .usage("'\(text)' came right after -b, which is --body in af (print the response body only) and takes no value: curl's -b '\(text)' sends a cookie, "
                    + "which is the header item '\(cookie)' here; to print only the body and send the item as a JSON field, write --body")
            default:
                continue
            }
        }
        return nil
    }

    /// "; 'VALUE' came right after FLAG, which takes no value in af": the argument (the URL,
    /// or a word that is no item) was meant as the value of the option before it, a long one
    /// (`--json '{}'`) or a letter that takes a value in curl (`-x`, `-m`, with what curl
    /// meant); nil for another letter (`-v`).
    static func flagValueHint(_ flag: FlagBefore, value: String) -> String? {
        let curl = flag.letter.flatMap { Suggestions.curlValueLetters[$0] }
        guard flag.letter == nil || curl != nil else { return nil }
        return "; '\(Quote.argument(value))' came right after \(flag.described), which takes no value in af" + (curl.map { " (\($0))" } ?? "")
    }

    /// A word right after a letter that takes a value in curl (`-x squid URL`, `-b jar URL`,
    /// `-d hello URL`) read as a method no one sends (SQUID): that letter's value in curl,
    /// not a method. A registered method (`af -F PROPFIND URL`) is one; any other goes
    /// before the letter.
    static func refuseValueAsMethod(_ word: Positional, method: String) throws(CommandFailure) {
        guard let flag = word.follows, let letter = flag.letter, !HTTPMethod.registered.contains(HTTPMethod(rawValue: method)),
              let hint = flagValueHint(flag, value: word.text)
        else { return }
        throw .usage("'\(Quote.argument(word.text))' reads as the method \(Quote.argument(method))\(hint); a method af should send goes before the option: af \(Quote.argument(method)) -\(letter) URL")
    }

    /// `flagValueHint` for a letter typed right before `value` (`-m 10`), naming what the
    /// letter means in curl; empty when no option, or a long one, came right before it.
    static func letterHint(_ flag: FlagBefore?, value: String) -> String {
        flag.flatMap { $0.letter == nil ? nil : flagValueHint($0, value: value) } ?? ""
    }

    /// Request items typed before the URL (`af X-A:1 example.org`, `af post a=1 URL`): the
    /// first item was taken as the URL (or, followed by a data item, the method was), and the
    /// URL at `index` is no item. Nil unless the URL argument is plainly an item or a method
    /// name and the argument at `index` looks like a URL.
    /// `urlFollows`, the option without a value typed right before the URL argument: a
    /// letter curl gives a value (`-b 'a=1' example.org`) is named with what curl meant.
    static func urlAfterItems(method: String?, url: String, items: [String], at index: Int, urlFollows: FlagBefore? = nil) -> CommandFailure? {
        let argument = items[index]
        // A file's name (`data.json`) looks like a host name too: an item that forgot its `@`.
        guard looksLikeURL(argument), !FileSystem.exists(argument) else { return nil }
        let urlIsMethod = method == nil && HTTPMethod.standard.contains(HTTPMethod(rawValue: url.uppercased()))
        guard urlIsMethod || isPlainlyAnItem(url) else { return nil }
        var words = [method ?? (urlIsMethod ? url.uppercased() : nil)].compactMap { $0 } + [argument]
        if !urlIsMethod { words.append(url) }
        words += items.indices.filter { $0 != index }.map { items[$0] }
        let example = words.prefix(6).map { Quote.shellWord($0) }.joined(separator: " ") + (words.count > 6 ? " …" : "")
        let flagged = letterHint(urlFollows, value: url)
        return .usage("the URL '\(Quote.argument(argument))' came after request items: af reads [METHOD] URL [REQUEST_ITEM ...] in that order, as in af \(example)" + flagged)
    }

    /// A method af cannot send typed as METHOD before a URL without its scheme (`af M-SEARCH
    /// example.org`): the method was read as the URL, and the URL as an item. Nil otherwise.
    static func methodBeyondLetters(method: String?, url: String, items: [String], at index: Int) -> CommandFailure? {
        guard method == nil, index == 0, isMethodBeyondLetters(url), looksLikeURL(items[index]) else { return nil }
        return .usage("'\(Quote.argument(items[index]))' is not a request item: a METHOD is letters only, so '\(url)' was read as the URL (af cannot send that method)")
    }

    /// Whether an argument is a URL (`http://…`), a shorthand for one (`:3000/x`), or a host
    /// name with a dot or `localhost`, with or without a port and a path (`example.org/x`).
    static func looksLikeURL(_ argument: String) -> Bool {
        if isURL(argument) { return true }
        let bytes = Array(argument.utf8)
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        if bytes.first == UInt8(ascii: ":") { return bytes.count == 1 || bytes[1] == UInt8(ascii: "/") || digits.contains(bytes[1]) }
        let authority = bytes.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        let host = authority.prefix { $0 != UInt8(ascii: ":") }
        let port = authority.dropFirst(host.count + 1)
        guard host.first != UInt8(ascii: "."), port.allSatisfy(digits.contains), host.allSatisfy({ byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || digits.contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }) else { return false }
        return host.contains(UInt8(ascii: ".")) || host.map { $0 | 0x20 }.elementsEqual("localhost".utf8)
    }

    /// Whether an argument is a request item that is not also a URL: a data, query or file
    /// item, or a header with a valid name (`X-A:1`, not `{"a":1}`).
    private static func isPlainlyAnItem(_ argument: String) -> Bool {
        guard !argument.containsBytes(of: "://"), !argument.hasPrefix(":"), let item = try? RequestItemParser.parse(argument).item else { return false }
        switch item {
        case .header(let name, let value):
            // `host:8080/path` is a URL: a port and a path are no header value.
            let port = value.utf8.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            if !port.isEmpty, value.utf8.dropFirst(port.count).first == UInt8(ascii: "/") { return false }
            return (try? check(HTTPHeader(name, value), item: argument)) != nil
        case .unsetHeader(let name), .emptyHeader(let name), .headerFromFile(let name, _): return (try? check(HTTPHeader(name, "x"), item: argument)) != nil
        default: return true
        }
    }

    /// A header value typed unquoted with a space in it (`Authorization: Bearer abc`): the shell
    /// split it, `Authorization:` alone means "leave that header out", and the words after it
    /// are not items. Nil when the argument at `index` does not follow such a header. The words
    /// of a credential's value (`CredentialRedaction`) are not repeated: this is the slip a
    /// token in a script's variable meets, and the error line ends up in the job's log.
    static func splitHeaderValue(_ arguments: [String], at index: Int, secretHeaders: [String]) -> CommandFailure? {
        guard index > 0, case .unsetHeader(let name)? = try? RequestItemParser.parse(arguments[index - 1]).item else { return nil }
        let words = arguments[index...].prefix { (try? RequestItemParser.parse($0)) == nil }
        let value = words.joined(separator: " ")
        let header = "'\(Quote.argument(name)):'"
        let quoteIt = "Quote a header value with spaces as one argument: "
        if CredentialRedaction.isCredential(HTTPHeaders.Name(name), secretHeaders: secretHeaders) {
            let shown = CredentialRedaction(secretHeaders: secretHeaders).value(of: HTTPHeader(name, value))
            return .usage("the words after \(header) are not request items (not shown: a credential), and \(header) alone leaves that header out. "
                          + quoteIt + Quote.shellWord(name + ": " + shown))
        }
        return .usage("'\(Quote.argument(arguments[index]))' is not a request item; it follows \(header), which alone leaves that header out. "
                      + quoteIt + Quote.shellWord(name + ": " + value))
    }

    /// Whether `name` can be a header's name: an HTTP token.
    static func isHeaderName(_ name: String) -> Bool {
        HTTPToken.isToken(name)
    }

    /// Refuses header names that are not tokens and values with line breaks or NULs. The
    /// message quotes `item`, unless the header is a credential (`CredentialRedaction`): an
    /// error line ends up in a CI job's log, and the CR a token file's CRLF leaves is the
    /// commonest of these mistakes.
    static func check(_ header: HTTPHeader, item: String, secretHeaders: [String] = []) throws(CommandFailure) {
        let name = header.name.rawValue
        // Made only for an error: this runs for every header item of every line of a batch.
        func itemShown(named trimmed: String) -> String {
            CredentialRedaction.isCredential(HTTPHeaders.Name(trimmed), secretHeaders: secretHeaders)
                ? " (its value not shown: a credential)" : " in '\(item)'"
        }
        guard isHeaderName(name) else {
            let trimmed = name.trimmingCharacters(in: " \t")
            let quoted = itemShown(named: trimmed)
            if trimmed != name, !trimmed.isEmpty {
                throw .usage("invalid header name '\(name)'\(quoted): a header name has no spaces around it; write '\(trimmed):VALUE'")
            }
            throw .usage("invalid header name '\(name)'\(quoted): use letters, digits and !#$%&'*+-.^_`|~")
        }
        if let problem = header.valueProblem {
            let quoted = itemShown(named: name)
            // `"Name:$(cat token.txt)"` of a file with CRLF line ends: the shell strips the
            // LF and leaves the CR.
            if LineBreaks.endsWithStrayCarriageReturn(header.value) {
                throw .usage("header '\(name)'\(quoted) ends with a carriage return (\\r), \(LineBreaks.strayCarriageReturnAdvice), or read the file with '\(name):@FILE', which drops line ends")
            }
            throw .usage("header '\(name)'\(quoted) \(problem)")
        }
    }

    /// A proxy variable this request would go through that names no proxy libcurl can use
    /// (`http_proxy=:3128`, `ftp://…`) is a usage error naming it, as `--proxy` with that
    /// value is: libcurl said "cannot resolve the proxy host" or "connection refused" for
    /// it. Not checked when an option names the proxy, when `no_proxy` sends the request
    /// around it (or may), or through a Unix socket.
    static func checkProxyVariable(_ settings: Settings, environment: Environment, url: HTTPURL) throws(CommandFailure) {
        let scheme = url.scheme
        guard settings.unixSocket == nil, ProxySettings.noProxyList(environment.derived.proxies.noProxy, sendsAround: url.host) == false,
              !settings.namesProxy(forScheme: scheme),
              let (name, value) = environment.proxyVariable(forScheme: scheme), let problem = ProxyAddress.problem(value) else { return }
        throw .usage("the proxy that \(name) names, '\(MessageQuote.url(value))', cannot be used: \(problem); correct \(name) or unset it")
    }

    /// The proxies of `--proxy`, then those of the environment's variables.
    static func proxySettings(_ settings: Settings, environment: Environment) -> ProxySettings {
        var proxy = ProxySettings()
        for entry in settings.proxies {
            guard let (scheme, url) = entry.splitOnce(byte: UInt8(ascii: ":")) else { continue }
            proxy.explicit[String(scheme).lowercased()] = String(url)
        }
        // The proxy variables of the injected environment, not whatever this process has.
        return proxy.resolvingEnvironment(environment.derived.proxies)
    }

    /// Seconds the connection phase (DNS, TCP, TLS, a proxy's tunnel) may take when neither
    /// --connect-timeout nor --timeout is given.
    static let defaultConnectTimeout = 30.0

    static func transferOptions(_ settings: Settings, environment: Environment) throws(CommandFailure) -> TransferOptions {
        var options = TransferOptions()
        // Off until the output plan asks for the request's head (Execution turns it on), so
        // that a description built for a line of `af batch` is sent without a copy.
        options.recordsSentHead = false
        options.timeout = settings.timeout
        // libcurl alone waits 300 s to connect: a port that accepts TCP but never answers the
        // TLS handshake (a plain HTTP port behind an https:// URL or redirect) held a script for
        // five minutes. Without either limit given, the connection phase gets 30 s, as Go's
        // HTTP client gives its dial; --timeout alone bounds the whole attempt, connecting too.
        options.connectTimeout = settings.connectTimeout ?? (settings.timeout == nil ? Self.defaultConnectTimeout : nil)
        options.httpVersion = settings.httpVersion
        options.pathAsIs = settings.pathAsIs
        options.chunked = settings.chunked
        options.maxFileSize = settings.maxFilesize
        // A decoded body the user bounds is not also held to a ratio: up to their limit, a
        // body that inflates far (a repetitive log or JSON) is what they accept.
        if let limit = settings.maxFilesize { options.decompressionAllowance = max(options.decompressionAllowance, limit) }
        options.maxHeaders = settings.maxHeaders
        options.decodeContent = !(settings.download || settings.output != nil)
        options.resolve = settings.resolve
        options.unixSocketPath = settings.unixSocket
        options.interface = settings.interface
        options.ipVersion = settings.ipVersion
        options.proxy = proxySettings(settings, environment: environment)
        // The TLS library opens them for every connection: a pipe is read once, here.
        options.tls.clientCertificate = try settings.cert.map { path throws(CommandFailure) in try ReadOnceFiles.stablePath(path, item: "--cert", environment: environment) }
        options.tls.clientKey = try settings.certKey.map { path throws(CommandFailure) in try ReadOnceFiles.stablePath(path, item: "--cert-key", environment: environment) }
        options.tls.clientKeyPassword = try ClientCertificateCheck.passPhrase(
            settings: settings, certificateFile: options.tls.clientCertificate, keyFile: options.tls.clientKey, environment: environment)
        options.tls.minimumVersion = settings.ssl
        options.tls.maximumVersion = settings.tlsMax
        if let ciphers = settings.ciphers, let refusal = CipherSelection(ciphers).refusal() {
            // The handshake would have failed on it after connecting (exit 7).
            let (what, refused, lister) = switch refusal {
            case .classic(let list): ("ciphers", list, "openssl ciphers")
            case .modern(let list): ("TLS 1.3 suites", list, "openssl ciphers -s -tls1_3")
            }
            throw .usage("invalid value '\(Quote.argument(ciphers))' for --ciphers: OpenSSL takes none of the \(what) '\(Quote.argument(refused))'; '\(lister)' lists those it knows")
        }
        options.tls.ciphers = settings.ciphers
        return options
    }
}
