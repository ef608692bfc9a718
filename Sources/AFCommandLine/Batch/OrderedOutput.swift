@_spi(Locking) import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Standard output of `af batch`, in line order however requests finish.
///
/// The earliest request not yet printed writes straight to standard output. Every later one
/// writes to a channel that holds up to `heldLimit` bytes in memory while the request runs,
/// like any output buffer; when it ends, a request that is by then the earliest is printed
/// from memory, and any other moves its output to a shared, unlinked temporary file
/// (`SpoolLog`), copied out once everything before it is out (by value: its stretch of the
/// file is written over by later outputs as soon as it is printed; `OutputChannel.copy`). An
/// output that outgrows memory while its request runs moves to a temporary file of its own,
/// since it is still being written. Output that waits for earlier lines therefore waits in
/// files, not memory, and an interrupted run leaves nothing behind. Files of the second kind
/// are reused: each request writes after what the previous one left, and a file is emptied
/// only once it has grown large (truncating costs the file system more than writing on).
/// With `inCompletionOrder` (`--report=json`) every request writes straight out.
final class OrderedOutput: Sendable {
    private enum Slot: Sendable {
        /// Writing straight to standard output.
        case direct
        /// Writing to a held channel.
        case running(OutputChannel)
        /// Finished; what is left to print (nothing when it went out directly).
        case done(SpoolRegion?, [UInt8])
        /// Finished, and waiting in the spool log.
        case logged(SpoolLog.Region)
        /// Nothing to print (a bad line, a cancelled request).
        case skipped
    }

    private struct State: Sendable {
        /// The sequence number printed next.
        var next = 0
        var slots: [Int: Slot] = [:]
        /// Temporary files ready for another request, with the length of what they hold.
        var spare: [SpoolRegion] = []
        /// Finished outputs waiting for earlier lines.
        var log = SpoolLog()
        /// A thread is printing finished outputs (`printReady`); one that finishes meanwhile
        /// leaves its output to it.
        var printerBusy = false
    }

    /// The block a copy goes through when the kernel cannot copy by itself.
    private final class CopyBuffer: @unchecked Sendable {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        deinit { bytes.deallocate() }
    }

    /// What a running request's output may hold in memory before it moves to a file: the
    /// output of most API calls, and at most `--parallel` times this in all.
    static let heldLimit = 32 * 1024
    /// Spare files kept for reuse; more are closed.
    private static let spareLimit = 64
    /// A reused file is emptied once it holds this much.
    private static let spoolLimit: Int64 = 4 << 20

    let stdout: OutputChannel
    let temporaryDirectory: String
    let inCompletionOrder: Bool
    private let state = Protected(State())
    /// The block copies go through, held while finished outputs are printed: lanes finish
    /// lines on their own threads, and one prints at a time.
    private let printing = Locked(CopyBuffer())

    init(stdout: OutputChannel, temporaryDirectory: String, inCompletionOrder: Bool) {
        self.stdout = stdout
        self.temporaryDirectory = temporaryDirectory
        self.inCompletionOrder = inCompletionOrder
    }

    deinit {
        state.read { state in
            for spool in state.spare { close(spool.fd) }
            state.log.close()
        }
    }

    /// The sequence number that must print before any later one.
    var nextToPrint: Int { state.read { $0.next } }

    /// Where request `sequence` writes its standard output.
    func channel(for sequence: Int) -> OutputChannel {
        if inCompletionOrder { return stdout }
        let direct = state.write { state -> Bool in
            guard state.next == sequence else { return false }
            state.slots[sequence] = .direct
            return true
        }
        if direct { return stdout }
        let channel = OutputChannel(holdingUpTo: Self.heldLimit, isTerminal: stdout.isTerminal) { [weak self] in
            guard let self else { return .failure(OutputChannel.closedError) }
            return self.takeFile()
        }
        state.write { $0.slots[sequence] = .running(channel) }
        return channel
    }

    /// A temporary file for output that has to wait: a spare one, or a new one.
    private func takeFile() -> Result<SpoolRegion, AFError> {
        if let spare = state.write({ $0.spare.popLast() }) { return .success(spare) }
        switch FileIO.makeUnnamedFile(in: temporaryDirectory, prefix: "af-batch") {
        case .success(let fd):
            return .success(SpoolRegion(fd: fd, start: 0))
        case .failure(let failure):
            return .failure(.output(OutputFailure(kind: .writeFailed, message: failure.temporaryFileMessage(in: temporaryDirectory, "for the output of a later line"))))
        }
    }

