import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// How the request body was made, for printing it (`B`, `--offline`) and for `--curl`.
enum BodyOrigin: Sendable {
    case none
    /// JSON, form or `--raw` text built in memory.
    case text(String)
    case multipart(MultipartFormData)
    /// `@file`.
    case file(path: String)
    /// `@file` of a pipe (`@<(command)`), read whole before the request: what it held.
    case heldFile(path: String, held: StandardInput.Held)
    /// Standard input as held to be sent (in memory, or in a file: a spooled copy or
    /// standard input's own), or nil when it is streamed as it is read.
    case standardInput(StandardInput.Held?)
}

/// The body and the headers that describe it.
struct BuiltBody: Sendable {
    var body: RequestBody = .empty
    var origin: BodyOrigin = .none
    var contentType: String?
    /// The body is JSON, so af asks for JSON back.
    var isJSON = false
    /// Temporary files to remove when the run ends.
    var temporaryFiles: [String] = []

    /// Removes the temporary files (when the run ends, or when what was built is dropped).
    func removeTemporaryFiles() {
        for file in temporaryFiles { FileSystem.remove(file) }
    }
}

/// Builds the body from data and file items, `--raw`, `@file` or standard input (SPEC §3).
enum BodyBuilder {
    enum Mode { case json, form, multipart }

    static let formType = "application/x-www-form-urlencoded; charset=utf-8"

    /// The form a `Content-Type` header item asks for (the last one given), for data items
    /// without `--form`, `--multipart` or `--json`: `Content-Type:application/x-www-form-urlencoded`
    /// (as a curl user writes it beside `-d a=1`) sent the items as JSON under that type, which
    /// no server reads as a form.
    static func declaredMode(_ items: [SourcedItem]) -> Mode? {
        let declared = items.last { if case .header(let name, _) = $0.item { name.lowercased() == "content-type" } else { false } }
        guard case .header(_, let value)? = declared?.item else { return nil }
        switch MediaType.essence(value) {
        case "application/x-www-form-urlencoded": return .form
        case "multipart/form-data": return .multipart
        default: return nil
        }
    }

