@_spi(Locking) import AFEngine
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The request lines of a batch file, checked whole before the run and then read again as
/// the run needs them, so memory does not grow with the number of lines.
final class FileLines: BatchLineSource, @unchecked Sendable {
    // Used by one thread at a time after `init` (`BatchLineSource`).
    private let reader: LineReader
    let total: Int?
    let fitsLanes: Bool
    /// What the check planned for the first lines, in line order, which the run sends without
    /// planning them again; each is dropped as its line starts.
    private var kept: [(line: Int, planned: PlannedLine?, expansion: String?)]
    /// The next entry of `kept` to hand out.
    private var nextKept = 0
    /// Every request line's plan was kept: the run takes them from `kept` and does not read
    /// the file again (nor look each line up by its number).
    private let keptEvery: Bool
    /// How many lines' plans are kept at most: enough to cover a short batch whole. Later
    /// lines are planned again when they start.
    static let keptLimit = 1_000
    /// The memory kept plans may take, counted as a fixed 4 KiB a plan plus three times its
    /// line's length (a line's text can end up in its settings, its body and what is printed
    /// of it), so that memory stays bounded however long the lines are.
    static let keptBudget = 8 << 20

    /// What keeping a plan is counted as, for a line of `length` bytes.
    static func keptCost(lineLength length: Int) -> Int { 4096 + 3 * length }

    /// Opens `path`, checks every line with `planner`, and rewinds. Input that is not a
    /// regular file (a FIFO, `<(…)`, a device) is copied to an unlinked temporary file as it
    /// is checked, so that it can be read twice; a bad line — such as the first "line" of
    /// `/dev/zero`, over 1 MiB — ends the copy there.
    init(path: String, planner: LinePlanner, temporaryDirectory: String, keptBudget: Int = FileLines.keptBudget) throws(CommandFailure) {
        let name = Quote.argument(path)
        // A named FIFO is opened as its writer comes (`mkfifo lines; af batch lines & … >
        // lines`): opened without waiting, it read as an empty batch, exit 0, before the
        // writer had a chance.
        var fd: Int32
        switch FileIO.openToRead(path) {
        case .descriptor(let opened):
            fd = opened
        case .failed(let failure):
            // `af batch URL`: a request where the file of command lines goes (a host with a
            // port, `localhost:8080/x`, is no file name anyone types either).
            let looksLikeURL = path.containsBytes(of: "://") || (RequestBuilder.looksLikeURL(path) && path.containsBytes(of: ":"))
            let url = failure.code == ENOENT && looksLikeURL ? "; af batch reads command lines from a file, and 'af \(name)' makes one request" : ""
            throw CommandFailure("cannot read the batch file '\(name)': \(failure.description)\(url)", exitCode: ExitStatus.noInput)
        case .interrupted(let reason):
            throw .interrupted(by: reason, whileReading: "the batch file '\(name)'")
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw CommandFailure("cannot read the batch file '\(name)': it is a directory", exitCode: ExitStatus.noInput)
        }
        var spool: Spool?
        if (info.st_mode & S_IFMT) != S_IFREG {
            do throws(CommandFailure) {
                spool = try Spool(name: name, temporaryDirectory: temporaryDirectory)
            } catch {
                close(fd)
                throw error
            }
        }
        let checker = LineReader(fd: fd, name: name, copy: spool.map { ($0.writer, $0.failure) })
        var count = 0
        var fitting = true
        var kept: [(line: Int, planned: PlannedLine?, expansion: String?)] = []
        var keptBytes = 0
        do throws(CommandFailure) {
            while let text = try checker.nextCommand() {
                do throws(CommandFailure) {
                    guard let (words, expansion) = try LinePlanner.split(text) else { continue }
                    count += 1
                    let planned = try planner.prepare(words)
                    fitting = fitting && planned.fitsAnyLane
                    let cost = Self.keptCost(lineLength: text.utf8.count)
                    if planned.isReusable, kept.count < Self.keptLimit, keptBytes + cost <= keptBudget {
                        kept.append((checker.commandLineNumber, planned, expansion))
                        keptBytes += cost
                    } else {
                        planned.built.body.removeTemporaryFiles()
                    }
                } catch {
                    throw CommandFailure("\(name):\(checker.commandLineNumber): \(error.message)", exitCode: error.exitCode)
                }
            }
        } catch {
            close(fd)
            spool?.close()
            throw error
        }
        if let spool {
            // The input was read to its end and every byte of it copied: from here on the
            // copy is the file.
            close(fd)
            fd = spool.finish()
        }
        guard lseek(fd, 0, SEEK_SET) == 0 else {
            close(fd)
            throw CommandFailure("cannot read the batch file '\(name)' again: \(POSIXFailure(code: errno).description)", exitCode: ExitStatus.noInput)
        }
        reader = LineReader(fd: fd, name: name)
        total = count
        fitsLanes = fitting
        keptEvery = kept.count == count
        self.kept = kept
    }