    /// Request `sequence` has written everything; prints what is now in order.
    func finish(_ sequence: Int) {
        let (channel, isNext) = state.read { state -> (OutputChannel?, Bool) in
            guard case .running(let channel) = state.slots[sequence] else { return (nil, false) }
            return (channel, state.next == sequence)
        }
        if let channel {
            let (file, bytes, lost) = channel.release()
            if lost, let file { recycle(file.fd) }
            let slot: Slot
            if lost {
                slot = .done(nil, [])
            } else if !isNext, file == nil, !bytes.isEmpty {
                // Output that has to wait for earlier lines waits in a file. Should no file
                // be had, it stays in memory (no more than the held limit).
                slot = spool(bytes).map(Slot.logged) ?? .done(nil, bytes)
            } else {
                slot = .done(file, bytes)
            }
            state.write { $0.slots[sequence] = slot }
        } else {
            state.write { state in
                if case .direct = state.slots[sequence] { state.slots[sequence] = .done(nil, []) }
            }
        }
        printReady()
    }

    /// Writes a finished output into the spool log; nil when it could not be.
    private func spool(_ bytes: [UInt8]) -> SpoolLog.Region? {
        guard let reservation = state.write({ $0.log.reserve(bytes.count, makeFile: makeLogFile) }) else { return nil }
        guard SpoolLog.write(bytes, to: reservation) else {
            state.write { $0.log.release(reservation.region) }
            return nil
        }
        return reservation.region
    }

    /// A new file for the spool log, or nil (the output then waits in memory).
    private func makeLogFile() -> Int32? {
        try? FileIO.makeUnnamedFile(in: temporaryDirectory, prefix: "af-batch").get()
    }

    /// Request `sequence` prints nothing.
    func skip(_ sequence: Int) {
        let abandoned = state.write { state -> OutputChannel? in
            defer { state.slots[sequence] = .skipped }
            if case .running(let channel) = state.slots[sequence] { return channel }
            return nil
        }
        if let file = abandoned?.release().file { recycle(file.fd) }
        printReady()
    }

    /// At the end of an interrupted run: prints every finished output in line order, past
    /// the gaps of requests that never finished.
    func printFinished() {
        let remaining = state.write { state -> [(Int, Slot)] in
            defer { state.slots.removeAll() }
            return state.slots.sorted { $0.key < $1.key }
        }
        printing.withLock { buffer in
            for (_, slot) in remaining {
                switch slot {
                case .done(let file, let bytes): print(file, bytes, through: buffer)
                case .logged(let region): print(region, through: buffer)
                case .running(let channel): if let file = channel.release().file { recycle(file.fd) }
                case .direct, .skipped: break
                }
            }
        }
    }

    /// Prints the finished outputs that are next in line order. `next` moves past an output
    /// only once it is out, so that a request starting meanwhile on another lane's thread
    /// writes straight to standard output only after it.
    ///
    /// One thread prints at a time. A lane that finishes a request while another lane's
    /// thread is printing does not wait for it (its own transfers would stall behind that
    /// thread's writes): it leaves the output to that thread, which looks for the next one
    /// under the same lock as it gives up printing, so nothing ready is left behind. The lane
    /// that prints calls `lineEnded` after it, which restarts lanes held back by the window.
    private func printReady() {
        let claimed = state.write { state -> Bool in
            guard !state.printerBusy else { return false }
            state.printerBusy = true
            return true
        }
        guard claimed else { return }
        printing.withLock { buffer in
            while true {
                let ready = state.write { state -> Slot? in
                    let slot = state.slots[state.next]
                    switch slot {
                    case .done, .logged, .skipped:
                        return slot
                    case .direct, .running, nil:
                        state.printerBusy = false
                        return nil
                    }
                }
                switch ready {
                case .done(let file, let bytes): print(file, bytes, through: buffer)
                case .logged(let region): print(region, through: buffer)
                case .skipped: break
                case .direct, .running, nil: return
                }
                state.write { state in
                    state.slots[state.next] = nil
                    state.next += 1
                }
            }
        }
    }

    /// Prints a finished request's output from the spool log, whose stretch is then free.
    private func print(_ region: SpoolLog.Region, through buffer: CopyBuffer) {
        let fd = state.read { $0.log.descriptor(of: region) }
        try? stdout.copy(from: fd, offset: region.offset, count: region.count, buffer: buffer.bytes)
        state.write { $0.log.release(region) }
    }

    /// Prints a finished request's output: its part of a temporary file (the file is then
    /// put aside for reuse), then what it held in memory.
    private func print(_ file: SpoolRegion?, _ bytes: [UInt8], through buffer: CopyBuffer) {
        if let file {
            let end = Int64(lseek(file.fd, 0, SEEK_CUR))
            if end > file.start {
                try? stdout.copy(from: file.fd, offset: file.start, count: end - file.start, buffer: buffer.bytes)
            }
            recycle(file.fd)
        }
        if !bytes.isEmpty { try? stdout.write(bytes) }
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
            state.spare.append(SpoolRegion(fd: fd, start: end))
            return true
        }
        if !kept { close(fd) }
    }
}