    /// `standardInputItem`: the path through which an item reads standard input
    /// (`StandardInputItems`); standard input is then not a body of its own, as it is not when
    /// a file option names it (`settings.standardInputOption`). `holdsPipes`: a body file that
    /// is a pipe is read whole now unless `--chunked` streams it (`Spooler`). `valueNotice` is
    /// said when a value item's pipe gives nothing for a while.
    static func build(
        items: [SourcedItem], settings: Settings, environment: Environment, standardInputItem: String? = nil, holdsPipes: Bool = true,
        valueNotice: StandardInput.WaitNotice? = nil
    ) throws(CommandFailure) -> BuiltBody {
        let dataItems = items.filter { item in
            switch item.item {
            case .field, .fieldFromFile, .jsonField, .jsonFieldFromFile, .file: return true
            default: return false
            }
        }
        let bodyFiles = items.filter { if case .bodyFile = $0.item { return true } else { return false } }
        let firstFile = dataItems.first { if case .file = $0.item { return true } else { return false } }
        let mode: Mode = settings.multipart || firstFile != nil ? .multipart : settings.form ? .form
            : settings.json ? .json : declaredMode(items) ?? .json

        var sources: [String] = []
        if !dataItems.isEmpty { sources.append("items \(dataItems.prefix(3).map { "'\($0.argument)'" }.joined(separator: ", "))") }
        if bodyFiles.count > 1 {
            throw .usage("only one '@file' body is possible, got \(bodyFiles.map { "'\($0.argument)'" }.joined(separator: " and "))")
        }
        if let file = bodyFiles.first { sources.append("'\(file.argument)'") }
        if settings.raw != nil { sources.append("--raw") }
        // `@-` names standard input as the body, as curl's `-d @-` does: the same body a pipe
        // gives, asked for explicitly (it was read as a file called "-").
        let namesStandardInput = bodyFiles.first.map { if case .bodyFile("-") = $0.item { true } else { false } } ?? false
        if namesStandardInput, let file = bodyFiles.first {
            try StandardInputItems.checkReadable(by: file, settings: settings, environment: environment)
        }
        let stdinKind = settings.ignoreStdin || standardInputItem != nil || settings.standardInputOption != nil ? .none : StandardInput.kind(of: environment.stdin, isTerminal: environment.stdinIsTerminal)
        // `af post URL < DIR` (a directory where a file was meant): reading it fails, and it
        // was sent as no body at all, exit 0.
        if namesStandardInput || sources.isEmpty, case .directory = stdinKind {
            throw .unreadable("cannot read the body from standard input: it is a directory; redirect a file (< FILE), or give -I (--ignore-stdin) to send no body")
        }
        // `af post URL < f > f`: the shell emptied f before af started.
        if namesStandardInput || sources.isEmpty, !settings.ignoreStdin, standardInputItem == nil, settings.standardInputOption == nil, !environment.stdinIsTerminal {
            try InputIsOutput.checkStandardInput(reader: namesStandardInput ? bodyFiles.first?.argument : nil, settings: settings, environment: environment)
        }
        if !sources.isEmpty, !namesStandardInput, StandardInput.hasPendingData(environment.stdin, kind: stdinKind) {
            sources.append("standard input")
        }
        if sources.count > 1 {
            let hint = sources.last == "standard input" ? " (use -I to ignore standard input)" : ""
            throw .usage("the body comes from both \(sources.joined(separator: " and ")); give only one\(hint)")
        }

        // HTTP/1.0 has no chunked encoding: a body read once (a FIFO, `<(cmd)`) is held to learn its length.
        // A pipe is read whole before the request unless --chunked streams it: read as the
        // body went, it held up the transfer's thread (--timeout fired only once it gave
        // bytes again, and nothing said what af waited for).
        let holdsPipes = holdsPipes && !settings.chunked && !settings.offline && !settings.curl
        var pipeNotice = holdsPipes ? StandardInput.waitNotice(stderr: environment.stderr, quiet: settings.quiet, delays: environment.noticeDelays) : nil
        pipeNotice?.meanwhile = "af reads it to its end before sending the request (--chunked sends it as it comes)"
        let spooler = Spooler(needed: mayResend(settings) || settings.httpVersion == .http1_0, holdsPipes: holdsPipes,
                              temporaryDirectory: environment.temporaryDirectory, notice: pipeNotice)
        if !dataItems.isEmpty {
            switch mode {
            case .json: return try json(dataItems, notice: valueNotice)
            case .form: return try form(dataItems, way: "or drop --form", notice: valueNotice)
            case .multipart:
                // What makes the body a form, for a JSON item a form field cannot carry.
                let way = settings.multipart ? "or drop --multipart"
                    : "or send no file: the file item '\(firstFile?.argument ?? "")' makes the body multipart/form-data"
                return try multipart(dataItems, boundary: settings.boundary, spooler: spooler, standardInput: standardInputItem, way: way, notice: valueNotice)
            }
        }
        if settings.multipart {
            // An empty form: a body given otherwise (`@FILE`, `@-`, a pipe) went unsent, exit 0.
            let piped = sources.isEmpty && StandardInput.hasPendingData(environment.stdin, kind: stdinKind)
            if let other = sources.first ?? (piped ? "standard input" : nil) {
                let part = piped || namesStandardInput ? "name@-" : "name@FILE"
                throw .usage("--multipart makes the body a form of data items, and \(other) is a whole body; send it as a part (\(part)) or drop --multipart\(piped ? " (-I ignores standard input)" : "")")
            }
            return try multipart([], boundary: settings.boundary, spooler: spooler, way: "or drop --multipart", notice: nil)
        }
        if namesStandardInput, case .none = stdinKind {
            // /dev/null or an empty file: an empty body, asked for.
            return BuiltBody(body: .bytes([]), contentType: mode == .form ? formType : "application/json", isJSON: mode == .json)
        }
        if !namesStandardInput, let file = bodyFiles.first, case .bodyFile(let given) = file.item {
            try FileReading.checkReadable(given, item: file.argument)
            let type = MIMEType.guess(forPath: given) ?? "application/octet-stream"
            // The null device is an empty body (Content-Length: 0, as curl's --data-binary
            // @/dev/null and HTTPie send it), not a stream of unknown length sent chunked,
            // which a server that wants a length (S3's presigned PUT) refuses.
            if FileIO.isNullDevice(path: given) {
                return BuiltBody(body: .bytes([]), origin: .text(""), contentType: type, isJSON: false, temporaryFiles: spooler.files)
            }
            let held = try spooler.replayable(given, item: file.argument)
            let origin: BodyOrigin = if case .file(given) = held { .file(path: given) } else { .heldFile(path: given, held: held) }
            return BuiltBody(body: held.body, origin: origin, contentType: type, isJSON: type == "application/json",
                             temporaryFiles: spooler.files)
        }
        if let raw = settings.raw {
            return BuiltBody(body: .bytes(Array(raw.utf8)), origin: .text(raw), contentType: mode == .form ? formType : "application/json", isJSON: mode == .json)
        }
        switch stdinKind {
        case .none, .directory:
            // `--json` without data still says JSON (HTTPie): Content-Type and Accept; `--form`
            // says a form.
            if settings.json { return BuiltBody(contentType: "application/json", isJSON: true) }
            return settings.form ? BuiltBody(contentType: formType) : BuiltBody()
        case .regularFile:
            if !settings.quiet, let notice = StandardInput.readPastStartNotice(environment.stdin) {
                StandardInput.writeNotice(notice, stderr: environment.stderr)
            }
            let path = try StandardInput.remainderPath(environment.stdin, temporaryDirectory: environment.temporaryDirectory)
            return BuiltBody(body: .file(path: path), origin: .standardInput(.file(path: path)), contentType: mode == .form ? formType : "application/json", isJSON: mode == .json)
        case .pipe:
            // Streamed only when it will be sent once; a retry, a redirect that keeps the body or
            // an authentication round trip needs all of it again, so it is held first (in
            // memory while it is small).
            if settings.chunked, !mayResend(settings), !settings.offline, !settings.curl {
                return BuiltBody(body: .stream(fileDescriptor: environment.stdin), origin: .standardInput(nil),
                                 contentType: mode == .form ? formType : "application/json", isJSON: mode == .json)
            }
            let notice = StandardInput.waitNotice(stderr: environment.stderr, quiet: settings.quiet, delays: environment.noticeDelays)
            guard let held = try StandardInput.hold(environment.stdin, temporaryDirectory: environment.temporaryDirectory, notice: notice) else {
                return BuiltBody()
            }
            let spooled: [String] = if case .file(let path) = held { [path] } else { [] }
            return BuiltBody(body: held.body, origin: .standardInput(held), contentType: mode == .form ? formType : "application/json",
                             isJSON: mode == .json, temporaryFiles: spooled)
        }
    }

