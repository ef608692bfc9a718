import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Reads text lines from a descriptor in large blocks — blocking, or only when a caller's loop
/// finds it ready (`readReady()`, `availableCommand()`); a line may not exceed
/// `maximumLength` bytes (a batch line is one command line, not a body).
final class LineReader {
    static let maximumLength = 1 << 20
    let fd: Int32
    /// Names the input in messages.
    let name: String
    /// Whether a bad line's message starts with where it is (`FILE:LINE: `); `af batch -`
    /// names the line its own way (`af: line 17: error: …`).
    private let locates: Bool
    private var buffer: [UInt8] = []
    /// Where each `read` lands: 64 KiB, never cleared.
    private let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private var start = 0
    private var ended = false
    /// Dropping what is left of a line that was too long, up to its line break.
    private var skipping = false
    /// The number of the line `next()` returned last (1-based).
    private(set) var lineNumber = 0
    /// Whether the last error says the input is no text of command lines: its first line is
    /// longer than `maximumLength` or is not UTF-8 text (binary data, a program, another
    /// encoding). A reader that carries on after a bad line (`af batch -`) stops there
    /// instead: it would read input with no line break (`/dev/zero`) for ever, and run
    /// whatever chance words binary data holds between its line feeds as requests.
    private(set) var endsInput = false
    /// The number of the first line of the command line `nextCommand()` returned last.
    private(set) var commandLineNumber = 0
    /// The number of the first line of the command line `availableCommand()` returns next
    /// (the one it has begun, if any).
    var nextCommandLineNumber: Int { pending == nil ? lineNumber + 1 : commandLineNumber }
    /// A command line read up to a line break it goes on past, with the quoting carried past
    /// its last line, when the rest had not been read yet (`availableCommand()`).
    private var pending: (text: String, carry: ShellWords.Carry)?
    /// Where every block read is also written, with what to say when that fails.
    typealias Copy = (fd: Int32, failure: @Sendable (POSIXFailure) -> CommandFailure)
    private let copy: Copy?
    /// Keeps the copy from filling its file system.
    private var room = TemporaryRoom()

    /// A reader of `fd`. With `copy`, every byte read is also written to `copy.fd` as it is
    /// read, so that input that cannot be read twice (a pipe) is kept only as far as it was
    /// checked: a bad line stops the copy there.
    init(fd: Int32, name: String, copy: Copy? = nil, locates: Bool = true) {
        self.locates = locates
        self.fd = fd
        self.name = name
        self.copy = copy
    }

    deinit { block.deallocate() }

    /// The next line without its line break, or nil at the end of the input. A line longer
    /// than `maximumLength` is an error for that line; the next call goes on after it, so
    /// a reader that reports it and carries on (`af batch -`) does not see it again.
    func next() throws(CommandFailure) -> String? {
        while true {
            switch try step() {
            case .line(let text): return text
            case .end: return nil
            case .more: try fill()
            }
        }
    }

    /// What the input read so far holds next.
    private enum Step {
        case line(String)
        /// Nothing complete yet: more must be read.
        case more
        case end
    }

