import AFEngine

/// Identifies an option independently of its spelling.
public enum OptionID: String, Sendable, CaseIterable {
    case json, form, multipart, boundary, raw, compress, chunked, ignoreStdin
    case print, historyPrint, headers, body, verbose, meta, quiet, all, pretty, style, sortKeys, sorted, unsorted, indent, formatOptions
    case responseCharset, responseMime
    case stream, offline, curl, report, trace
    case download, output, outputDir, createDirs, overwrite, resume, checksum
    case retry, retryDelay, retryBackoff, retryMaxDelay, retryJitter, retryMaxTime, retryOn, retryAllMethods
    case timeout, connectTimeout, checkStatus, acceptStatus
    case follow, maxRedirects, secretHeader, locationTrusted
    case auth, authType, authCmd, ignoreNetrc, session, sessionReadOnly
    case verify, insecure, cert, certKey, certKeyPass, ssl, tlsMax, ciphers, pin, pinCert, checkRevocation, crl, trustPolicy
    case proxy, httpVersion, resolve, unixSocket, interface, ipv4, ipv6, https, defaultScheme, pathAsIs, maxHeaders, maxFilesize
    case help, version, debug
    case parallel, rate, failFast, retryBudget
    case file
}

/// Every option af accepts.
public enum OptionTable {
    /// Every option in `--help` order.
    ///
    /// Made once, in one array: each group's table is made, appended and let go in turn
    /// (chained `+` made nine intermediate arrays, and kept tables would hold a second copy
    /// of every option for the whole run).
    public static let all: [OptionSpec] = {
        var all: [OptionSpec] = []
        all.reserveCapacity(OptionID.allCases.count)
        all += body
        all += output
        all += downloads
        all += retries
        all += redirectsAndAuth
        all += tls
        all += network
        all += batch
        all += pin
        all += configuration
        return all
    }()

    private static var body: [OptionSpec] { [
        OptionSpec(.json, "json", short: "j", group: .body,
                   help: "Send data items as JSON (the default) and ask for JSON, even without data",
                   details: "Serialise data items as a JSON object (the default), and send Content-Type: application/json and Accept: application/json, */*;q=0.5 even when there are no data items.",
                   binding: .flag(\.json)),
        OptionSpec(.form, "form", short: "f", group: .body,
                   help: "Send data items as a form (application/x-www-form-urlencoded)",
                   details: "Serialise data items as application/x-www-form-urlencoded instead of JSON. A file item (name@file) makes the body multipart/form-data. A Content-Type:application/x-www-form-urlencoded item does the same as --form (unless --json is given).",
                   binding: .flag(\.form)),
        OptionSpec(.multipart, "multipart", group: .body,
                   help: "Send data and file items as multipart/form-data",
                   details: "Always send multipart/form-data, even without file items. File parts are streamed from disk; memory does not grow with their size. A Content-Type:multipart/form-data item does the same (unless --json or --form is given); a boundary is added to it. A whole body (@FILE, @-, a pipe on standard input) is no form: with --multipart it is a usage error, and name@FILE (name@- for standard input) sends it as a part.",
                   binding: .flag(\.multipart)),
        OptionSpec(.boundary, "boundary", value: .required("STRING"), group: .body,
                   help: "Use this multipart boundary instead of a random one",
                   details: "Use this multipart boundary instead of a random one: 1 to 70 letters, digits and the characters '()+_,-./:=? (space too, but not at the end). Anything else, line breaks included, is a usage error. A boundary with a space or one of (),/:=? is quoted in Content-Type (boundary=\"a b\"), as RFC 2046 writes it.",
                   binding: .custom(sample: "b0undary", resets: [.field(\.boundary)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       if let problem = MultipartFormData.boundaryProblem(value) {
                           throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): \(problem)")
                       }
                       settings.boundary = value
                   }),
        OptionSpec(.raw, "raw", value: .required("TEXT"), group: .body,
                   help: "Send TEXT as the request body",
                   details: "Send TEXT as the request body, byte for byte. It cannot be combined with data items, @file or standard input.",
                   binding: .text(\.raw, nonEmpty: false)),
        OptionSpec(.compress, "compress", short: "x", group: .body,
                   help: "Deflate the body when that makes it smaller (-xx: always)",
                   details: "Compress the request body with zlib deflate and send Content-Encoding: deflate, but only when the result is smaller. Given twice (-xx), always compress.",
                   binding: .custom(.flag, sample: nil) { settings, option in settings.compress = option.negated ? 0 : settings.compress + 1 }),
        OptionSpec(.chunked, "chunked", group: .body,
                   help: "Send the body with Transfer-Encoding: chunked",
                   details: "Send the body with Transfer-Encoding: chunked instead of Content-Length. Standard input, or a body file that is a pipe (@<(command), a FIFO), is then streamed as it is read instead of being read whole first (unless retries are on).",
                   binding: .flag(\.chunked)),
        OptionSpec(.ignoreStdin, "ignore-stdin", short: "I", group: .body,
                   help: "Never read standard input as the body",
                   details: "Never read standard input. Use it in scripts whose standard input is an open pipe that is not meant for af.",
                   binding: .flag(\.ignoreStdin)),
    ] }

