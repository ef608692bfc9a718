@_spi(Locking) import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// The request lines of a batch file, checked whole before the run and then read again as
/// the run needs them, so memory does not grow with the number of lines.
final class FileLines: BatchLineSource, @unchecked Sendable {
    // Used by one thread at a time after `init` (`BatchLineSource`).
    private let reader: LineReader
    let total: Int?
    /// Some line fits any lane (the others are handed to the first lane as they start); a
    /// file of lines that all need the first lane keeps to it.
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
        var fitting = false
        var kept: [(line: Int, planned: PlannedLine?, expansion: String?)] = []
        var keptBytes = 0
        do throws(CommandFailure) {
            while let text = try checker.nextCommand() {
                do throws(CommandFailure) {
                    guard let (words, expansion) = try LinePlanner.split(text) else { continue }
                    count += 1
                    let planned = try planner.prepare(words)
                    fitting = fitting || planned.fitsAnyLane
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

    func next(lane: Int) -> (line: BatchLine?, ended: Bool) {
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

/// Lines streamed on standard input (`af batch -`), read on the first lane's thread as they
/// arrive: its session watches the descriptor while fewer than `capacity` lines wait to
/// start, and stops watching while that many do, so that a faster writer blocks on a full
/// pipe instead of filling memory. No thread of its own: one cost every line a hand-over (a
/// lock, a semaphore, a wake-up of the lane's thread). Any lane takes the lines waiting;
/// only the first reads (the descriptor, its watch and the reader are that thread's), so
/// another lane that finds too few waiting where the first stopped reading for want of room
/// asks it to read on (`asksRefill`) instead of reading itself.
final class StreamedLines: BatchLineSource, @unchecked Sendable {
    let total: Int? = nil
    /// Lines are checked as they are taken instead (`BatchRunner` hands a line that needs the
    /// first lane to it).
    let fitsLanes = true
    private let capacity: Int

    /// What any lane touches, under a lock: lines split but not started, from `head` on.
    private struct Queue: Sendable {
        var waiting: [BatchLine] = []
        var head = 0
        /// The input ended (or could not be read) and every line of it is in `waiting`.
        var ended = false
        /// The first lane stopped reading with `capacity` lines waiting: it reads on when
        /// it takes a line itself, or when another lane that took some asks it to.
        var full = false
        /// Another lane asked the first to read more, which it has not done yet.
        var refillAsked = false
        var count: Int { waiting.count - head }
    }
    private let queue = Protected(Queue())

    // Confined to the first lane's thread.
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
            NoticeTimer.shared.run(after: notice.seconds) {
                guard !heard.value else { return }
                notice.write("nothing has come on \(name) in \(Format.seconds(notice.seconds)); af batch - reads its lines there until it ends")
            }
        }
        take()
    }

    /// The next line waiting. On the first lane (`lane` 0) it first reads on where reading
    /// stopped for want of room (while it watches the descriptor, what arrives is read as it
    /// comes); another lane asks the first to, once until it has.
    func next(lane: Int) -> (line: BatchLine?, ended: Bool) {
        if lane == 0, !watching { take() }
        let (line, ended, refill) = queue.write { queue -> (BatchLine?, Bool, Bool) in
            guard queue.head < queue.waiting.count else { return (nil, queue.ended, Self.asksRefill(&queue, lane: lane, capacity: capacity)) }
            let line = queue.waiting[queue.head]
            queue.head += 1
            // Lines handed out are let go of: all at once when none waits, else in runs of
            // `capacity` (a steady stream may never leave `waiting` empty).
            if queue.head == queue.waiting.count {
                queue.waiting.removeAll(keepingCapacity: true)
                queue.head = 0
            } else if queue.head >= capacity {
                queue.waiting.removeFirst(queue.head)
                queue.head = 0
            }
            return (line, false, Self.asksRefill(&queue, lane: lane, capacity: capacity))
        }
        if refill, let session {
            session.async { [self] in
                queue.write { $0.refillAsked = false }
                take()
                arrived?()
            }
        }
        return (line, ended)
    }

    /// Whether a lane but the first, having found half of `capacity` lines waiting or fewer
    /// where the first lane stopped reading for want of room, should ask it to read more (once
    /// until it has: not a message for every line taken). While the first lane waits for the
    /// input (it watches the descriptor) there is nothing to ask.
    private static func asksRefill(_ queue: inout Queue, lane: Int, capacity: Int) -> Bool {
        guard lane != 0, queue.full, !queue.refillAsked, queue.count <= capacity / 2 else { return false }
        queue.refillAsked = true
        return true
    }

    /// How many lines are held, handed out or not (for tests: it stays bounded).
    var held: Int { queue.read { $0.waiting.count } }

    /// The descriptor is ready: one read, then whatever lines it completed.
    func readable() {
        guard let reader else { return }
        heard.write { $0 = true }
        do throws(CommandFailure) {
            try reader.readReady()
        } catch {
            // A read error ends the input. It fails the line it cut off, so that the run says
            // so and exits 66 (a directory or a closed standard input, say), unless a signal
            // stopped the read: the run's interruption speaks for that.
            if error.exitCode < 128 {
                let line = BatchLine(number: reader.nextCommandLineNumber, content: .failure(error))
                queue.write { $0.waiting.append(line) }
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
        guard let reader else { return }
        // Room is looked for under the lock that marks the queue full (with the line just
        // added, one lock a line), so that a lane taking a line either makes room before the
        // look or finds the mark after it.
        var room = queue.write { queue in Self.markRoom(&queue, capacity: capacity) }
        while room {
            let line: BatchLine
            var ends = false
            do throws(CommandFailure) {
                switch try reader.availableCommand() {
                case .later:
                    watch(true)
                    return
                case .end:
                    finish()
                    return
                case .command(let text):
                    // A blank line or a comment takes no room.
                    guard let (words, expansion) = try LinePlanner.split(text) else { continue }
                    line = BatchLine(number: reader.commandLineNumber, content: .words(words), expansion: expansion)
                }
            } catch {
                // A bad line (too long, not UTF-8, badly quoted) fails that line only, unless
                // it is the first and says the input is no text (`LineReader.endsInput`).
                ends = reader.endsInput
                var failure = error
                if ends { failure.message += "; af reads no further lines of \(reader.name)" }
                line = BatchLine(number: reader.commandLineNumber, content: .failure(failure))
            }
            room = queue.write { queue in
                queue.waiting.append(line)
                return Self.markRoom(&queue, capacity: capacity)
            }
            if ends {
                finish()
                return
            }
        }
        watch(false)
    }

    /// Marks the queue full when `capacity` lines wait; whether there is room for another.
    private static func markRoom(_ queue: inout Queue, capacity: Int) -> Bool {
        queue.full = queue.count >= capacity
        return !queue.full
    }

    private func finish() {
        watch(false)
        reader = nil
        queue.write { $0.ended = true }
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
