import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// A file af would read that is also a file it writes: `af post URL @data.json > data.json`.
///
/// The shell opens the redirection's file, emptying it, before af starts, so what af was to
/// send is gone by then: the request went out with an empty body, exit 0, and `af batch
/// lines.txt > lines.txt` said its input held no requests. `af batch - < f >> f` would read
/// its own outputs as more lines. `-c` moved the file it was also to send aside as its
/// `.part`, and then said the file did not exist. Refused before anything is read or sent, as
/// cat refuses an input file that is its output file. A file sent and appended to (`@ci.log
/// >> ci.log`) is read before the response is written, and is left alone.
enum InputIsOutput {
    /// A regular file af writes to.
    fileprivate struct Destination {
        enum Kind {
            /// Standard output (1) or error (2), open as `descriptor`; `emptied` when the shell
            /// opened it with `>` (not `>>`) and it is empty now.
            case stream(Int32, descriptor: Int32, emptied: Bool)
            /// The existing file `-o` names, which af would refuse to replace or, with `-c`,
            /// resume into.
            case output(String, resumed: Bool)
        }

        let kind: Kind
        let device: UInt
        let inode: UInt

        init(_ kind: Kind, _ info: stat) {
            self.kind = kind
            device = UInt(info.st_dev)
            inode = UInt(info.st_ino)
        }

        func isFile(_ info: stat) -> Bool {
            UInt(info.st_dev) == device && UInt(info.st_ino) == inode
        }
    }

    /// Refuses any file `items` read that is also a destination. An item's `-` has become
    /// standard input's `/proc/self/fd/N` (`StandardInputItems`) by now, which names the file
    /// the shell redirected.
    static func check(_ items: [SourcedItem], settings: Settings, environment: Environment) throws(CommandFailure) {
        let read = items.compactMap { item -> (path: String, item: SourcedItem)? in
            if case .bodyFile(let path) = item.item { return path == "-" ? nil : (path, item) }
            return StandardInputItems.path(of: item.item).map { ($0, item) }
        }
        guard !read.isEmpty else { return }
        let destinations = destinations(environment: environment, settings: settings, appended: false)
        guard !destinations.isEmpty else { return }
        for (path, item) in read {
            guard let destination = destinations.writing(regularFile(path)) else { continue }
            let standardInput = path.hasPrefix("/proc/self/fd/")
            let file = standardInput ? "standard input" : "'\(Quote.argument(path))'"
            throw refusal("\(file) (from '\(Quote.argument(item.argument))')", is: destination, shownAs: standardInput ? nil : path, left: "to send")
        }
    }

    /// Refuses standard input read as the body (`@-`, or a redirected file and no body items:
    /// `af post URL < f > f`) when it is a destination's file.
    static func checkStandardInput(reader: String?, settings: Settings, environment: Environment) throws(CommandFailure) {
        guard let destination = destinations(environment: environment, settings: settings, appended: false)
            .writing(regularFile(descriptor: environment.stdin)) else { return }
        let what = reader.map { "standard input (from '\(Quote.argument($0))')" } ?? "standard input, the body,"
        throw refusal(what, is: destination, shownAs: nil, left: "to send")
    }

    /// Refuses the session file (`option` is `--session` or `--session-read-only`) when the
    /// shell emptied it for standard output or error (`af --session=./s.json URL > s.json`):
    /// it read as a session file that is not JSON, to be fixed or removed.
    static func checkSession(_ path: String, option: String, environment: Environment) throws(CommandFailure) {
        guard let destination = destinations(environment: environment, settings: nil, appended: false).writing(regularFile(path)) else { return }
        throw refusal("the session file '\(Quote.argument(path))' (\(option))", is: destination, shownAs: path, left: "to use")
    }

    /// Refuses the lines of `af batch FILE` (or `-`, standard input) when they are standard
    /// output's or standard error's file: emptied, or, streamed, appended to as they are read.
    static func checkBatchLines(_ name: String, environment: Environment) throws(CommandFailure) {
        let standardInput = name == "-"
        guard let destination = destinations(environment: environment, settings: nil, appended: standardInput)
            .writing(standardInput ? regularFile(descriptor: environment.stdin) : regularFile(name)) else { return }
        let what = standardInput ? "standard input, which af batch - reads its lines from," : "the batch file '\(Quote.argument(name))'"
        throw refusal(what, is: destination, shownAs: standardInput ? nil : name, left: "to run")
    }

    /// The one-line refusal: `what` is also `destination`'s file (`path`, when known, as the
    /// user named it), and what that means.
    private static func refusal(_ what: String, is destination: Destination, shownAs path: String?, left: String) -> CommandFailure {
        switch destination.kind {
        case .stream(let number, let fd, let emptied):
            let stream = number == 1 ? "standard output" : "standard error"
            let redirect = number == 1 ? ">" : "2>"
            let file = Quote.shellWord(path ?? FileIO.resolvedPath("/proc/self/fd/\(fd)") ?? "FILE")
            let consequence = emptied
                ? "the shell emptied that file before af started (\(redirect) \(file)), so nothing of it is left \(left)"
                : "af would read what it writes there as more lines"
            return .usage("\(what) is also \(stream): \(consequence); send \(stream) to another file")
        case .output(let output, let resumed):
            let name = Quote.argument(output)
            let advice = resumed
                ? "-c cannot resume a download into the file it sends; give -o another file"
                : "give --overwrite to replace it with the response once it has come, or -o another file"
            return CommandFailure("\(what) is also the output file (-o \(name)): \(advice)", exitCode: ExitStatus.output)
        }
    }

    /// Standard output and error when the shell emptied their file (or, with `appended`, when
    /// they are any regular file), and the existing file `-o` names unless `--overwrite` lets
    /// the response replace it once it has come (`af post URL @f -o f --overwrite` means
    /// that) or it is a descriptor (`-o /dev/stdout`).
    private static func destinations(environment: Environment, settings: Settings?, appended: Bool) -> [Destination] {
        var found: [Destination] = []
        for (fd, number) in [(environment.stdout, Int32(1)), (environment.stderr, Int32(2))] {
            guard let info = regularFile(descriptor: fd) else { continue }
            let emptied = fcntl(fd, F_GETFL) & O_APPEND == 0 && info.st_size == 0
            if emptied || appended { found.append(Destination(.stream(number, descriptor: fd, emptied: emptied), info)) }
        }
        if let settings, let output = settings.output, settings.outputStream == nil, !settings.overwrite || settings.resume,
           let info = regularFile(DownloadSink.path(of: output, in: settings.outputDir ?? ".")) {
            found.append(Destination(.output(output, resumed: settings.resume), info))
        }
        return found
    }

    /// The status of the regular file at `path`; nil for anything else, or nothing there.
    private static func regularFile(_ path: String) -> stat? {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG ? info : nil
    }

    private static func regularFile(descriptor fd: Int32) -> stat? {
        var info = stat()
        return fd >= 0 && fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG ? info : nil
    }
}

extension [InputIsOutput.Destination] {
    /// The destination that writes to the regular file `info` describes; nil for none (or no file).
    fileprivate func writing(_ info: stat?) -> InputIsOutput.Destination? {
        guard let info else { return nil }
        return first { $0.isFile(info) }
    }
}