    deinit { close(reader.fd) }

    func next() -> (line: BatchLine?, ended: Bool) {
        if keptEvery {
            guard let line = takeKept(ifLine: nil) else { return (nil, true) }
            return (line, false)
        }
        do {
            while let text = try reader.nextCommand() {
                // A line the check kept is neither split nor planned again.
                if let line = takeKept(ifLine: reader.commandLineNumber) { return (line, false) }
                guard let (words, expansion) = try LinePlanner.split(text) else { continue }
                return (BatchLine(number: reader.commandLineNumber, content: .words(words), expansion: expansion), false)
            }
            kept = []
            return (nil, true)
        } catch {
            return (BatchLine(number: reader.commandLineNumber, content: .failure(error)), false)
        }
    }

    /// The next kept line (the one numbered `number`, when given), let go of as it is handed out.
    private func takeKept(ifLine number: Int?) -> BatchLine? {
        guard nextKept < kept.count, number == nil || kept[nextKept].line == number,
              let planned = kept[nextKept].planned else { return nil }
        let (line, expansion) = (kept[nextKept].line, kept[nextKept].expansion)
        kept[nextKept].planned = nil
        nextKept += 1
        return BatchLine(number: line, content: .planned(planned), expansion: expansion)
    }

    /// A copy on disk of a batch file that cannot be read twice, unlinked at once: written
    /// through one descriptor while the check reads, read back through another.
    private struct Spool {
        let writer: Int32
        let reader: Int32
        let failure: @Sendable (POSIXFailure) -> CommandFailure

        init(name: String, temporaryDirectory: String) throws(CommandFailure) {
            let (writer, path) = try FileIO.makeTemporaryFile(in: temporaryDirectory, prefix: "af-batch").mapError { failure in
                CommandFailure(failure.temporaryFileMessage(in: temporaryDirectory, "to keep a copy of '\(name)'"), exitCode: ExitStatus.output)
            }.get()
            defer { unlink(path) }
            let reader = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard reader >= 0 else {
                let code = errno
                Glibc.close(writer)
                throw CommandFailure("cannot read back the copy of '\(name)' in \(temporaryDirectory): \(POSIXFailure(code: code).description)", exitCode: ExitStatus.output)
            }
            self.writer = writer
            self.reader = reader
            let directory = temporaryDirectory
            failure = { failure in
                CommandFailure("cannot keep a copy of '\(name)' in \(directory): \(failure.description); set TMPDIR to a roomier directory, or stream endless input with 'af batch -'", exitCode: ExitStatus.output)
            }
        }

        /// The copy, for reading from its start.
        func finish() -> Int32 {
            Glibc.close(writer)
            return reader
        }

        func close() {
            Glibc.close(writer)
            Glibc.close(reader)
        }
    }
}

