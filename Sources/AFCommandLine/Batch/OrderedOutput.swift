import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Standard output of `af batch`, in line order however requests finish.
///
/// The earliest request not yet printed writes straight to standard output; every later
/// one writes to its own unlinked temporary file, copied out once everything before it is
/// out. Files, not memory, hold the waiting output, and an interrupted run leaves nothing
/// behind. With `inCompletionOrder` (`--report=json`) every request writes straight out.
final class OrderedOutput: Sendable {
    private enum Slot: Sendable {
        /// Writing; `fd` is its temporary file, nil when it writes to standard output.
        case running(fd: Int32?)
        case done(fd: Int32?)
        /// Nothing to print (a bad line, a cancelled request).
        case skipped
    }

    private struct State: Sendable {
        /// The sequence number printed next.
        var next = 0
        var slots: [Int: Slot] = [:]
    }

    let stdout: OutputChannel
    let temporaryDirectory: String
    let inCompletionOrder: Bool
    private let state = Protected(State())

    init(stdout: OutputChannel, temporaryDirectory: String, inCompletionOrder: Bool) {
        self.stdout = stdout
        self.temporaryDirectory = temporaryDirectory
        self.inCompletionOrder = inCompletionOrder
    }

    /// The sequence number that must print before any later one.
    var nextToPrint: Int { state.read { $0.next } }

    /// Where request `sequence` writes its standard output.
    func channel(for sequence: Int) throws(CommandFailure) -> OutputChannel {
        if inCompletionOrder { return stdout }
        let direct = state.read { $0.next == sequence }
        if direct {
            state.write { $0.slots[sequence] = .running(fd: nil) }
            return stdout
        }
        let (fd, path) = try FileIO.makeTemporaryFile(in: temporaryDirectory, prefix: "af-batch").mapError { failure in
            CommandFailure("cannot create a temporary file in '\(temporaryDirectory)' for the output of a later line: \(failure.description); set TMPDIR to a writable directory", exitCode: ExitStatus.output)
        }.get()
        unlink(path)
        state.write { $0.slots[sequence] = .running(fd: fd) }
        return OutputChannel(fd: fd, isTerminal: stdout.isTerminal)
    }

    /// Request `sequence` has written everything; prints what is now in order.
    func finish(_ sequence: Int) {
        state.write { state in
            if case .running(let fd) = state.slots[sequence] { state.slots[sequence] = .done(fd: fd) }
        }
        printReady()
    }

    /// Request `sequence` prints nothing.
    func skip(_ sequence: Int) {
        let abandoned = state.write { state -> Int32? in
            defer { state.slots[sequence] = .skipped }
            if case .running(let fd) = state.slots[sequence] { return fd }
            return nil
        }
        if let abandoned { close(abandoned) }
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
            case .done(let fd?): copyOut(fd)
            case .running(let fd?): close(fd)
            default: break
            }
        }
    }

    private func printReady() {
        while true {
            let ready = state.write { state -> Int32?? in
                switch state.slots[state.next] {
                case .done(let fd):
                    state.slots[state.next] = nil
                    state.next += 1
                    return .some(fd)
                case .skipped:
                    state.slots[state.next] = nil
                    state.next += 1
                    return .some(nil)
                case .running, nil:
                    return nil
                }
            }
            guard let ready else { return }
            if let fd = ready { copyOut(fd) }
        }
    }

    /// Copies a temporary file to standard output and closes it.
    private func copyOut(_ fd: Int32) {
        defer { close(fd) }
        guard lseek(fd, 0, SEEK_SET) == 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while !stdout.isClosed {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            let written = buffer.withUnsafeBytes { bytes -> Bool in
                (try? stdout.write(UnsafeRawBufferPointer(rebasing: bytes[..<count]))) != nil
            }
            if !written { return }
        }
    }
}