    private static var output: [OptionSpec] { [
        OptionSpec(.print, "print", short: "p", value: .required("WHAT"), group: .output,
                   help: "Parts to print: H request head, B request body, h response head, b response body, m metadata",
                   details: "Choose what to print with any of the letters H (request headers), B (request body), h (response headers), b (response body) and m (metadata: timings and sizes of every attempt). The default is hb on a terminal and b otherwise.",
                   completion: .choices(["H", "B", "h", "b", "m", "hb", "Hh", "HBhb", "HBhbm"]),
                   binding: .custom(sample: "hb", resets: [.field(\.print)]) { settings, option throws(CommandFailure) in
                       settings.print = try Settings.printLetters(option)
                   }),
        OptionSpec(.historyPrint, "history-print", short: "P", value: .required("WHAT"), group: .output,
                   help: "With --all, the parts to print of the exchanges before the last (redirects, challenges), in --print's letters",
                   details: "Like --print, but for the requests and responses that --all shows before the final one: redirects and answered authentication challenges. Without it they show the same parts as the final exchange. It changes nothing without --all, and m adds nothing here (the metadata covers every attempt at the end).",
                   completion: .choices(["H", "h", "Hh", "HBhb"]),
                   binding: .custom(sample: "Hh", resets: [.field(\.historyPrint)]) { settings, option throws(CommandFailure) in
                       settings.historyPrint = try Settings.printLetters(option)
                   }),
        OptionSpec(.headers, "headers", short: "h", group: .output, help: "Print only the response headers (-p h)",
                   binding: .flag(\.headersOnly)),
        OptionSpec(.body, "body", short: "b", group: .output, help: "Print only the response body (-p b)",
                   binding: .flag(\.bodyOnly)),
        OptionSpec(.verbose, "verbose", short: "v", group: .output,
                   help: "Print the whole exchange (-p HBhb); -vv adds metadata",
                   details: "Print the request and the response (-p HBhb). Given twice (-vv), also print metadata (-p HBhbm). With --follow --all, every intermediate exchange is printed too.",
                   binding: .custom(.flag, sample: nil) { settings, option in settings.verbose = option.negated ? 0 : settings.verbose + 1 }),
        OptionSpec(.meta, "meta", short: "m", group: .output, help: "Also print metadata: timings, addresses and sizes of every attempt",
                   binding: .flag(\.meta)),
        OptionSpec(.quiet, "quiet", short: "q", group: .output,
                   help: "Print nothing on standard output, and no progress or notices; -qq no warnings either",
                   details: "Print nothing on standard output, and leave out the progress bar, retry notices and download summary on standard error. Errors and warnings still go to standard error and the exit status is unchanged. Given twice (-qq), warnings and every other notice are left out too: only errors reach standard error.",
                   binding: .custom(.flag, sample: nil) { settings, option in
                       settings.quietWarnings = !option.negated && settings.quiet
                       settings.quiet = !option.negated
                   }),
        OptionSpec(.all, "all", group: .output, help: "With --follow, print every hop of a redirect chain, not just the last",
                   binding: .flag(\.all)),
        OptionSpec(.pretty, "pretty", value: .required("MODE"), group: .output,
                   help: "Formatting: all, colors, format or none",
                   details: "all formats and colours, colors only colours, format only formats (indents JSON), none prints the body exactly as received. The default is all on a terminal and none otherwise.",
                   completion: .choices(["all", "colors", "format", "none"]),
                   binding: .choice(\.pretty, Settings.Pretty.self)),
        OptionSpec(.style, "style", value: .required("STYLE"), group: .output,
                   help: "Colour scheme: auto, solarized or monokai (HTTPie's names work too)",
                   details: "Colour scheme: auto uses the terminal's own 16 colours; solarized and monokai use 256-colour palettes. HTTPie's and Pygments' names are accepted so that an HTTPie configuration moves over: pie, pie-dark, pie-light and default are auto; solarized, solarized-dark and solarized-light are solarized; monokai, fruity, native, dracula, vim, paraiso-dark and rrt are monokai.",
                   completion: .choices(Settings.styleNames.map(\.0)),
                   binding: .custom(.choice(Settings.styleNames.map(\.0)), sample: "auto", resets: [.field(\.style)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       guard let match = Settings.styleNames.first(where: { $0.0 == value.lowercased() }) else {
                           throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): choose \(Settings.styleNames.map(\.0).joined(separator: ", "))")
                       }
                       settings.style = match.1
                   }),
        OptionSpec(.sortKeys, "sort-keys", group: .output, help: "Sort the keys of JSON objects when formatting",
                   details: "Sort the keys of JSON objects when formatting, by their Unicode characters (an escape such as \\u00e9 counting as the character it names), as jq and HTTPie order them; duplicate keys keep their order. Each object is kept in memory until it ends, so a document that is an array of records is sorted a record at a time; what is kept may take up to a quarter of the machine's memory and at most 1 GiB, and an object larger than that is shown with its keys in their own order, and a warning says so (as when objects nest so deep around large values that reordering them all would copy those values over and over). Invalid JSON is shown sorted as far as objects ended, then as it came.",
                   binding: .flag(\.sortKeys)),
        OptionSpec(.sorted, "sorted", group: .output, help: "Sort JSON keys and headers by name (json.sort_keys and headers.sort of --format-options)",
                   binding: .custom(.flag, sample: nil) { settings, option in
                       settings.sortKeys = !option.negated
                       settings.sortHeaders = !option.negated
                   }),
        OptionSpec(.unsorted, "unsorted", group: .output, help: "Keep JSON keys and headers in their order (the default)",
                   binding: .custom(.flag, sample: nil) { settings, option in
                       settings.sortKeys = option.negated
                       settings.sortHeaders = option.negated
                   }),
        OptionSpec(.indent, "indent", value: .required("N"), group: .output, help: "Indent formatted JSON by N spaces",
                   binding: .count(\.indent, 0...16)),
        OptionSpec(.formatOptions, "format-options", value: .required("OPTIONS"), group: .output,
                   help: "HTTPie's formatting options: json.indent:N, json.sort_keys:BOOL, json.format:BOOL, headers.sort:BOOL, xml.format:BOOL, xml.indent:N",
                   details: "Comma-separated formatting options as HTTPie writes them: json.indent:N (0 to 16), json.sort_keys:true|false, json.format:true|false, headers.sort:true|false, xml.format:true|false and xml.indent:N. --sort-keys, --sorted, --unsorted and --indent are shorthands.",
                   completion: .choices(["json.indent:2", "json.sort_keys:true", "json.format:false", "headers.sort:true", "xml.format:false", "xml.indent:2"]),
                   binding: .custom(sample: "json.indent:2", resets: [.field(\.sortKeys), .field(\.sortHeaders), .field(\.formatJSON), .field(\.indent), .field(\.formatXML), .field(\.xmlIndent)]) { settings, option throws(CommandFailure) in try settings.applyFormatOptions(option.value ?? "", option.spelling) }),
        OptionSpec(.responseMime, "response-mime", value: .required("TYPE"), group: .output,
                   help: "Format the response body as if its Content-Type were TYPE (application/json, text/xml, ...)",
                   binding: .custom(sample: "application/json", resets: [.field(\.responseMime)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       guard value.contains("/"), !value.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                           throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): expected a media type such as application/json")
                       }
                       settings.responseMime = value
                   }),
        OptionSpec(.responseCharset, "response-charset", value: .required("CHARSET"), group: .output,
                   help: "Decode text responses with CHARSET instead of the Content-Type charset",
                   completion: .choices(["utf-8", "iso-8859-1", "iso-8859-2", "windows-1250", "windows-1251", "windows-1252", "big5", "gb18030", "shift_jis", "euc-jp", "euc-kr", "koi8-r", "utf-16le", "utf-16be"]),
                   binding: .custom(sample: "utf-8", resets: [.field(\.responseCharset)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       guard CharsetDecoder.knows(value) else {
                           throw .usage("unknown charset '\(Quote.argument(value))' for \(option.spelling): use a name iconv knows, such as utf-8, windows-1250, iso-8859-2, big5, shift_jis or koi8-r (iconv -l lists them)")
                       }
                       settings.responseCharset = value
                   }),
        OptionSpec(.stream, "stream", short: "S", group: .output,
                   help: "Write the body as it arrives (server-sent events, NDJSON)",
                   details: "Write each chunk of the response body as soon as it arrives. With formatting on, each NDJSON line is formatted on its own. With --retry, an answer of another status than 2xx (a 503 that may be retried) is held until the request ends with it.",
                   binding: .flag(\.stream)),
        OptionSpec(.offline, "offline", group: .output,
                   help: "Build the request and print it without sending it",
                   details: "Build the request and print it (HB by default) without any network access.",
                   binding: .flag(\.offline)),
        OptionSpec(.curl, "curl", group: .output,
                   help: "Print an equivalent curl command line instead of sending",
                   details: "Print a curl command that makes the same request (method, URL, headers, body or -F parts, chunked framing, authentication, TLS and pin options, timeouts, retries, HTTP version, proxy) and exit without sending anything; with -o or -d it saves the body as af would (--output, or --remote-name --remote-header-name; --output-dir, --continue-at, --fail for a download, --no-clobber unless --overwrite); --check-status becomes --fail-with-body, which fails on a status of 400 or more (exit 22) and still prints the body. Credentials from a netrc reach it as --netrc-file, and an --auth-cmd token as --oauth2-bearer \"$(sh -c CMD)\", which runs the command when the line runs, so neither is printed. The line is shell-quoted and runs as printed. curl cannot compress a request body: with -x the command sends it uncompressed, and af warns on standard error.",
                   binding: .flag(\.curl)),
        OptionSpec(.report, "report", value: .required("FORMAT"), group: .output,
                   help: "Print one JSON document describing the whole run (FORMAT: json)",
                   details: "Instead of the usual sections, print one JSON document on standard output with the request, the response (body as a JSON value, a string or {\"base64\": ...}), every attempt with its metrics, the redirects and the error. It is printed whatever the outcome. In the request's headers the values of credentials are hidden, as with --debug (Authorization and Proxy-Authorization keep their scheme, Cookie its names, a --secret-header its name): a report gets kept. The response's headers are as the server sent them.",
                   completion: .choices(["json"]),
                   binding: .custom(.choice(["json"]), sample: "json", resets: [.field(\.report)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       guard value == "json" else { throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): the only format is json") }
                       settings.report = true
                   }),
        OptionSpec(.trace, "trace", value: .optional("FORMAT"), group: .output,
                   help: "Write lifecycle events to standard error as they happen (--trace=json: JSON lines)",
                   details: "Write each lifecycle event (request built and adapted, attempt started, resolved, connected, TLS established, sent, response head, retry scheduled, redirect, finished or cancelled) to standard error with a monotonic timestamp. --trace=json writes one JSON object per line; af's own lines (notices, the error line) still go to standard error between them, each starting with 'af:', so a reader keeps the lines that start with '{'.",
                   completion: .choices(["text", "json"]),
                   binding: .custom(.choice(Settings.TraceFormat.allCases.map(\.rawValue)), sample: "json", resets: [.field(\.trace)]) { settings, option throws(CommandFailure) in
                       settings.trace = option.value == nil ? .text : try Settings.choice(option.value ?? "", option.spelling, Settings.TraceFormat.self)
                   }),
    ] }

    private static var downloads: [OptionSpec] { [
        OptionSpec(.download, "download", short: "d", group: .downloads,
                   help: "Save the body to a file; headers and progress go to standard error",
                   details: "Save the response body to a file named by -o, else by Content-Disposition, else by the last URL path segment, else index with an extension from Content-Type. Server-supplied names are reduced to a safe base name. Only a 2xx response is saved, and a HEAD request (which gets no body) is refused. The body is asked for unencoded (Accept-Encoding: identity); one a server compresses anyway is saved as it came, with a warning that names the coding and the command that decodes it (none when the file's name or type says it is such a file, as x.tar.gz, or when --checksum matched it). The file is written even when standard output is redirected (HTTPie's -d sends the body there instead): give -o - to pipe the body, as in af -d -o - URL | tar xz.",
                   binding: .flag(\.download)),
        OptionSpec(.output, "output", short: "o", value: .required("FILE"), group: .downloads,
                   help: "Write the body to FILE (- for standard output); never replaces a file without --overwrite",
                   details: "Write the body to FILE; - (or /dev/stdout) writes it to standard output as it stands, byte for byte, /dev/stderr to standard error, and /dev/fd/N to descriptor N as the shell opened it (af -o /dev/fd/3 URL 3>>log appends). An existing regular file is never replaced without --overwrite (and then only once the body is complete). Devices and FIFOs, such as /dev/null, are written in place and never replaced. With --retry only the answer the request ends with is written (a retried 503's page is not), and a body cut short is continued after what was written: into a stream, which cannot take bytes back, only the rest of that body may follow, and any other answer is exit 9 (/dev/null, which keeps nothing, starts over). Nothing else is printed on standard output unless -p, -h or -v asks for it.",
                   completion: .file,
                   binding: .text(\.output, sample: "out.bin")),
        OptionSpec(.outputDir, "output-dir", value: .required("DIR"), group: .downloads, help: "Put downloaded files in DIR", completion: .directory,
                   binding: .text(\.outputDir, sample: ".")),
        OptionSpec(.createDirs, "create-dirs", group: .downloads, help: "Create missing directories for the output file",
                   binding: .flag(\.createDirs)),
        OptionSpec(.overwrite, "overwrite", group: .downloads, help: "Replace an existing output file",
                   binding: .flag(\.overwrite)),
        OptionSpec(.resume, "continue", short: "c", group: .downloads,
                   help: "Resume a partial download from NAME.part (or an existing -o file)",
                   details: "Resume from NAME.part, or from an existing -o file, with a Range request. NAME.part keeps the resource's validator and length (in extended attributes, where the file system has them), so the Range carries If-Range and a resource that changed since starts over instead of being spliced. Without -o, NAME comes from the URL: a download the server named is resumed with -c -o NAME, as the error after it says. A 200 reply restarts from zero with a notice; 416 for a complete file counts as success. As with -d, only a successful body is saved: another status exits 3, 4 or 5 and leaves the partial file as it was.",
                   binding: .flag(\.resume)),
        OptionSpec(.checksum, "checksum", value: .required("ALGO:HEX"), group: .downloads,
                   help: "Verify the download (sha256, sha1, sha512 or md5) before it gets its name",
                   details: "Verify the saved body against ALGO:HEX (sha256, sha1, sha512 or md5) before renaming NAME.part to NAME. On a mismatch nothing is left under NAME and af exits 9; the bytes are deleted, except those that were on disk before the run (with -c), which stay in NAME.part. Needs --download or -o FILE; with -o - the body goes to standard output and a mismatch still exits 9.",
                   binding: .custom(sample: "md5:00112233445566778899aabbccddeeff", resets: [.field(\.checksum)]) { settings, option throws(CommandFailure) in
                       // Checked as it is parsed: --offline, --curl and a batch's up-front check
                       // took any value, and only a download said what was wrong with it.
                       let value = option.value ?? ""
                       if let problem = Checksum.problem(in: value) {
                           throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): \(problem)")
                       }
                       settings.checksum = value
                   }),
    ] }