    /// `notice` is said when a value item's pipe gives nothing for a while (also in `form`
    /// and `multipart`).
    private static func json(_ items: [SourcedItem], notice: StandardInput.WaitNotice?) throws(CommandFailure) -> BuiltBody {
        let builder = NestedJSONBuilder()
        for item in items {
            switch item.item {
            case .field(let key, let value):
                try builder.insert(key: key, json: JSONWriter.quoted(value), item: item.argument)
            case .fieldFromFile(let key, let path):
                let text = try FileReading.text(atPath: path, item: item.argument, notice: notice)
                try builder.insert(key: key, json: JSONWriter.quoted(text), item: item.argument)
            case .jsonField(let key, _), .jsonFieldFromFile(let key, _):
                try builder.insert(key: key, json: try validatedJSON(try rawJSON(item, notice: notice), item: item.argument, typedKey: typedKey(item)), item: item.argument)
            default:
                break
            }
        }
        let text = builder.render()
        return BuiltBody(body: .bytes(Array(text.utf8)), origin: .text(text), contentType: "application/json", isJSON: true)
    }

    /// The JSON text trimmed of surrounding whitespace, or a usage error that says where it
    /// broke. `typedKey`: the name of a `name:=json` item whose JSON was typed (not a file's).
    static func validatedJSON(_ text: String, item: String, typedKey: String? = nil) throws(CommandFailure) -> String {
        let trimmed = text.trimmingCharacters(in: " \t\r\n")
        if let error = JSONScanner.validate(Array(trimmed.utf8)) {
            var hint = jsonHint(trimmed)
            if hint.isEmpty, let typedKey { hint = textHint(trimmed, key: typedKey) }
            throw .usage("invalid JSON in '\(item)': \(error.description)\(hint)")
        }
        return trimmed
    }

