import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// The request lines of a batch file, checked whole before the run and then read again as
/// the run needs them, so memory does not grow with the number of lines.
final class FileLines: BatchLineSource, @unchecked Sendable {
    // Confined to the driving thread after `init`.
    private let reader: LineReader
    let total: Int?
    /// What the check planned for the first lines, which the run sends without planning them
    /// again; each is dropped as its line starts.
    private var kept: [Int: PlannedLine]
    /// How many lines' plans are kept at most: enough to cover a short batch whole. Later
    /// lines are planned again when they start.
    static let keptLimit = 1_000
    /// The memory kept plans may take, counted as a fixed 4 KiB a plan plus three times its
    /// line's length (a line's text can end up in its settings, its body and what is printed
    /// of it), so that memory stays bounded however long the lines are.
    static let keptBudget = 8 << 20

    /// What keeping a plan is counted as, for a line of `length` bytes.
    static func keptCost(lineLength length: Int) -> Int { 4096 + 3 * length }

    /// Opens `path` (copying it to an unlinked temporary file when it is not a regular file,
    /// so that it can be read twice), checks every line with `planner`, and rewinds.
    init(path: String, planner: LinePlanner, temporaryDirectory: String, keptBudget: Int = FileLines.keptBudget) throws(CommandFailure) {
        var fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw CommandFailure("cannot read the batch file '\(Quote.argument(path))': \(POSIXFailure(code: errno).description)", exitCode: ExitStatus.noInput)
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw CommandFailure("cannot read the batch file '\(Quote.argument(path))': it is a directory", exitCode: ExitStatus.noInput)
        }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        if (info.st_mode & S_IFMT) != S_IFREG {
            fd = try Self.spool(fd, name: path, temporaryDirectory: temporaryDirectory)
        }
        let name = Quote.argument(path)
        let checker = LineReader(fd: fd, name: name)
        var count = 0
        var kept: [Int: PlannedLine] = [:]
        var keptBytes = 0
        do throws(CommandFailure) {
            while let text = try checker.next() {
                do throws(CommandFailure) {
                    guard let words = try LinePlanner.words(text) else { continue }
                    count += 1
                    let planned = try planner.prepare(words)
                    let cost = Self.keptCost(lineLength: text.utf8.count)
                    if planned.isReusable, kept.count < Self.keptLimit, keptBytes + cost <= keptBudget {
                        kept[checker.lineNumber] = planned
                        keptBytes += cost
                    } else {
                        planned.built.body.removeTemporaryFiles()
                    }
                } catch {
                    throw CommandFailure("\(name):\(checker.lineNumber): \(error.message)", exitCode: error.exitCode)
                }
            }
        } catch {
            close(fd)
            throw error
        }
        guard lseek(fd, 0, SEEK_SET) == 0 else {
            close(fd)
            throw CommandFailure("cannot read the batch file '\(name)' again: \(POSIXFailure(code: errno).description)", exitCode: ExitStatus.noInput)
        }
        reader = LineReader(fd: fd, name: name)
        total = count
        self.kept = kept
    }

    deinit { close(reader.fd) }

    func next() -> (line: BatchLine?, ended: Bool) {
        do {
            while let text = try reader.next() {
                // A line the check kept is neither split nor planned again.
                if let planned = kept.removeValue(forKey: reader.lineNumber) {
                    return (BatchLine(number: reader.lineNumber, content: .planned(planned)), false)
                }
                guard let words = try LinePlanner.words(text) else { continue }
                return (BatchLine(number: reader.lineNumber, content: .words(words)), false)
            }
            kept = [:]
            return (nil, true)
        } catch {
            return (BatchLine(number: reader.lineNumber, content: .failure(error)), false)
        }
    }

    /// A copy of a FIFO or device on disk, unlinked at once, so that it can be read twice.
    private static func spool(_ fd: Int32, name: String, temporaryDirectory: String) throws(CommandFailure) -> Int32 {
        defer { close(fd) }
        guard let (path, _) = try StandardInput.spool(fd, temporaryDirectory: temporaryDirectory, source: "the batch file '\(Quote.argument(name))'") else {
            return Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
        defer { unlink(path) }
        let copy = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard copy >= 0 else {
            throw CommandFailure("cannot read back the copy of '\(Quote.argument(name))': \(POSIXFailure(code: errno).description)", exitCode: ExitStatus.output)
        }
        return copy
    }
}

/// Lines streamed on standard input (`af batch -`): a reader thread splits them as they
/// arrive and hands them over, holding at most `capacity` that have not started yet.
final class StreamedLines: BatchLineSource, Sendable {
    private struct State: Sendable {
        var waiting: [BatchLine] = []
        var ended = false
    }

    let total: Int? = nil
    private let state = Protected(State())
    private let space: CountingSemaphore

    init(capacity: Int) {
        space = CountingSemaphore(capacity)
    }

    /// Starts the reader thread; `arrived` runs on the driving thread after each line.
    func start(fd: Int32, name: String, delivery: Session, arrived: @escaping @Sendable () -> Void) {
        let state = state
        let space = space
        BackgroundWork.run {
            let reader = LineReader(fd: fd, name: name)
            while true {
                let line: BatchLine?
                do throws(CommandFailure) {
                    guard let text = try reader.next() else { break }
                    guard let words = try LinePlanner.words(text) else { continue }
                    line = BatchLine(number: reader.lineNumber, content: .words(words))
                } catch {
                    // A read error ends the input; a bad line fails that line only.
                    if error.exitCode == ExitStatus.noInput || error.exitCode >= 128 {
                        break
                    }
                    line = BatchLine(number: reader.lineNumber, content: .failure(error))
                }
                space.wait()
                if let line { state.write { $0.waiting.append(line) } }
                delivery.async(arrived)
            }
            state.write { $0.ended = true }
            delivery.async(arrived)
        }
    }

    func next() -> (line: BatchLine?, ended: Bool) {
        let (line, ended) = state.write { state -> (BatchLine?, Bool) in
            if state.waiting.isEmpty { return (nil, state.ended) }
            return (state.waiting.removeFirst(), false)
        }
        if line != nil { space.signal() }
        return (line, ended)
    }
}