    private static var retries: [OptionSpec] { [
        OptionSpec(.retry, "retry", value: .required("N"), group: .retries,
                   help: "Retry a failed attempt up to N times",
                   details: "Retry a failed attempt up to N times. Statuses 408, 429, 500, 502, 503 and 504, DNS failures, refused or reset connections, timeouts and truncated bodies are retried (so is a connection closed in the middle of the TLS handshake, exit 1); TLS and pinning failures never are. Only GET, HEAD, PUT, DELETE, OPTIONS and TRACE are retried unless --retry-all-methods. A body cut short is resumed with a Range request where the server allows it (an uncompressed body with an ETag or Last-Modified, or any download).",
                   binding: .count(\.retry)),
        OptionSpec(.retryDelay, "retry-delay", value: .required("SECONDS"), group: .retries, help: "Delay before the first retry",
                   binding: .seconds(\.retryDelay)),
        OptionSpec(.retryBackoff, "retry-backoff", value: .required("FACTOR"), group: .retries,
                   help: "Multiply the delay by FACTOR after each retry (default 2; 1 to 100)",
                   binding: .custom(sample: "2", resets: [.field(\.retryBackoff)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       guard let factor = Settings.decimal(value), (1...100).contains(factor) else {
                           throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): expected a factor from 1 to 100")
                       }
                       settings.retryBackoff = factor
                   }),
        OptionSpec(.retryMaxDelay, "retry-max-delay", value: .required("SECONDS"), group: .retries,
                   help: "Never wait longer than this between attempts, Retry-After included",
                   binding: .seconds(\.retryMaxDelay)),
        OptionSpec(.retryJitter, "retry-jitter", group: .retries, help: "Randomise each delay between zero and its computed value",
                   binding: .flag(\.retryJitter)),
        OptionSpec(.retryMaxTime, "retry-max-time", value: .required("SECONDS"), group: .retries,
                   help: "Stop retrying when the next attempt would start after this many seconds",
                   binding: .seconds(\.retryMaxTime, positive: false)),
        OptionSpec(.retryOn, "retry-on", value: .required("STATUSES"), group: .retries,
                   help: "Statuses to retry, replacing 408,429,500,502,503,504",
                   details: "Statuses to retry, replacing 408,429,500,502,503,504: a list of statuses, ranges and classes, such as 503,520-530 or 5xx.",
                   binding: .custom(sample: "503", resets: [.field(\.retryOn)]) { settings, option throws(CommandFailure) in
                       settings.retryOn = Set(try Settings.statusList(option.value ?? "", option.spelling).flatMap { Array($0) })
                   }),
        OptionSpec(.retryAllMethods, "retry-all-methods", group: .retries, help: "Also retry POST, PATCH and other non-idempotent methods",
                   binding: .flag(\.retryAllMethods)),
        OptionSpec(.timeout, "timeout", value: .required("SECONDS"), group: .retries, help: "Give up on an attempt after SECONDS (exit 2)",
                   details: "Give up on an attempt after SECONDS (exit 2). Without it af waits as long as the server takes, and says on standard error when a server has not answered for 30 s, has stopped taking the request body, or has stopped sending the response body. An --auth-cmd command gets as long to print its token (exit 1 when it does not). Every duration option takes 0 to 2000000 seconds, as a number or with a unit (500ms, 30s, 2m, 1h); a larger value is a usage error.",
                   binding: .seconds(\.timeout, positive: true)),
        OptionSpec(.connectTimeout, "connect-timeout", value: .required("SECONDS"), group: .retries,
                   help: "Give up connecting (TCP and TLS) after SECONDS (exit 2); 30 unless --timeout is given",
                   binding: .seconds(\.connectTimeout, positive: true)),
        OptionSpec(.checkStatus, "check-status", group: .retries,
                   help: "Exit 3, 4 or 5 when the final status is 3xx, 4xx or 5xx",
                   binding: .flag(\.checkStatus)),
        OptionSpec(.acceptStatus, "accept-status", value: .required("LIST"), group: .retries,
                   help: "Statuses --check-status accepts besides 2xx, such as 200-299,404",
                   details: "Statuses --check-status accepts besides 2xx: a list of statuses, ranges and classes, such as 200-299,404 or 3xx.",
                   binding: .custom(sample: "200-299", resets: [.field(\.acceptStatus)]) { settings, option throws(CommandFailure) in settings.acceptStatus = try Settings.statusList(option.value ?? "", option.spelling) }),
    ] }

