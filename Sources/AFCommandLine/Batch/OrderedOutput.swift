import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Standard output of `af batch`, in line order however requests finish.
///
/// The earliest request not yet printed writes straight to standard output; every later
/// one writes to an unlinked temporary file, copied out (by the kernel, `sendfile`) once
/// everything before it is out. Files, not memory, hold the waiting output, and an
/// interrupted run leaves nothing behind. Files are reused: each request writes after what
/// the previous one left, and a file is emptied only once it has grown large (truncating
/// costs the file system more than writing on). With `inCompletionOrder` (`--report=json`)
/// every request writes straight out.
final class OrderedOutput: Sendable {
    /// A temporary file and where a request's output starts in it.
    private struct Spool: Sendable {
        let fd: Int32
        let start: Int64
    }

    private enum Slot: Sendable {
        /// Writing to a temporary file, or (nil) straight to standard output.
        case running(Spool?)
        case done(Spool?)
        /// Nothing to print (a bad line, a cancelled request).
        case skipped
    }

    private struct State: Sendable {
        /// The sequence number printed next.
        var next = 0
        var slots: [Int: Slot] = [:]
        /// Temporary files ready for another request, with the length of what they hold.
        var spare: [Spool] = []
    }

    /// The block a copy goes through when the kernel cannot copy by itself.
    private final class CopyBuffer: @unchecked Sendable {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        deinit { bytes.deallocate() }
    }

    /// Spare files kept for reuse; more are closed.
    private static let spareLimit = 64
    /// A reused file is emptied once it holds this much.
    private static let spoolLimit: Int64 = 4 << 20

    let stdout: OutputChannel
    let temporaryDirectory: String
    let inCompletionOrder: Bool
    private let state = Protected(State())
    private let buffer = CopyBuffer()

    init(stdout: OutputChannel, temporaryDirectory: String, inCompletionOrder: Bool) {
        self.stdout = stdout
        self.temporaryDirectory = temporaryDirectory
        self.inCompletionOrder = inCompletionOrder
    }

    deinit {
        for spool in state.read({ $0.spare }) { close(spool.fd) }
    }

    /// The sequence number that must print before any later one.
    var nextToPrint: Int { state.read { $0.next } }

    /// Where request `sequence` writes its standard output.
    func channel(for sequence: Int) throws(CommandFailure) -> OutputChannel {
        if inCompletionOrder { return stdout }
        let direct = state.read { $0.next == sequence }
        if direct {
            state.write { $0.slots[sequence] = .running(nil) }
            return stdout
        }
        if let spool = state.write({ $0.spare.popLast() }) {
            state.write { $0.slots[sequence] = .running(spool) }
            return OutputChannel(fd: spool.fd, isTerminal: stdout.isTerminal)
        }
        let (fd, path) = try FileIO.makeTemporaryFile(in: temporaryDirectory, prefix: "af-batch").mapError { failure in
            CommandFailure("cannot create a temporary file in '\(temporaryDirectory)' for the output of a later line: \(failure.description); set TMPDIR to a writable directory", exitCode: ExitStatus.output)
        }.get()
        unlink(path)
        state.write { $0.slots[sequence] = .running(Spool(fd: fd, start: 0)) }
        return OutputChannel(fd: fd, isTerminal: stdout.isTerminal)
    }

    /// Request `sequence` has written everything; prints what is now in order.
    func finish(_ sequence: Int) {
        state.write { state in
            if case .running(let spool) = state.slots[sequence] { state.slots[sequence] = .done(spool) }
        }
        printReady()
    }

    /// Request `sequence` prints nothing.
    func skip(_ sequence: Int) {
        let abandoned = state.write { state -> Spool? in
            defer { state.slots[sequence] = .skipped }
            if case .running(let spool) = state.slots[sequence] { return spool }
            return nil
        }
        if let abandoned { recycle(abandoned.fd) }
        printReady()
    }

    /// At the end of an interrupted run: prints every finished output in line order, past
    /// the gaps of requests that never finished.
    func printFinished() {
        let remaining = state.write { state -> [(Int, Slot)] in
            defer { state.slots.removeAll() }
            return state.slots.sorted { $0.key < $1.key }
        }
        for (_, slot) in remaining {
            switch slot {
            case .done(let spool?): copyOut(spool)
            case .running(let spool?): recycle(spool.fd)
            default: break
            }
        }
    }

    private func printReady() {
        while true {
            let ready = state.write { state -> Spool?? in
                switch state.slots[state.next] {
                case .done(let spool):
                    state.slots[state.next] = nil
                    state.next += 1
                    return .some(spool)
                case .skipped:
                    state.slots[state.next] = nil
                    state.next += 1
                    return .some(nil)
                case .running, nil:
                    return nil
                }
            }
            guard let ready else { return }
            if let spool = ready { copyOut(spool) }
        }
    }

    /// Copies a request's part of its temporary file to standard output and puts the file
    /// aside for reuse.
    private func copyOut(_ spool: Spool) {
        defer { recycle(spool.fd) }
        let end = Int64(lseek(spool.fd, 0, SEEK_CUR))
        guard end > spool.start else { return }
        try? stdout.copy(from: spool.fd, offset: spool.start, count: end - spool.start, buffer: buffer.bytes)
    }

    /// Keeps a temporary file for the next request (emptied when it has grown large), or
    /// closes it when enough are spare.
    private func recycle(_ fd: Int32) {
        var end = Int64(lseek(fd, 0, SEEK_CUR))
        if end < 0 || end > Self.spoolLimit {
            guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
                close(fd)
                return
            }
            end = 0
        }
        let kept = state.write { state -> Bool in
            guard state.spare.count < Self.spareLimit else { return false }
            state.spare.append(Spool(fd: fd, start: end))
            return true
        }
        if !kept { close(fd) }
    }
}
