import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// A temporary file of `af batch` and where one line's output starts in it.
struct SpoolRegion: Sendable {
    let fd: Int32
    let start: Int64
}

/// The output of a later line of `af batch` while its request runs: up to `limit` bytes in
/// memory, everything in a temporary file (from `takeFile`) once it outgrows that.
///
/// Guarded by its `OutputChannel`'s lock.
struct HeldOutput: Sendable {
    let limit: Int
    /// Supplies the temporary file, when the output needs one.
    let takeFile: @Sendable () -> Result<SpoolRegion, AFError>
    /// What memory holds.
    private var bytes: [UInt8] = []
    /// The file the output moved to.
    private var file: SpoolRegion?
    /// Keeps that file from filling its file system.
    private var room = TemporaryRoom()
    /// Why the output could not move to a file when it outgrew memory: what it held is
    /// dropped (a request's output is whole or absent), and every later write fails.
    private var lost: AFError?
    /// Released: later writes fail.
    private var released = false

    init(limit: Int, takeFile: @escaping @Sendable () -> Result<SpoolRegion, AFError>) {
        self.limit = limit
        self.takeFile = takeFile
    }

    /// Keeps `more`, in memory while it fits.
    mutating func write(_ more: UnsafeRawBufferPointer) -> AFError? {
        if let lost { return lost }
        if released { return OutputChannel.closedError }
        if file == nil, bytes.count + more.count <= limit {
            bytes.append(contentsOf: more)
            return nil
        }
        var failure = move()
        if failure == nil, let file {
            let code = FileIO.writeAll(file.fd, more, keeping: &room)
            if code != 0 { failure = Self.fileError(code) }
        }
        if let failure {
            lost = failure
            bytes = []
        }
        return failure
    }

    /// Ends the output: the file holding its start (nil when nothing moved), what is still in
    /// memory, and whether it was lost (the file is then only to be reused).
    mutating func release() -> (file: SpoolRegion?, bytes: [UInt8], lost: Bool) {
        released = true
        defer {
            bytes = []
            file = nil
        }
        return (file, bytes, lost != nil)
    }

    /// Writes what memory holds to the file, taking one first if there is none.
    private mutating func move() -> AFError? {
        if file == nil {
            switch takeFile() {
            case .success(let taken): file = taken
            case .failure(let error): return error
            }
        }
        guard let file, !bytes.isEmpty else { return nil }
        // A local, not `self`, is what the closure captures and hands on inout
        // (ThreadSanitizer's instrumentation of captured inout parameters faults in 6.3.1).
        var room = self.room
        let code = bytes.withUnsafeBytes { FileIO.writeAll(file.fd, $0, keeping: &room) }
        self.room = room
        guard code == 0 else { return Self.fileError(code) }
        bytes = []
        return nil
    }

    private static func fileError(_ code: Int32) -> AFError {
        .output(OutputFailure(kind: .writeFailed, message: "cannot write to a temporary file: \(POSIXFailure(code: code).description); set TMPDIR to a directory with room"))
    }
}
