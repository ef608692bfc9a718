import AFEngine

/// Request items that read standard input, as curl's `-F name=@-` and `-F name=<-` do: `-`
/// as the file of `name@-`, `name=@-`, `name:=@-`, `Name:@-` or `name==@-` (or standard
/// input named by its path, `/dev/stdin`). Standard input is then that item's, not a second
/// body competing with the items; one item may read it, and never a terminal's.
enum StandardInputItems {
    /// Whether a multipart part is standard input's (`name@-`): it is named `-`, and read
    /// through af's descriptor for it.
    static func isStandardInput(_ part: MultipartFormData.Part, path: String) -> Bool {
        part.filename == "-" && path.hasPrefix("/proc/self/fd/")
    }

    /// Names of standard input as a file.
    static let names: Set<String> = ["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"]

    /// Whether a file option's value names standard input. `-` is not one of them here: to
    /// `--verify`, `--cert` and the like it is a file called "-", as it is to curl.
    static func namesStandardInput(_ value: String) -> Bool {
        value != "-" && names.contains(value)
    }

    /// How an item that reads standard input ends: `@` and one of `names` (`@-`, `a=@/dev/stdin`).
    static let itemEndings = names.map { "@" + $0 }

    /// The file an item reads. `@file` bodies are left out: `@-` is the body itself, which
    /// `BodyBuilder` reads as it reads a piped body.
    static func path(of item: RequestItem) -> String? {
        switch item {
        case .headerFromFile(_, let path), .queryFromFile(_, let path), .fieldFromFile(_, let path),
             .jsonFieldFromFile(_, let path), .file(_, let path, _):
            path
        case .header, .unsetHeader, .emptyHeader, .query, .field, .jsonField, .bodyFile:
            nil
        }
    }

    /// Refuses standard input for `reader` (an item with `-`, or the body `@-`) when it is
    /// not there to read: ignored with -I, or a terminal, where reading would wait for typing.
    static func checkReadable(by reader: SourcedItem, settings: Settings, environment: Environment) throws(CommandFailure) {
        let isBody = reader.item == .bodyFile(path: "-")
        let what = isBody ? "the body from standard input" : "standard input"
        if settings.ignoreStdin {
            throw .usage("'\(reader.argument)' reads \(what), which -I (--ignore-stdin) ignores; give one of them")
        }
        if environment.stdinIsTerminal {
            let example = isBody ? "the body in (af post URL @- < FILE)" : "it in (af URL '\(reader.argument)' < FILE)"
            throw .usage("'\(reader.argument)' reads \(what), which is a terminal here; pipe or redirect \(example)")
        }
        // Closed when af started (`<&-`), standard input is held open for writing only
        // (CStartup): read, it gave no bytes, and an empty body was sent as if asked for.
        if FileSystem.isWriteOnly(environment.stdin) {
            throw .unreadable("cannot read \(what) for '\(reader.argument)': it was closed (or open only for writing) when af started, as <&- does; pipe or redirect it (< FILE)")
        }
    }

    /// `items` with `-` turned into the path of af's standard input, and that path when an
    /// item reads standard input (nil when none does).
    static func resolve(_ items: [SourcedItem], settings: Settings, environment: Environment) throws(CommandFailure) -> ([SourcedItem], String?) {
        let readers = items.filter { item in
            if case .bodyFile("-") = item.item { return true }
            return path(of: item.item).map(names.contains) ?? false
        }
        if let option = settings.standardInputOption, let reader = readers.first {
            throw .usage("standard input can be read once, by one item or option; \(option.text) and '\(reader.argument)' both read it; save one of them to a file")
        }
        guard let reader = readers.first, !(readers.count == 1 && reader.item == .bodyFile(path: "-")) else { return (items, nil) }
        if readers.count > 1 {
            throw .usage("standard input can be read once, by one item; '\(readers[0].argument)' and '\(readers[1].argument)' both read it")
        }
        try checkReadable(by: reader, settings: settings, environment: environment)
        let input = try StandardInput.remainderPath(environment.stdin, temporaryDirectory: environment.temporaryDirectory)
        let resolved = items.map { item -> SourcedItem in
            guard item == reader else { return item }
            var item = item
            switch item.item {
            case .headerFromFile(let name, _): item.item = .headerFromFile(name: name, path: input)
            case .queryFromFile(let name, _): item.item = .queryFromFile(name: name, path: input)
            case .fieldFromFile(let key, _): item.item = .fieldFromFile(key: key, path: input)
            case .jsonFieldFromFile(let key, _): item.item = .jsonFieldFromFile(key: key, path: input)
            case .file(let name, _, let type): item.item = .file(name: name, path: input, contentType: type)
            case .header, .unsetHeader, .emptyHeader, .query, .field, .jsonField, .bodyFile: break
            }
            return item
        }
        return (resolved, input)
    }
}