    private static var redirectsAndAuth: [OptionSpec] { [
        OptionSpec(.follow, "follow", short: "F", group: .redirectsAndAuth,
                   help: "Follow redirects",
                   details: "Follow redirects. 301, 302 and 303 turn POST into GET without a body; 307 and 308 keep the method and body. Credentials are dropped when a redirect changes scheme, host or port. A redirect without a Location (or with an empty one) is the response itself.",
                   binding: .custom(.flag, sample: nil) { settings, option in
                       settings.follow = !option.negated
                       settings.followGiven = true
                   }),
        OptionSpec(.maxRedirects, "max-redirects", value: .required("N"), group: .redirectsAndAuth, help: "Follow at most N redirects; more is exit 6",
                   binding: .count(\.maxRedirects)),
        OptionSpec(.secretHeader, "secret-header", value: .required("NAME"), group: .redirectsAndAuth,
                   help: "Treat header NAME as a credential: drop it on cross-origin redirects (repeatable)",
                   binding: .custom(sample: "X-Token", resets: [.field(\.secretHeaders)]) { settings, option throws(CommandFailure) in
                       // A name no header can have would match none, and keep nothing from a redirect.
                       let value = option.value ?? ""
                       guard RequestBuilder.isHeaderName(value) else {
                           throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): expected a header name such as X-Api-Key (letters, digits and !#$%&'*+-.^_`|~)")
                       }
                       settings.secretHeaders.append(value)
                   }),
        OptionSpec(.locationTrusted, "location-trusted", group: .redirectsAndAuth,
                   help: "Keep credentials on cross-origin redirects (never after https to http)",
                   binding: .flag(\.locationTrusted)),
        OptionSpec(.auth, "auth", short: "a", value: .required("USER[:PASS]"), group: .redirectsAndAuth,
                   help: "Credentials; without :PASS af asks for the password on a terminal",
                   details: "Credentials for the scheme chosen with --auth-type. Without :PASS, af asks for the password when standard input is a terminal; otherwise it is a usage error and nothing is sent. For bearer, the value is the token. Credentials in the URL (http://USER:PASS@host/) are used when -a is not given; a URL user without a password has an empty one, as in curl.",
                   binding: .text(\.auth, nonEmpty: false, sample: "ada:secret")),
        OptionSpec(.authType, "auth-type", short: "A", value: .required("TYPE"), group: .redirectsAndAuth,
                   help: "Authentication scheme: basic (default), digest or bearer",
                   completion: .choices(["basic", "digest", "bearer"]),
                   binding: .choice(\.authType, Credentials.Scheme.self,
                                    otherwise: "-A is --auth-type in af, as in HTTPie; a User-Agent (curl's -A) is a header item: af URL 'User-Agent:VALUE'")),
        OptionSpec(.authCmd, "auth-cmd", value: .required("CMD"), group: .redirectsAndAuth,
                   help: "Run CMD for a bearer token; on a 401 run it again and retry once",
                   details: "Run CMD with /bin/sh and send its standard output (trimmed) as a bearer token. On a 401 response af runs CMD again and retries once (not one of the attempts --retry counts); at most 3 refreshes happen in one run. CMD is done when its shell exits (what it leaves running in the background is not waited for); with --timeout it may take that long, and is stopped after.",
                   binding: .text(\.authCmd, sample: "echo token")),
        OptionSpec(.ignoreNetrc, "ignore-netrc", group: .redirectsAndAuth, help: "Do not read credentials from ~/.netrc (or $NETRC)",
                   binding: .flag(\.ignoreNetrc)),
        OptionSpec(.session, "session", value: .required("NAME|PATH"), group: .redirectsAndAuth,
                   help: "Keep headers, auth and cookies between runs in a session file",
                   details: "Load headers, authentication and cookies from a session, and save them back after the exchange. A NAME is stored under the configuration directory's sessions/HOST/NAME.json; a PATH (containing a slash) is used as given. Files are written atomically with mode 0600. A session keeps at most 1000 cookies; past that the oldest are dropped, with a note on standard error. A session file HTTPie wrote is read (its headers, credentials and cookies, in either of HTTPie's layouts) and written back in its own layout; a new NAME that HTTPie has a session of for the host gets a note with that file's path.",
                   completion: .file,
                   binding: .custom(.text(nonEmpty: true), sample: "work", resets: [Settings.sessionReset]) { settings, option throws(CommandFailure) in
                       guard let name = option.value else { return }
                       settings.session = try Settings.nonEmpty(name, "--session")
                       settings.sessionName = name
                   }),
        OptionSpec(.sessionReadOnly, "session-read-only", value: .optional("NAME|PATH"), group: .redirectsAndAuth,
                   help: "Use a session but never write it back (--session-read-only=NAME, or beside --session)",
                   details: "Use a session without updating it: --session-read-only=NAME|PATH names the session, as HTTPie's option does; given alone, it makes the --session given with it read-only.",
                   completion: .file,
                   binding: .custom(.text(nonEmpty: true), sample: "work", resets: [Settings.sessionReadOnlyReset]) { settings, option throws(CommandFailure) in
                       settings.sessionReadOnly = true
                       if let name = option.value {
                           settings.session = try Settings.nonEmpty(name, "--session-read-only")
                           settings.sessionReadOnlyName = name
                       }
                   }),
    ] }