    /// The next line of what has been read, without reading.
    private func step() throws(CommandFailure) -> Step {
        while true {
            if let newline = Self.newline(in: buffer, from: start) {
                defer { start = newline + 1 }
                if skipping {
                    skipping = false
                    continue
                }
                lineNumber += 1
                return .line(try text(buffer[start..<newline]))
            }
            if skipping {
                // The rest of a line too long to keep: dropped as it arrives.
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if buffer.count - start > Self.maximumLength {
                lineNumber += 1
                skipping = true
                endsInput = lineNumber == 1
                buffer.removeAll(keepingCapacity: true)
                start = 0
                throw .usage("\(location(lineNumber))the line is longer than 1 MiB; one line holds one af command line")
            }
            guard ended else { return .more }
            guard start < buffer.count else { return .end }
            defer { start = buffer.count }
            lineNumber += 1
            return .line(try text(buffer[start...]))
        }
    }

    /// The index of the first line feed in `buffer` at or after `start` (`memchr`: a batch
    /// file is mostly short lines, each looked through once).
    private static func newline(in buffer: [UInt8], from start: Int) -> Int? {
        buffer.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, start < bytes.count,
                  let found = memchr(base + start, 10, bytes.count - start) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// The next command line, or nil at the end of the input: a line, joined with the next
    /// as a shell joins them while it ends with a backslash before its line break.
    /// `commandLineNumber` names its first line.
    func nextCommand() throws(CommandFailure) -> String? {
        while true {
            switch try availableCommand() {
            case .command(let text): return text
            case .end: return nil
            case .later: try fill()
            }
        }
    }

    /// What `availableCommand()` found.
    enum Available: Equatable {
        case command(String)
        /// The input read so far ends before a command line does: more must be read first
        /// (`readReady()` when the caller's loop finds the descriptor ready).
        case later
        case end
    }

    /// The next command line of what has been read, without reading (for input read only
    /// when it is ready, `af batch -`). A command line whose end has not arrived yet is kept
    /// as far as it goes and finished by a later call, so each line is read once however
    /// the input is cut into reads.
    func availableCommand() throws(CommandFailure) -> Available {
        var text: String
        var carry: ShellWords.Carry
        if let pending {
            (text, carry) = pending
            self.pending = nil
        } else {
            // Set first: a line that fails to be read (too long, not UTF-8) is this command line.
            commandLineNumber = lineNumber + 1
            switch try step() {
            case .line(let first): text = first
            case .more: return .later
            case .end: return .end
            }
            carry = ShellWords.Carry()
            guard ShellWords.continues(text, from: &carry) else { return .command(text) }
        }
        // `text` goes on past its line break.
        while true {
            switch try step() {
            case .line(let more):
                text += "\n" + more
                if text.utf8.count > Self.maximumLength {
                    throw .usage("\(location(commandLineNumber))the command line that starts here is longer than 1 MiB")
                }
                guard ShellWords.continues(more, from: &carry) else { return .command(text) }
            case .end:
                return .command(text)
            case .more:
                pending = (text, carry)
                return .later
            }
        }
    }

    /// How a bad line's message begins: `FILE:LINE: `, or nothing.
    private func location(_ line: Int) -> String {
        locates ? "\(name):\(line): " : ""
    }

    /// A line's text; the first without a byte order mark. A line that is not UTF-8 is an
    /// error for that line, as an argument would be; for the first, of the input
    /// (`endsInput`).
    private func text(_ bytes: ArraySlice<UInt8>) throws(CommandFailure) -> String {
        let content = lineNumber == 1 ? FileReading.withoutByteOrderMark(bytes) : bytes
        // A throw below for the first line says the input is no UTF-8 text.
        endsInput = lineNumber == 1
        // A file saved as UTF-16, a program or an archive given by mistake: its first line,
        // quoted, would be a wall of escapes that says less than this.
        if lineNumber == 1 {
            if let problem = FileReading.TextProblem(content), problem.encoding != nil {
                throw .usage("\(location(1))the file is \(problem.what); \(problem.advice)")
            }
            // One NUL is a slip in a line (LinePlanner names it); text has no more.
            if let first = content.firstIndex(of: 0), content[(first + 1)...].contains(0) {
                throw .usage("\(location(1))the line has NUL bytes, so this is no UTF-8 text file of command lines (UTF-16 text, a program, an archive?); af batch reads one af command line per line of UTF-8 text")
            }
        }
        if let shown = Quote.invalidUTF8(content) {
            // Quoted with its bytes shown, unless it holds a credential (a password's Latin-1
            // letter is such a byte): then where the first of them is.
            if Self.holdsCredential(shown) {
                throw .usage("\(location(lineNumber))the line (not shown: it holds a credential) has a byte that is not UTF-8 at column \(Self.firstInvalidColumn(content)); af reads its lines as UTF-8")
            }
            throw .usage("\(location(lineNumber))the line '\(Quote.argument(shown))' is not UTF-8 text; af reads its lines as UTF-8")
        }
        endsInput = false
        return String(decoding: content, as: UTF8.self)
    }

    /// Whether a line's words, split at blanks, give a secret option's value (`-a`, `--auth=`,
    /// a cluster with `a`) or a credential header (`Authorization:`, `Cookie:`): what a
    /// message must not quote. A URL's password needs no care: quoting hides it.
    static func holdsCredential(_ text: String) -> Bool {
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            let bare = word.drop { $0 == "'" || $0 == "\"" }
            if bare.hasPrefix("--") {
                let name = String(bare.dropFirst(2).prefix { $0 != "=" })
                if let spec = OptionTable.option(long: name), OptionTable.secretOptions.contains(spec.id) { return true }
            } else if bare.hasPrefix("-") {
                if ParsedArguments.clusterEndsInSecret(bare.dropFirst()) { return true }
            } else if bare.contains(":"), let name = (try? RequestItemParser.parse(String(bare)))?.item.headerName,
                      CredentialRedaction.isCredential(HTTPHeaders.Name(name), secretHeaders: []) {
                return true
            }
        }
        return false
    }

    /// The column (in characters, from 1) of a line's first byte that is not UTF-8.
    static func firstInvalidColumn(_ bytes: some Collection<UInt8>) -> Int {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var column = 1
        while case .valid = parser.parseScalar(from: &iterator) { column += 1 }
        return column
    }

    /// Reads what has arrived, waiting until something has (or the input ends).
    private func fill() throws(CommandFailure) {
        try read(ready: false)
    }

    /// Reads once, for a descriptor the caller's loop found ready (`af batch -` reads on
    /// the session's loop, not on a thread of its own). A descriptor that turns out to have
    /// nothing after all (non-blocking standard input another reader emptied) is left for
    /// its next readiness.
    func readReady() throws(CommandFailure) {
        try read(ready: true)
    }

    private func read(ready: Bool) throws(CommandFailure) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        // Read into a block of its own and append only what arrived: growing `buffer` by a
        // zeroed block first would clear 64 KiB (and touch 16 fresh pages) for every read,
        // which for `af batch -` is one read per line that arrives.
        while true {
            let count = Glibc.read(fd, block.baseAddress, block.count)
            if count >= 0 {
                if let copy, count > 0 {
                    let code = FileIO.writeAll(copy.fd, UnsafeRawBufferPointer(rebasing: block[..<count]), keeping: &room)
                    if code != 0 { throw copy.failure(POSIXFailure(code: code)) }
                }
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: block[..<count]))
                if count == 0 { ended = true }
                return
            }
            let code = errno
            if code == EINTR {
                if let failure = CommandFailure.interrupted(whileReading: name) { throw failure }
                continue
            }
            if ready, code == EAGAIN || code == EWOULDBLOCK { return }
            // A descriptor af was started without is held open write-only (CStartup), so
            // reading it fails this way: say what the shell did.
            if code == EBADF {
                throw CommandFailure("cannot read \(name): it was closed when af started (as <&- does); give the lines in a FILE or on a pipe", exitCode: ExitStatus.noInput)
            }
            throw CommandFailure("cannot read \(name): \(POSIXFailure(code: code).description)", exitCode: ExitStatus.noInput)
        }
    }
}