    /// The name of a `name:=json` item typed on the command line; nil for one whose JSON is
    /// a file's.
    private static func typedKey(_ item: SourcedItem) -> String? {
        if case .jsonField(let key, _) = item.item { return key }
        return nil
    }

    /// For text typed where JSON goes (`name:=Ada`, meaning HTTPie's `=`): the two ways to
    /// send it; empty when the text does not begin with a letter (a number gone wrong) or has
    /// JSON's brackets, quotes or commas (JSON gone wrong).
    static func textHint(_ text: String, key: String) -> String {
        guard text.unicodeScalars.first?.properties.isAlphabetic == true, !text.utf8.contains(where: { "{}[]\",'".utf8.contains($0) }) else { return "" }
        return "; ':=' takes JSON, in which text is quoted: send the text with '=' (\(Quote.shellWord(key + "=" + text)))"
            + " or as a JSON string (\(Quote.shellWord(key + ":=\"" + text + "\"")))"
    }

    /// What a JSON text that failed most likely got wrong, when it is one of the usual slips
    /// (Python's or JavaScript's spellings); empty otherwise.
    static func jsonHint(_ text: String) -> String {
        let bytes = Array(text.utf8)
        // A word outside strings: the first letters of the text, or after , : [ { and blanks.
        var words: [String] = []
        var index = 0
        var inString = false
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "z") {
                let start = index
                while index < bytes.count, (bytes[index] | 0x20) >= UInt8(ascii: "a"), (bytes[index] | 0x20) <= UInt8(ascii: "z") { index += 1 }
                words.append(String(decoding: bytes[start..<index], as: UTF8.self))
                continue
            }
            index += 1
        }
        if let word = words.first(where: { ["True", "False", "None", "TRUE", "FALSE", "NULL", "Null", "nil", "undefined"].contains($0) }) {
            return "; JSON's literals are true, false and null, in lower case (not \(word))"
        }
        if bytes.contains(UInt8(ascii: "'")), !bytes.contains(UInt8(ascii: "\"")) {
            return "; JSON strings take double quotes (\"x\"), not single ones (in a shell, quote the whole item: 'name:={\"x\": 1}')"
        }
        var previous: UInt8?
        for byte in bytes where byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
            if previous == UInt8(ascii: ","), byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                return "; JSON allows no comma before a closing bracket"
            }
            previous = byte
        }
        return ""
    }

    /// The JSON text of a `name:=json` or `name:=@file` item.
    private static func rawJSON(_ item: SourcedItem, notice: StandardInput.WaitNotice?) throws(CommandFailure) -> String {
        switch item.item {
        case .jsonField(_, let json): return json
        case .jsonFieldFromFile(_, let path): return try FileReading.text(atPath: path, item: item.argument, notice: notice)
        default: return ""
        }
    }

    /// The text a form sends for a raw JSON scalar (HTTPie's rule): a number as written,
    /// `true`/`false`, a string's characters. Arrays, objects and null have no form text.
    static func scalarText(_ json: String, item: String, typedKey: String? = nil, way: String) throws(CommandFailure) -> String {
        let valid = try validatedJSON(json, item: item, typedKey: typedKey)
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(valid.utf8))
        } catch {
            throw .usage("invalid JSON in '\(item)': \(error.description)")
        }
        switch value {
        case .string(let text): return text
        case .number(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .null, .array, .object:
            throw .usage("'\(item)' is a JSON \(value.kindName), which a form field cannot carry; use a string, number or boolean, \(way)")
        }
    }

    /// `way` ends the message for a JSON item a form field cannot carry: how else to send it.
    private static func form(_ items: [SourcedItem], way: String, notice: StandardInput.WaitNotice?) throws(CommandFailure) -> BuiltBody {
        var fields: [(name: String, value: String)] = []
        for item in items {
            switch item.item {
            case .field(let key, let value):
                fields.append((NestedPath.literal(key), value))
            case .fieldFromFile(let key, let path):
                fields.append((NestedPath.literal(key), try FileReading.text(atPath: path, item: item.argument, notice: notice)))
            case .jsonField(let key, _), .jsonFieldFromFile(let key, _):
                fields.append((NestedPath.literal(key), try scalarText(try rawJSON(item, notice: notice), item: item.argument, typedKey: typedKey(item), way: way)))
            default:
                break
            }
        }
        let text = PercentEncoding.form(fields)
        return BuiltBody(body: .bytes(Array(text.utf8)), origin: .text(text), contentType: formType)
    }

    /// Whether the body may have to be sent more than once: retries, redirects that keep the
    /// body (307, 308), and authentication round trips.
    static func mayResend(_ settings: Settings) -> Bool {
        !settings.offline && !settings.curl
            && (settings.retry > 0 || settings.follow || settings.authCmd != nil || settings.authType == .digest)
    }

    /// Holds body files that can be read only once (a pipe, `<(…)`, a device) when the
    /// request may be sent again, so that every attempt sends the whole body, and pipes
    /// (`<(…)`, a FIFO) whenever `holdsPipes`, so that they are read before the transfer
    /// starts: in memory while they are small, else in temporary files.
    final class Spooler {
        let needed: Bool
        let holdsPipes: Bool
        let temporaryDirectory: String
        /// Said when a pipe gives nothing for a while.
        let notice: StandardInput.WaitNotice?
        private(set) var files: [String] = []

        init(needed: Bool, holdsPipes: Bool = false, temporaryDirectory: String, notice: StandardInput.WaitNotice? = nil) {
            self.needed = needed
            self.holdsPipes = holdsPipes
            self.temporaryDirectory = temporaryDirectory
            self.notice = notice
        }

        /// What sends the file at `path` on every attempt: the file itself, or, when it cannot
        /// be read twice (or is a pipe, with `holdsPipes`), its bytes (while they are few) or a
        /// spooled copy of them.
        func replayable(_ path: String, item: String) throws(CommandFailure) -> StandardInput.Held {
            guard FileIO.exists(path), FileIO.regularFileSize(path) == nil else { return .file(path: path) }
            let type = Self.fileType(path)
            guard needed || (holdsPipes && (type == S_IFIFO || type == S_IFSOCK)) else { return .file(path: path) }
            // A named FIFO is opened without waiting for its writer, so that the notice can say
            // what af waits for (`open` waited silently).
            let fd = type == S_IFIFO ? try StandardInput.openFIFO(path, item: item, notice: notice) : try FileReading.openToRead(path, item: item)
            defer { close(fd) }
            let held = try StandardInput.hold(fd, temporaryDirectory: temporaryDirectory, source: "'\(path)'", notice: notice) ?? .bytes([])
            if case .file(let copy) = held { files.append(copy) }
            return held
        }

        /// The file type of what `path` names (following links: `/dev/fd/63` of `<(…)` is a
        /// FIFO), nil when it cannot be looked at. A FIFO or a socket gives its bytes as a
        /// writer sends them; a device (`/dev/zero`) may never end and is streamed.
        private static func fileType(_ path: String) -> mode_t? {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return info.st_mode & S_IFMT
        }
    }

    private static func multipart(
        _ items: [SourcedItem], boundary: String?, spooler: Spooler, standardInput: String? = nil, way: String, notice: StandardInput.WaitNotice?
    ) throws(CommandFailure) -> BuiltBody {
        var form = MultipartFormData(boundary: boundary)
        for item in items {
            switch item.item {
            case .field(let key, let value):
                form.append(name: NestedPath.literal(key), value: value)
            case .fieldFromFile(let key, let path):
                let bytes = try FileReading.value(atPath: path, item: item.argument, notice: notice)
                form.append(MultipartFormData.Part(name: NestedPath.literal(key), content: .bytes(bytes)))
            case .file(let name, let path, let type):
                try FileReading.checkReadable(path, item: item.argument)
                // Standard input's part is called `-`, as curl calls it.
                let base = path == standardInput ? "-" : path.pathBaseName
                let content = try spooler.replayable(path, item: item.argument).partContent
                form.append(MultipartFormData.Part(name: name, filename: base, contentType: type ?? MIMEType.guess(forPath: base) ?? "application/octet-stream",
                                                   content: content))
            case .jsonField(let key, _), .jsonFieldFromFile(let key, _):
                form.append(name: NestedPath.literal(key), value: try scalarText(try rawJSON(item, notice: notice), item: item.argument, typedKey: typedKey(item), way: way))
            default:
                break
            }
        }
        return BuiltBody(body: .multipart(form), origin: .multipart(form), contentType: form.contentType, temporaryFiles: spooler.files)
    }
}