/// Lines streamed on standard input (`af batch -`), read on the thread of the batch's one
/// lane as they arrive: the session watches the descriptor while fewer than `capacity`
/// lines wait to start, and stops watching while that many do, so that a faster writer
/// blocks on a full pipe instead of filling memory. No thread of its own: one cost every
/// line a hand-over (a lock, a semaphore, a wake-up of the lane's thread) and made the
/// whole run multi-threaded. Not shared among lanes: it reads on that thread as lines are
/// taken.
final class StreamedLines: BatchLineSource, @unchecked Sendable {
    // Confined to the lane's thread.
    let total: Int? = nil
    /// Lines not read yet may need one lane.
    let fitsLanes = false
    private let capacity: Int
    /// Lines split but not started, from `head` on.
    private var waiting: [BatchLine] = []
    private var head = 0
    /// The input ended (or could not be read) and every line of it is in `waiting`.
    private var ended = false
    private var reader: LineReader?
    private var session: Session?
    private var arrived: (@Sendable () -> Void)?
    private var watching = false
    /// Something (a byte, or the end) has come on the descriptor; read by the wait notice.
    private let heard = Protected(false)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// A run that ends (a signal) before its input said anything is told nothing after.
    deinit {
        heard.write { $0 = true }
    }

    /// Starts watching `fd` on `session`, whose loop this thread drives; `arrived` runs after
    /// each read that may have brought lines. With `notice`, an input that gives nothing, not
    /// even its end, for `notice.seconds` gets one line saying af waits for its lines: a CI
    /// step's open standard input would otherwise hold the batch without a word.
    func start(fd: Int32, name: String, session: Session, notice: StandardInput.WaitNotice? = nil, arrived: @escaping @Sendable () -> Void) {
        reader = LineReader(fd: fd, name: name, locates: false)
        self.session = session
        self.arrived = arrived
        if let notice {
            let heard = heard
            DispatchQueue.global().asyncAfter(deadline: .now() + notice.seconds) {
                guard !heard.value else { return }
                notice.write("nothing has come on \(name) in \(Format.seconds(notice.seconds)); af batch - reads its lines there until it ends")
            }
        }
        take()
    }

    func next() -> (line: BatchLine?, ended: Bool) {
        if head == waiting.count { take() }
        guard head < waiting.count else { return (nil, ended) }
        let line = waiting[head]
        head += 1
        // Lines handed out are let go of: all at once when none waits, else in runs of
        // `capacity` (a steady stream may never leave `waiting` empty).
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= capacity {
            waiting.removeFirst(head)
            head = 0
        }
        if !watching { take() }
        return (line, false)
    }

    /// How many lines are held, handed out or not (for tests: it stays bounded).
    var held: Int { waiting.count }

    /// The descriptor is ready: one read, then whatever lines it completed.
    func readable() {
        guard let reader, !ended else { return }
        heard.write { $0 = true }
        do throws(CommandFailure) {
            try reader.readReady()
        } catch {
            // A read error ends the input. It fails the line it cut off, so that the run says
            // so and exits 66 (a directory or a closed standard input, say), unless a signal
            // stopped the read: the run's interruption speaks for that.
            if error.exitCode < 128 {
                waiting.append(BatchLine(number: reader.nextCommandLineNumber, content: .failure(error)))
            }
            finish()
            arrived?()
            return
        }
        take()
        arrived?()
    }

    /// Moves the complete command lines read so far into `waiting`, up to `capacity`, then
    /// watches the descriptor if there is room for more and stops if there is not.
    private func take() {
        guard let reader, !ended else { return }
        while waiting.count - head < capacity {
            do throws(CommandFailure) {
                switch try reader.availableCommand() {
                case .later:
                    watch(true)
                    return
                case .end:
                    finish()
                    return
                case .command(let text):
                    guard let (words, expansion) = try LinePlanner.split(text) else { continue }
                    waiting.append(BatchLine(number: reader.commandLineNumber, content: .words(words), expansion: expansion))
                }
            } catch {
                // A bad line (too long, not UTF-8, badly quoted) fails that line only; nothing
                // here reads, so no error ends the input.
                waiting.append(BatchLine(number: reader.commandLineNumber, content: .failure(error)))
            }
        }
        watch(false)
    }

    private func finish() {
        ended = true
        watch(false)
        reader = nil
    }

    /// Starts or stops watching standard input, unless it already is as `wanted`.
    private func watch(_ wanted: Bool) {
        guard wanted != watching, let session, let fd = reader?.fd else { return }
        watching = wanted
        if wanted {
            session.watch(fileDescriptor: fd) { [weak self] in self?.readable() }
        } else {
            session.stopWatching(fileDescriptor: fd)
        }
    }
}