    private static var tls: [OptionSpec] { [
        OptionSpec(.verify, "verify", value: .required("yes|no|PATH"), group: .tls,
                   help: "Certificate verification: yes (default; a CA bundle named by $REQUESTS_CA_BUNDLE, $CURL_CA_BUNDLE, $SSL_CERT_FILE or $SSL_CERT_DIR counts), no, or a CA bundle PATH (PEM file or hashed directory)",
                   completion: .file,
                   binding: .custom(sample: "yes") { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       guard !value.isEmpty else { throw .usage("\(option.spelling) needs yes, no or the path of a CA bundle") }
                       switch value.lowercased() {
                       case "yes", "true": settings.verify = .on
                       case "no", "false": settings.verify = .off
                       default: settings.verify = .bundle(value)
                       }
                   }),
        OptionSpec(.insecure, "insecure", short: "k", group: .tls, help: "Same as --verify=no: do not verify certificates (prints a warning)",
                   binding: .custom(.flag, sample: nil) { settings, option in settings.verify = option.negated ? .on : .off }),
        OptionSpec(.cert, "cert", value: .required("FILE"), group: .tls, help: "Client certificate (PEM) for mutual TLS",
                   details: "Client certificate (PEM) for mutual TLS, with its private key in the same file unless --cert-key names another. Both are checked before anything is sent: a file with no PEM certificate or key, a key that is not the certificate's, or a pass phrase that does not decrypt it is exit 66; an encrypted key without --cert-key-pass is asked for on a terminal (exit 64 where af may not ask)",
                   completion: .file,
                   binding: .text(\.cert, sample: "client.pem")),
        OptionSpec(.certKey, "cert-key", value: .required("FILE"), group: .tls, help: "Private key for --cert when it is a separate file", completion: .file,
                   binding: .text(\.certKey, sample: "client.key")),
        OptionSpec(.certKeyPass, "cert-key-pass", value: .required("PASS"), group: .tls, help: "Pass phrase for an encrypted private key (asked for on a terminal when not given)",
                   binding: .text(\.certKeyPass, nonEmpty: false)),
        OptionSpec(.ssl, "ssl", value: .required("VERSION"), group: .tls, help: "Minimum TLS version: tls1.2 (the default) or tls1.3",
                   completion: .choices(["tls1.2", "tls1.3"]),
                   binding: .choice(\.ssl, TLSOptions.Version.self)),
        OptionSpec(.tlsMax, "tls-max", value: .required("VERSION"), group: .tls, help: "Highest TLS version: tls1.2, or tls1.3 (the default)",
                   details: "The highest TLS version af offers, as curl's --tls-max does. --tls-max=tls1.2 reaches a server over TLS 1.2 even when it speaks TLS 1.3, which is what HTTPie's --ssl=tls1.2 does (af's --ssl sets the lowest version); a server that speaks only TLS 1.3 is then exit 7. Below --ssl it is a usage error.",
                   completion: .choices(["tls1.2", "tls1.3"]),
                   binding: .choice(\.tlsMax, TLSOptions.Version.self)),
        OptionSpec(.ciphers, "ciphers", value: .required("LIST"), group: .tls, help: "OpenSSL cipher list to offer",
                   details: "The ciphers to offer, separated by colons: OpenSSL's names and cipher-list words for TLS 1.2 (ECDHE-RSA-AES128-GCM-SHA256, HIGH:!aNULL), and TLS 1.3's suite names (TLS_AES_128_GCM_SHA256). OpenSSL sets the two apart: a list without TLS_ names leaves TLS 1.3 its default suites, so a server that speaks TLS 1.3 is reached with one of those, as with curl's --ciphers. A list OpenSSL knows no name of is a usage error.",
                   binding: .text(\.ciphers, sample: "ECDHE-RSA-AES128-GCM-SHA256")),
        OptionSpec(.pin, "pin", value: .required("sha256//BASE64"), group: .tls,
                   help: "Require a public key with this SPKI hash in the server's chain (repeatable)",
                   details: "Require the server's certificate chain to contain a public key whose SubjectPublicKeyInfo has this SHA-256 hash. Repeat to allow several keys. Checked during the handshake, before any request byte is sent, on every redirect hop. af pin prints the pins of a server.",
                   binding: .custom(sample: "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", resets: [.field(\.pins)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       guard value.hasPrefix("sha256//"), let key = Base64.decode(String(value.dropFirst(8))), key.count == 32 else {
                           throw .usage("invalid pin '\(Quote.argument(value))': expected sha256// followed by the base64 SHA-256 of a public key (see 'af pin HOST')")
                       }
                       settings.pins.append(value)
                   }),
        OptionSpec(.pinCert, "pin-cert", value: .required("FILE"), group: .tls,
                   help: "Require this certificate (PEM or DER) in the chain; a pinned self-signed one is trusted (repeatable)",
                   completion: .file,
                   binding: .texts(\.pinCerts, sample: "server.pem")),
        OptionSpec(.checkRevocation, "check-revocation", group: .tls, help: "Require a good stapled OCSP response",
                   binding: .flag(\.checkRevocation)),
        OptionSpec(.crl, "crl", value: .required("FILE"), group: .tls, help: "Check certificates against this CRL (PEM)", completion: .file,
                   binding: .text(\.crl, sample: "revoked.crl")),
        OptionSpec(.trustPolicy, "trust-policy", value: .required("FILE"), group: .tls,
                   help: "Per-host trust evaluators from a JSON policy file",
                   details: "Map hosts to trust evaluators with a JSON file: {\"all_hosts_must_be_evaluated\": true, \"hosts\": {\"api.example.com\": [\"default\", {\"pins\": [\"sha256//...\"]}], \"*.example.com\": [\"default\", {\"certificates\": [\"certs/api.pem\"]}, \"revocation\"], \"localhost\": [\"disabled\"]}}. Every evaluator of a host must pass; *. matches one label; an exact name beats a wildcard.",
                   completion: .file,
                   binding: .text(\.trustPolicy, sample: "policy.json")),
    ] }

    private static var network: [OptionSpec] { [
        OptionSpec(.proxy, "proxy", value: .required("SCHEME:URL"), group: .network,
                   help: "Proxy for SCHEME (http, https or all), such as http:http://proxy:3128 (repeatable)", decidesConnection: true,
                   binding: .custom(sample: "http:http://proxy:3128", resets: [.field(\.proxies)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       // As messages show it: without the password of a proxy's USER:PASSWORD@.
                       let shown = Quote.argument(ProxyAddress.withoutPassword(value))
                       guard let (scheme, url) = value.splitOnce(byte: UInt8(ascii: ":")), !scheme.isEmpty, !url.isEmpty else {
                           throw .usage("invalid value '\(shown)' for \(option.spelling): expected SCHEME:URL, such as http:http://proxy:3128")
                       }
                       // curl's --proxy takes the URL alone: say how af spells it rather than
                       // pass "//proxy:3128" on (or, for HOST:PORT, quietly go direct).
                       if url.hasPrefix("//") {
                           throw .usage("'\(shown)' for \(option.spelling) names no SCHEME for it: give all:\(shown) for every URL, or http: or https: before it")
                       }
                       guard ["http", "https", "all"].contains(scheme.lowercased()) else {
                           // `proxy:3128` (curl's HOST:PORT), or a URL after a wrong SCHEME.
                           let example = url.containsBytes(of: "://") ? String(url) : "http://" + value
                           let shownExample = Quote.argument(ProxyAddress.withoutPassword(example))
                           throw .usage("invalid value '\(shown)' for \(option.spelling): SCHEME is http, https or all (the URLs that go through the proxy), such as all:\(shownExample)")
                       }
                       if let problem = ProxyAddress.problem(String(url)) {
                           throw .usage("invalid value '\(shown)' for \(option.spelling): \(problem)")
                       }
                       settings.proxies.append(value)
                   }),
        OptionSpec(.httpVersion, "http-version", value: .required("VERSION"), group: .network,
                   help: "HTTP version: 1.0, 1.1, 2 or 2-prior-knowledge (default: HTTP/2 when TLS offers it)",
                   completion: .choices(["1.0", "1.1", "2", "2-prior-knowledge"]),
                   binding: .choice(\.httpVersion, TransferOptions.HTTPVersion.self)),
        OptionSpec(.resolve, "resolve", value: .required("HOST:PORT:ADDR"), group: .network, help: "Connect to ADDR for HOST:PORT (repeatable)",
                   decidesConnection: true, binding: .custom(sample: "example.org:443:127.0.0.1", resets: [.field(\.resolve)]) { settings, option throws(CommandFailure) in
                       settings.resolve.append(try Settings.resolveEntry(option.value ?? "", option.spelling))
                   }),
        OptionSpec(.unixSocket, "unix-socket", value: .required("PATH"), group: .network, help: "Connect through a Unix domain socket", completion: .file,
                   decidesConnection: true, binding: .custom(sample: "/run/app.sock", resets: [.field(\.unixSocket)]) { settings, option throws(CommandFailure) in
                       let path = try Settings.nonEmpty(option.value ?? "", option.spelling)
                       if let problem = TransferOptions.unixSocketPathProblem(path) {
                           throw .usage("invalid value '\(Quote.argument(path))' for \(option.spelling): \(problem)")
                       }
                       settings.unixSocket = path
                   }),
        OptionSpec(.interface, "interface", value: .required("NAME"), group: .network, help: "Use this network interface or local address", decidesConnection: true,
                   binding: .text(\.interface, sample: "lo")),
        OptionSpec(.ipv4, "ipv4", short: "4", group: .network, help: "Resolve host names to IPv4 addresses only", decidesConnection: true,
                   binding: .custom(.flag, sample: nil) { settings, option in settings.ipVersion = option.negated ? .any : .v4 }),
        OptionSpec(.ipv6, "ipv6", short: "6", group: .network, help: "Resolve host names to IPv6 addresses only", decidesConnection: true,
                   binding: .custom(.flag, sample: nil) { settings, option in settings.ipVersion = option.negated ? .any : .v6 }),
        OptionSpec(.https, "https", group: .network, help: "Use https:// for URLs without a scheme (--default-scheme=https)",
                   binding: .flag(\.https)),
        OptionSpec(.defaultScheme, "default-scheme", value: .required("SCHEME"), group: .network,
                   help: "Scheme for URLs without one: http (default) or https",
                   completion: .choices(["http", "https"]),
                   binding: .custom(.choice(["http", "https"]), sample: "https", resets: [.field(\.https)]) { settings, option throws(CommandFailure) in
                       let value = option.value ?? ""
                       guard let scheme = ["http", "https"].first(where: { $0 == value.lowercased() }) else {
                           throw .usage("invalid value '\(Quote.argument(value))' for \(option.spelling): choose http or https")
                       }
                       settings.https = scheme == "https"
                   }),
        OptionSpec(.pathAsIs, "path-as-is", group: .network, help: "Send the path as given, without removing ./ and ../ segments",
                   binding: .flag(\.pathAsIs)),
        OptionSpec(.maxHeaders, "max-headers", value: .required("N"), group: .network, help: "Refuse responses with more than N header lines (or N trailer lines); 0: no limit",
                   binding: .count(\.maxHeaders)),
        OptionSpec(.maxFilesize, "max-filesize", value: .required("SIZE"), group: .network,
                   help: "Refuse response bodies larger than SIZE (bytes, or with K, M, G)",
                   details: "Refuse response bodies larger than SIZE (bytes, or with K, M, G or T, counted in 1024s as curl counts them; 10MiB and 1.5G as af prints sizes; for a compressed body af decodes, its decoded size). Without it, a compressed body that inflates more than 200 times once past 8 MiB is refused as a likely decompression bomb; with it, SIZE alone bounds the decoded body. A resumed download (-c, or a retry that asks for the rest) must make a file of at most SIZE, by the resource's size its Content-Range gives.",
                   binding: .size(\.maxFilesize)),
    ] }

    private static var batch: [OptionSpec] { [
        OptionSpec(.parallel, "parallel", value: .required("N"), group: .batch,
                   help: "af batch: keep up to N requests in flight",
                   details: "With af batch, keep up to N requests in flight at once (1 to 1000; default 1). Requests to one origin reuse connections, and share one connection as HTTP/2 streams where the server speaks HTTP/2. When the files af may hold open (ulimit -n, raised to its hard limit first) are too few for N, af keeps fewer in flight and says so.",
                   binding: .count(\.parallel, 1...1000)),
        OptionSpec(.rate, "rate", value: .required("N/UNIT"), group: .batch,
                   help: "af batch: start at most N requests per second, minute or hour (10/s, 100/m, 5/h)",
                   details: "With af batch, start at most N requests per second (N/s), minute (N/m) or hour (N/h), evenly spaced; N is 1 to 1000000.",
                   binding: .custom(sample: "10/s", resets: [.field(\.rate)]) { settings, option throws(CommandFailure) in settings.rate = try Settings.rate(option.value ?? "", option.spelling) }),
        OptionSpec(.failFast, "fail-fast", group: .batch,
                   help: "af batch: start nothing more after the first failure and cancel what is in flight",
                   binding: .flag(\.failFast)),
        OptionSpec(.retryBudget, "retry-budget", value: .required("PERCENT"), group: .batch,
                   help: "af batch: retries may not exceed PERCENT of the requests started, plus 10",
                   details: "With af batch, retries of all requests together may not exceed PERCENT (0 to 100; default 20) of the requests started so far, plus 10. When the budget is spent a failure is final, and the summary says so.",
                   binding: .count(\.retryBudget, 0...100)),
    ] }

    private static var pin: [OptionSpec] { [
        OptionSpec(.file, "file", value: .required("CERT"), group: .pin,
                   help: "af pin: read certificates from a PEM or DER file instead of a server",
                   details: "With af pin, print the certificates of a PEM or DER file with their fingerprints and pins, without any network access.",
                   completion: .file,
                   binding: .text(\.pinFile, sample: "server.pem")),
    ] }

    private static var configuration: [OptionSpec] { [
        OptionSpec(.help, "help", group: .configuration, help: "Show this help and exit",
                   binding: .flag(\.help)),
        OptionSpec(.debug, "debug", group: .configuration,
                   help: "Print af's versions, the parsed options and libcurl's own trace on standard error",
                   details: "Print af's version block, the parsed options and positionals, and libcurl's verbose trace of each transfer (* text, > sent head, < received head) on standard error, for bug reports. The values of credentials are hidden throughout: -a and --cert-key-pass, Authorization, Proxy-Authorization, Cookie, Set-Cookie and --secret-header headers (their scheme and cookie names stay), and passwords in URLs and proxies. Without a URL it prints the version block and exits 0.",
                   binding: .flag(\.debug)),
        OptionSpec(.version, "version", group: .configuration, help: "Show af's version and build (commit, date, Swift) and the libcurl, OpenSSL and zlib it runs on, and exit",
                   binding: .flag(\.version)),
    ] }

    /// A pair of options that cannot be used together, and why; using both is a usage error
    /// naming both, before anything is read or sent.
    public struct Conflict: Sendable {
        public let first: OptionID
        public let second: OptionID
        /// The error line (after `af: error: `), naming both options.
        public let message: String
    }

    /// Every pair of options that contradict each other.
    public static let conflicts: [Conflict] = [
        Conflict(first: .offline, second: .curl, message: "--offline and --curl both print instead of sending; pick one"),
        Conflict(first: .offline, second: .report,
                 message: "--report=json describes an exchange and --offline sends nothing; drop one (--offline alone prints the request)"),
        Conflict(first: .report, second: .download, message: "--report=json prints the body in the report; it cannot be combined with --download"),
        Conflict(first: .json, second: .form, message: "--json and --form ask for different bodies; pick one"),
        Conflict(first: .json, second: .multipart, message: "--json and --multipart ask for different bodies; pick one"),
        Conflict(first: .raw, second: .multipart, message: "--raw gives the whole body; it cannot be combined with --multipart"),
    ]

    /// An option that only makes sense with one of some others.
    public struct Requirement: Sendable {
        public let option: OptionID
        public let anyOf: [OptionID]
        /// The error line (after `af: error: `).
        public let message: String
    }

    /// Every option that needs another.
    public static let requirements: [Requirement] = [
        Requirement(option: .resume, anyOf: [.download, .output], message: "--continue resumes a file; use it with --download or -o FILE"),
        // Without a file the body was printed unchecked and af exited 0 whatever its digest.
        Requirement(option: .checksum, anyOf: [.download, .output],
                    message: "--checksum verifies what af saves; use it with --download or -o FILE (-o - checks what goes to standard output)"),
        // libcurl ignores a key without a certificate: the request went out without one.
        Requirement(option: .certKey, anyOf: [.cert], message: "--cert-key is the private key of a client certificate, and no --cert names one; add --cert=FILE"),
        Requirement(option: .certKeyPass, anyOf: [.cert], message: "--cert-key-pass opens the private key of a client certificate, and no --cert names one; add --cert=FILE"),
    ]

    /// Looks up an option by its long name.
    public static func option(long: String) -> OptionSpec? {
        byLong[long].map { all[$0] }
    }

    /// Options whose values are secrets: never in a bug report (their `Settings` fields have
    /// their names), nor repeated in a message about them.
    static let secretOptions: Set<OptionID> = [.auth, .certKeyPass]

    /// Looks up an option by its short letter.
    public static func option(short: Character) -> OptionSpec? {
        byShort[short].map { all[$0] }
    }

    /// Where each option is in `all` (positions, not copies of the options).
    private static let byLong: [String: Int] = Dictionary(uniqueKeysWithValues: all.indices.map { (all[$0].long, $0) })
    private static let byShort: [Character: Int] = Dictionary(uniqueKeysWithValues: all.indices.compactMap { index in all[index].short.map { ($0, index) } })
}
