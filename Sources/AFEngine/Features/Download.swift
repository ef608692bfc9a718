#if canImport(Glibc)
import Glibc
#endif

/// How a download treats the file system.
public struct DownloadOptions: OptionSet, Sendable {
    /// The option bits.
    public let rawValue: Int
    /// Options from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Create missing directories on the way to the destination.
    public static let createIntermediateDirectories = DownloadOptions(rawValue: 1)
    /// Replace a file that already has the destination's name.
    public static let removePreviousFile = DownloadOptions(rawValue: 2)
}

/// Saves a response body to a file, like Alamofire's download destination, and never loses
/// or clobbers data: bytes go to `NAME.part`, which becomes `NAME` only once it is complete
/// and verified; an existing file is never replaced without `.removePreviousFile`; a failed
/// or interrupted transfer leaves `NAME.part` for resuming.
public final class DownloadSink: ResponseBodySink {
    /// Where and how to save.
    public struct Configuration: Sendable {
        /// The directory for the file (and for a relative `fixedName`).
        public var directory: String
        /// The file name or path chosen by the user; nil to name the file from the response.
        /// With `fileDescriptor`, the name messages give the descriptor ("standard output"
        /// when nil).
        public var fixedName: String?
        /// How the file system is treated.
        public var options: DownloadOptions
        /// A digest the finished file must match.
        public var checksum: Checksum?
        /// Continue from `NAME.part` (or from an existing fixed-name file).
        public var resume: Bool
        /// Save bodies of any status, not only 2xx.
        public var savesAnyStatus: Bool
        /// The URL asked for, to name the file when the response does not.
        public var requestURL: String
        /// Write to this open descriptor (standard output or error, or another the program
        /// was started with) instead of a file: no `.part`, no renaming, no resuming.
        public var fileDescriptor: Int32?

        /// Describes a download; by default into the current directory, named from the response.
        public init(directory: String = ".", fixedName: String? = nil, options: DownloadOptions = [], checksum: Checksum? = nil,
                    resume: Bool = false, savesAnyStatus: Bool = false, requestURL: String, fileDescriptor: Int32? = nil)
        {
            self.fileDescriptor = fileDescriptor
            self.directory = directory
            self.fixedName = fixedName
            self.options = options
            self.checksum = checksum
            self.resume = resume
            self.savesAnyStatus = savesAnyStatus
            self.requestURL = requestURL
        }
    }

    /// What a finished download did.
    public struct Report: Sendable, Equatable {
        /// Where the file was saved.
        public var path: String
        /// Bytes in the final file.
        public var bytes: Int64
        /// Bytes that were already on disk when this run resumed.
        public var resumedFrom: Int64
        /// The server did not honour the range, so the download began again.
        public var restarted: Bool
        /// The server said the file was already complete (416).
        public var alreadyComplete: Bool
        /// The checksum matched.
        public var verified: Bool
    }

    private struct State {
        var finalPath: String?
        var partPath: String?
        var fd: Int32 = -1
        /// Bytes in the `.part` file.
        var written: Int64 = 0
        /// Bytes on disk when the current response began.
        var startOffset: Int64 = 0
        var resumedFrom: Int64 = 0
        var expectedTotal: Int64?
        /// The range of a resumed (206) body, which it must fill; nil for a whole (200) body,
        /// which libcurl's framing checks.
        var resumed: ResumedBody?
        var digest: Digest?
        /// Whether the digest covers every byte now in the `.part` file.
        var digestCurrent = true
        /// The current response's body is being saved.
        var saving = false
        var savedThisResponse = false
        var alreadyComplete = false
        var restarted = false
        /// The file to resume was moved to the `.part` name for this run; a run that fails
        /// before adding to it puts it back.
        var movedAside = false
        var validator: String?
        var report: Report?
        /// Writing straight into a destination that is not a regular file (a device such as
        /// `/dev/null`, a FIFO, standard output): there is nothing to protect or rename.
        var inPlace = false
        /// The claim on the `.part` file and the name (`PartFileClaims`), held until the
        /// download finishes.
        var claim: [String]?
        /// The name the response gave the file (or the URL), before a number made it free;
        /// nil for a name the caller fixed.
        var suggestedName: String?
        /// Bytes accepted for the `.part` file and not yet written to it (counted in
        /// `written`): libcurl hands a body over 16 KiB at a time, and a `write` per piece
        /// cost a 1 GiB download 65,536 system calls.
        var pending = WriteBehind()
        /// A response of another status than 2xx whose body `savesAnyStatus` keeps: held
        /// (up to `heldLimit` bytes) until the request ends with it.
        var heldHead: ResponseHead?
        var heldBytes: [UInt8] = []
        /// What `written` counts is such an answer's body, not a successful one's: it is not
        /// resumed.
        var writtenIsOtherAnswer = false
        /// Bytes at the start of a body sent whole again that were already written.
        var skip: Int64 = 0
        /// The destination is the null device: nothing written there can be wrong, so each
        /// answer starts over rather than continue (`-o /dev/null` to check a status).
        var discards = false
        /// The resource's length as the answer that began the body gave it, when it did: a
        /// range of a resource of another length is of another resource.
        var resourceLength: Int64?
    }

    /// How much of a held answer's body stays in memory; more is saved as it comes.
    static let heldLimit = 1 << 20

    /// A buffer that gathers the pieces of a body into large writes.
    private struct WriteBehind {
        static let capacity = 256 << 10
        private var storage: UnsafeMutableRawBufferPointer?
        private(set) var count = 0

        /// Takes `bytes` if they fit; false when the buffer must be written out first, or
        /// when `bytes` are as large as the buffer (written directly then).
        mutating func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard bytes.count < Self.capacity, count + bytes.count <= Self.capacity else { return false }
            let buffer = storage ?? UnsafeMutableRawBufferPointer.allocate(byteCount: Self.capacity, alignment: 16)
            storage = buffer
            UnsafeMutableRawBufferPointer(rebasing: buffer[count..<(count + bytes.count)]).copyMemory(from: bytes)
            count += bytes.count
            return true
        }

        /// Writes what is held to `fd`; 0, or the `errno` of the failed write (the bytes
        /// are dropped either way: `written` is corrected from the file's size).
        mutating func drain(to fd: Int32) -> Int32 {
            guard count > 0, let storage else { return 0 }
            defer { count = 0 }
            return FileIO.writeAll(fd, UnsafeRawBufferPointer(rebasing: storage[0..<count]))
        }

        /// Gives the memory back.
        mutating func release() {
            storage?.deallocate()
            storage = nil
            count = 0
        }
    }

    /// Where and how the sink saves.
    public let configuration: Configuration
    private let state: Locked<State>
    /// Called with a sentence when something the user should know happens (a restart).
    private let notice: @Sendable (String) -> Void
    /// How the files are closed and the finished one gets its name (the system's calls, but
    /// in tests).
    private let calls: FileCalls

    /// Checks the destination before anything is sent: a fixed name that exists is refused
    /// (unless replacing or resuming), missing directories are created or refused.
    public convenience init(configuration: Configuration, notice: @escaping @Sendable (String) -> Void = { _ in }) throws(AFError) {
        try self.init(configuration: configuration, notice: notice, calls: .system)
    }

    /// A sink whose files are closed and named through `calls`.
    package init(configuration: Configuration, notice: @escaping @Sendable (String) -> Void, calls: FileCalls) throws(AFError) {
        self.configuration = configuration
        self.notice = notice
        self.calls = calls
        var initial = State()
        initial.digest = configuration.checksum.map { Digest($0.algorithm) }
        if let descriptor = configuration.fileDescriptor {
            let name = configuration.fixedName ?? "standard output"
            guard !configuration.resume else {
                throw .output(OutputFailure(kind: .resumeRefused, message: "\(name) cannot be resumed; name a file to resume"))
            }
            initial.inPlace = true
            initial.discards = FileIO.isNullDevice(path: nil, fd: descriptor)
            initial.finalPath = name
            initial.fd = descriptor
            state = Locked(initial)
            return
        }
        // A fixed name ending with '/' (`out/`) is a directory by its spelling: refused before
        // `createIntermediateDirectories` makes it (which then failed as a directory, leaving
        // the new one behind).
        if let fixed = configuration.fixedName, fixed.utf8.last == UInt8(ascii: "/") {
            throw .output(OutputFailure(kind: .destinationExists, message: "'\(fixed)' ends with '/', so it names a directory; name a file"))
        }
        try Self.prepareDirectory(configuration.directory, create: configuration.options.contains(.createIntermediateDirectories))
        if let fixed = configuration.fixedName {
            let path = Self.path(of: fixed, in: configuration.directory)
            // The last `/` byte: a `/` followed by a combining mark is one character, but
            // still a separator to the file system.
            if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.startIndex {
                try Self.prepareDirectory(String(path[..<slash]), create: configuration.options.contains(.createIntermediateDirectories))
            }
            if FileIO.isDirectory(path) {
                throw .output(OutputFailure(kind: .destinationExists, message: "'\(path)' is a directory; name a file"))
            }
            if FileIO.isSpecial(path) {
                // A device or FIFO is written in place: never replaced, renamed or resumed.
                guard !configuration.resume else {
                    throw .output(OutputFailure(kind: .resumeRefused, message: "'\(path)' is not a regular file and cannot be resumed"))
                }
                initial.inPlace = true
                initial.discards = FileIO.isNullDevice(path: path)
                initial.finalPath = path
                state = Locked(initial)
                return
            }
            if FileIO.exists(path), !configuration.resume, !configuration.options.contains(.removePreviousFile) {
                throw .output(OutputFailure(kind: .fileExists, message: "'\(path)' exists"))
            }
            initial.finalPath = path
            initial.partPath = path + ".part"
        } else if configuration.resume {
            let name = DownloadNaming.suggestedFilename(for: nil, url: configuration.requestURL)
            let path = Self.join(configuration.directory, name)
            initial.finalPath = path
            initial.partPath = path + ".part"
        }
        // The file is made in its directory (as NAME.part, renamed when complete): one that
        // cannot be written there fails now, before the request is sent — not after a POST
        // has been processed, with its response lost.
        let target = initial.finalPath.map(FileIO.directory(of:)) ?? configuration.directory
        if access(target, W_OK | X_OK) != 0 {
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot write files in '\(target)': \(POSIXFailure(code: errno).description)"))
        }
        // NAME.part must fit where NAME does: a name of 251 to 255 bytes is a good file name
        // whose `.part` is not, found only when the answer came (the request sent, its answer
        // lost).
        if let final = initial.finalPath, let part = initial.partPath {
            let limit = pathconf(target, Int32(_PC_NAME_MAX))
            if limit > 0, FileIO.name(of: part).utf8.count > limit {
                throw .output(OutputFailure(
                    kind: .writeFailed,
                    message: "cannot save '\(final)': its name is too long to download into, as af first writes NAME.part and '\(target)' takes names of at most \(limit) bytes; name a shorter file"
                ))
            }
        }
        // A directory removed while a shell was in it still answers `access`, but takes no
        // new file: the response would have been fetched, then lost.
        var directoryInfo = stat()
        if stat(target, &directoryInfo) == 0, directoryInfo.st_nlink == 0 {
            let working = target == "." ? " (the working directory)" : ""
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot write files in '\(target)'\(working): it was removed; cd to a directory that exists, or save to a path in one"))
        }
        if let final = initial.finalPath, let part = initial.partPath {
            // A link where the partial file goes (or, to be resumed, where the file is) would
            // be written through, or measured for a Range, at whatever it points to: refused
            // before the request, as writing refuses it.
            for path in configuration.resume ? [part, final] : [part] where FileIO.isSymbolicLink(path) {
                throw .output(OutputFailure(kind: .writeFailed, message: "cannot write '\(path)': it is a symbolic link; af never writes through one: remove it, or save under another name"))
            }
            guard let claim = PartFileClaims.claim([final, part]) else { throw Self.inUse(final) }
            initial.claim = claim
            // A partial download an earlier run left (and told the user to resume) was
            // truncated by a run that did not resume it.
            if configuration.fixedName != nil, !configuration.resume, !configuration.options.contains(.removePreviousFile),
               let size = FileIO.size(part), size > 0 {
                PartFileClaims.release(claim)
                throw .output(OutputFailure(kind: .fileExists, message: "'\(part)' holds \(Format.bytes(size)) of an earlier download of '\(final)'"))
            }
        }
        if configuration.resume, let final = initial.finalPath, let part = initial.partPath {
            if !FileIO.exists(part), FileIO.exists(final) {
                guard rename(final, part) == 0 else {
                    let reason = POSIXFailure(code: errno).description
                    // No sink comes of this, so nothing else would give the claim up.
                    if let claim = initial.claim { PartFileClaims.release(claim) }
                    throw .output(OutputFailure(kind: .writeFailed, message: "cannot move '\(final)' aside to resume it: \(reason)"))
                }
                initial.movedAside = true
            } else if FileIO.exists(part), FileIO.exists(final), !configuration.options.contains(.removePreviousFile) {
                // The part would be resumed, then refused its name at the end ("it appeared
                // while downloading", though it was there all along).
                if let claim = initial.claim { PartFileClaims.release(claim) }
                throw .output(OutputFailure(kind: .destinationExists, message: "both '\(final)' and '\(part)' exist: resuming '\(part)' would end by replacing '\(final)', which is not allowed; remove one of them"))
            }
            initial.written = FileIO.size(part) ?? 0
            initial.resumedFrom = initial.written
            initial.digestCurrent = initial.written == 0
            if initial.written > 0 {
                // What the run that began it learnt of the resource: a changed one starts over.
                let marks = PartFileMarks.read(path: part)
                initial.validator = marks.validator
                initial.resourceLength = marks.length
            }
        }
        initial.startOffset = initial.written
        state = Locked(initial)
    }

    deinit {
        state.withLock { state in
            state.pending.release()
            if let claim = state.claim { PartFileClaims.release(claim) }
        }
    }

    /// Bytes of a successful body already saved, from which the next attempt should continue.
    public var partialBytes: Int64 { state.withLock { $0.writtenIsOtherAnswer || $0.discards ? 0 : $0.written } }

    /// The validator (`ETag` or `Last-Modified`) for `If-Range`, once a response gave one.
    public var rangeValidator: String? { state.withLock { $0.validator } }

    /// Bytes expected in the complete file, when known.
    public var expectedTotal: Int64? { state.withLock { $0.expectedTotal } }

    /// Whether the body of the current response is being saved: its head has been accepted
    /// (not a redirect, an error status or a refused range). A progress display starts then,
    /// after whatever printed the head.
    public var isSaving: Bool { state.withLock { $0.saving } }

    /// The path of the `.part` file, when there is one.
    public var partPath: String? { state.withLock { $0.partPath } }

    /// What the finished download did (nil until it succeeded).
    public var report: Report? { state.withLock { $0.report } }

    // MARK: ResponseBodySink

    public func open(_ head: ResponseHead, attempt: Int) throws(AFError) {
        try state.withLock { state throws(AFError) in
            _ = closeFile(&state)
            state.saving = false
            state.savedThisResponse = false
            state.heldHead = nil
            state.heldBytes = []
            if head.status == 416, state.written > 0, !state.writtenIsOtherAnswer {
                // Complete only when the server's size is the size on disk; otherwise the
                // local file is not the resource (it changed, or the part is corrupt).
                let total = Self.unsatisfiedRangeTotal(head.headers.value(for: .contentRange))
                guard total == state.written else {
                    let told = total.map { "the resource has \($0) bytes" } ?? "it did not say the resource's size"
                    if state.inPlace { throw incompleteStream(state, answer: "refused the range (416), and \(told)") }
                    throw .output(OutputFailure(
                        kind: .resumeRefused,
                        message: "the server refused the range (416) but \(told) and \(holderName(state)) holds \(state.written); remove it to start over"
                    ))
                }
                state.alreadyComplete = true
                return
            }
            if (200...299).contains(head.status) {
                try begin(head, &state)
            } else if configuration.savesAnyStatus {
                // Held until the request ends with it: a retry takes it back, and neither the
                // partial body an earlier attempt saved nor a stream may get it meanwhile.
                state.heldHead = head
            }
        }
    }

    /// Starts saving the body of `head`: a 2xx answer's as it opens, another status's once
    /// the request has ended with it.
    private func begin(_ head: ResponseHead, _ state: inout State) throws(AFError) {
        let success = (200...299).contains(head.status)
        state.resumed = nil
        state.skip = 0
        if state.inPlace {
            try beginInPlace(head, success: success, &state)
            return
        }
        if state.finalPath == nil {
            let name = DownloadNaming.suggestedFilename(for: head, url: configuration.requestURL)
            let (path, claim) = try uniquePath(name)
            state.suggestedName = name
            state.finalPath = path
            state.partPath = path + ".part"
            state.claim = claim
        }
        guard let part = state.partPath else { return }
        if success { state.validator = Self.validator(of: head) }
        if head.status == 206, state.written > 0, !state.writtenIsOtherAnswer {
            let value = head.headers.value(for: .contentRange)
            switch ResumedBody.verdict(on: head, start: state.written, resourceLength: state.resourceLength) {
            case .continues(let resumed):
                state.resumed = resumed
                state.expectedTotal = resumed.total ?? resumed.end
                state.resourceLength = resumed.total ?? state.resourceLength
            case .otherResource(let total, let known):
                throw .output(OutputFailure(
                    kind: .resumeRefused,
                    message: "the server resumed a resource of \(total) bytes, but \(holderName(state)) holds the start of one of \(known): it changed since; remove it to start over"
                ))
            case .otherStart(let start):
                let told = start.map { "byte \($0)" } ?? "an unknown position"
                throw .output(OutputFailure(
                    kind: .resumeRefused,
                    message: "the server resumed at \(told) but \(holderName(state)) holds \(state.written) bytes; remove it to start over"
                ))
            case .invalid:
                throw .output(OutputFailure(
                    kind: .resumeRefused,
                    message: "the server resumed with an invalid range ('Content-Range: \(value ?? "")'); \(holderName(state)) was kept as it was (\(state.written) bytes): try again later, or remove it to start over"
                ))
            }
            // O_NOFOLLOW: a `.part` planted as a symbolic link must not redirect the bytes.
            state.fd = Glibc.open(part, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
            if state.fd >= 0, !state.digestCurrent, let digest = state.digest {
                try Self.hashFile(part, into: digest)
                state.digestCurrent = true
            }
        } else {
            if state.written > 0 {
                state.restarted = true
                state.resumedFrom = 0
                if success, !state.writtenIsOtherAnswer {
                    notice("the server did not resume the download; starting '\(state.finalPath ?? part)' from the beginning")
                }
            }
            state.written = 0
            state.writtenIsOtherAnswer = !success
            state.digest?.reset()
            state.digestCurrent = true
            let fresh = !configuration.resume && !FileIO.exists(part)
            state.fd = Glibc.open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | (fresh ? O_EXCL : 0), 0o644)
            state.expectedTotal = head.headers.value(for: .contentLength).flatMap { Int64($0) }
            state.resourceLength = success ? state.expectedTotal : nil
            if state.fd >= 0 {
                PartFileMarks(validator: success ? state.validator : nil, length: state.resourceLength).write(to: state.fd, replacing: !fresh)
            }
        }
        guard state.fd >= 0 else {
            let reason = errno == ELOOP ? "it is a symbolic link; af never writes through one" : POSIXFailure(code: errno).description
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot write '\(part)': \(reason)"))
        }
        state.startOffset = state.written
        state.saving = true
        state.savedThisResponse = true
    }

    /// Starts writing into a destination that is not a regular file. What an earlier attempt
    /// wrote there cannot be taken back, so only the rest of that same body may follow it:
    /// the range asked for, or the whole body again with the same validator (a server that
    /// ignores ranges), its first bytes skipped. Anything else fails, and says what was
    /// written is incomplete.
    private func beginInPlace(_ head: ResponseHead, success: Bool, _ state: inout State) throws(AFError) {
        if state.fd < 0, configuration.fileDescriptor == nil, let path = state.finalPath {
            // A FIFO opens once a reader has it open: Ctrl-C must end that wait as any other.
            switch FileIO.opening(path, flags: O_WRONLY | O_CLOEXEC | O_NOCTTY) {
            case .descriptor(let fd):
                state.fd = fd
            case .failed(let failure):
                throw .output(OutputFailure(kind: .writeFailed, message: "cannot write '\(path)': \(failure.description)"))
            case .interrupted(let reason):
                throw .cancelled(reason)
            }
        }
        if state.discards {
            state.written = 0
            state.digest?.reset()
        }
        if state.written > 0 {
            let verdict = head.status == 206 && !state.writtenIsOtherAnswer
                ? ResumedBody.verdict(on: head, start: state.written, resourceLength: state.resourceLength) : nil
            if case .continues(let resumed)? = verdict {
                state.resumed = resumed
                state.expectedTotal = resumed.total ?? resumed.end
            } else if head.status == 200, !state.writtenIsOtherAnswer, let validator = Self.validator(of: head), validator == state.validator {
                state.skip = state.written
            } else {
                let answer: String
                switch verdict {
                case .otherStart(let start)?: answer = "resumed at \(start.map { "byte \($0)" } ?? "an unknown position") instead of after them"
                case .invalid?: answer = "resumed with an invalid range ('Content-Range: \(head.headers.value(for: .contentRange) ?? "")')"
                case .otherResource(let total, let known)?: answer = "resumed a resource of \(total) bytes, not the one of \(known) it began with"
                case .continues?, nil: answer = "answered \(head.status) \(head.displayReason) instead of sending the rest"
                }
                throw incompleteStream(state, answer: answer)
            }
        } else {
            // For the progress bar's percent and time left, as into a file.
            state.expectedTotal = head.headers.value(for: .contentLength).flatMap { Int64($0) }
            state.resourceLength = success ? state.expectedTotal : nil
            if success { state.validator = Self.validator(of: head) }
            state.writtenIsOtherAnswer = !success
        }
        state.startOffset = state.written
        state.saving = true
        state.savedThisResponse = true
    }

    /// The failure of a stream that got part of the body from an earlier attempt, when the
    /// server's `answer` cannot follow it.
    private func incompleteStream(_ state: State, answer: String) -> AFError {
        .output(OutputFailure(
            kind: .resumeRefused,
            message: "\(holderName(state)) got \(state.written) bytes of the body before an attempt failed, and the server \(answer); they cannot be taken back, so what was written is incomplete"
        ))
    }

    /// What holds the bytes saved so far, as messages name it.
    private func holderName(_ state: State) -> String {
        if state.inPlace {
            // A path in quotes; a descriptor's name ("standard output") as it reads.
            return configuration.fileDescriptor == nil ? "'\(state.finalPath ?? "")'" : state.finalPath ?? ""
        }
        return "'\(keptPath(state) ?? state.finalPath ?? "")'"
    }

    /// Where the saved bytes are, as the user knows it: the file given to resume (`-c -o
    /// FILE`) even while its bytes sit under `.part`, which goes back to that name when
    /// nothing was added; otherwise the part.
    private func keptPath(_ state: State) -> String? {
        state.movedAside ? state.finalPath : state.partPath
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        try state.withLock { state throws(AFError) in
            if state.heldHead != nil {
                guard state.heldBytes.count + bytes.count > Self.heldLimit else {
                    state.heldBytes.append(contentsOf: bytes)
                    return
                }
                // Too large to hold: saved from here on, as any answer is without retries.
                try saveHeldAnswer(&state)
            }
            try save(bytes, &state)
        }
    }

    /// Writes the next bytes of the body being saved: past those a body sent whole again
    /// repeats, and not past the end of the range a resumed body announced.
    private func save(_ bytes: UnsafeRawBufferPointer, _ state: inout State) throws(AFError) {
        guard state.saving, state.fd >= 0 else { return }
        var bytes = bytes
        if state.skip > 0 {
            let skipped = Int(min(Int64(bytes.count), state.skip))
            state.skip -= Int64(skipped)
            bytes = UnsafeRawBufferPointer(rebasing: bytes[skipped...])
        }
        if state.resumed != nil { bytes = state.resumed?.admit(bytes, kept: state.written) ?? bytes }
        guard !bytes.isEmpty else { return }
        var code: Int32 = 0
        if state.inPlace {
            // A device, FIFO or standard output gets each piece as it comes.
            code = FileIO.writeAll(state.fd, bytes)
        } else if !state.pending.take(bytes) {
            code = state.pending.drain(to: state.fd)
            if code == 0, !state.pending.take(bytes) { code = FileIO.writeAll(state.fd, bytes) }
        }
        guard code == 0 else {
            Self.resynchronise(&state)
            throw writeFailure(code, state)
        }
        state.digest?.update(bytes)
        state.written += Int64(bytes.count)
    }

    /// The request ended with the answer being held (or it outgrew `heldLimit`): its body is
    /// saved as it would have been without retries.
    private func saveHeldAnswer(_ state: inout State) throws(AFError) {
        guard let head = state.heldHead else { return }
        let bytes = state.heldBytes
        state.heldHead = nil
        state.heldBytes = []
        try begin(head, &state)
        // A copy, not `withUnsafeBytes`: a closure passing `state` on `inout` trips the
        // thread sanitizer of this toolchain.
        let held = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { held.deallocate() }
        held.copyBytes(from: bytes)
        try save(UnsafeRawBufferPointer(held), &state)
    }

    /// A resumed body must end where its `Content-Range` said: a server that closed it early
    /// within a correct `Content-Length` left a file short of the resource, which was saved
    /// as complete. Short, the attempt fails as a truncated body (retried, and resumed from
    /// what arrived); long, the bytes past the range were not written, so that resuming
    /// continues from where the range ended, and the attempt fails. A range that ends before
    /// the resource does (the request asked for all the rest) fails as a truncated body too,
    /// and a whole body sent again that ends before the bytes already written fails as
    /// malformed.
    public func bodyDidEnd() -> AFError? {
        state.withLock { state -> AFError? in
            guard state.savedThisResponse, state.fd >= 0 else { return nil }
            if state.skip > 0 {
                return .transport(TransportFailure(
                    kind: .malformedResponse,
                    message: "the body sent again ended \(state.skip) bytes before the \(state.written) already written",
                    curlCode: 0
                ))
            }
            return state.resumed?.problem(kept: state.written)
        }
    }

    public func rollback() {
        state.withLock { state in
            _ = closeFile(&state)
            state.saving = false
            state.heldHead = nil
            state.heldBytes = []
        }
    }

    public func finish(error: AFError?) -> AFError? {
        state.withLock { state -> AFError? in
            var error = error
            if state.heldHead != nil {
                // The answer the request ended with: saved, unless it failed (or, into a file,
                // failed validation, which keeps no body and leaves an earlier part as it was).
                var keeps = error == nil
                if case .responseValidationFailed? = error, state.inPlace { keeps = true }
                if keeps {
                    do throws(AFError) {
                        try saveHeldAnswer(&state)
                    } catch let failure {
                        error = failure
                    }
                }
                state.heldHead = nil
                state.heldBytes = []
            }
            defer {
                // After the rename: the name is free for the next download only once this
                // one is done with it.
                if let claim = state.claim { PartFileClaims.release(claim) }
                state.claim = nil
            }
            let code = closeFile(&state, ending: true)
            state.pending.release()
            // The last buffered bytes failed to go out (a full disk, a size limit): a failure
            // like any other, which leaves the files as one during the transfer would.
            if code != 0, error == nil { error = writeFailure(code, state) }
            if state.inPlace { return finishInPlace(&state, error: error) }
            guard let part = state.partPath, var final = state.finalPath else { return error }
            if let error {
                if state.movedAside, !state.restarted, state.written == state.resumedFrom, !FileIO.exists(final) {
                    // Nothing was added (the server was down, refused the range, sent an
                    // error page): the file goes back under its name, as the user left it.
                    _ = rename(part, final)
                } else if case .responseValidationFailed = error, state.savedThisResponse, state.startOffset == 0 {
                    unlink(part)
                } else if state.written == 0, FileIO.exists(part), (FileIO.size(part) ?? 0) == 0 {
                    unlink(part)
                }
                return error
            }
            guard state.savedThisResponse || state.alreadyComplete else { return nil }
            var verified = false
            if let checksum = configuration.checksum, let digest = state.digest {
                if !state.digestCurrent {
                    do throws(AFError) {
                        try Self.hashFile(part, into: digest)
                    } catch {
                        return error
                    }
                }
                let actual = digest.finalize()
                guard actual == checksum.expected else {
                    let mismatch = "\(checksum.algorithm.rawValue) of the download is \(Digest.hex(actual)), not \(Digest.hex(checksum.expected)); nothing was saved as '\(final)'"
                    // Bytes that were on disk before this run (a resumed file, or one already
                    // complete) are the user's: a mistyped checksum must not delete them.
                    guard state.resumedFrom > 0 else {
                        unlink(part)
                        return .output(OutputFailure(kind: .checksumMismatch, message: mismatch + "; check the checksum and where it came from"))
                    }
                    return .output(OutputFailure(
                        kind: .checksumMismatch,
                        message: mismatch + ", and '\(part)' keeps the \(state.written) bytes (\(state.resumedFrom) of them there before this run); "
                            + "check the checksum and where it came from, or remove it to download the file whole"
                    ))
                }
                verified = true
            }
            PartFileMarks.remove(path: part)
            if configuration.options.contains(.removePreviousFile) {
                guard rename(part, final) == 0 else {
                    return .output(OutputFailure(kind: .writeFailed, message: "cannot rename '\(part)' to '\(final)': \(POSIXFailure(code: errno).description)"))
                }
            } else {
                let code = calls.place(part, at: final)
                if code != 0 {
                    // A name the server gave was free when the download began: another
                    // program made it since. The next free one, as at the start.
                    guard code == EEXIST, let name = state.suggestedName, let saved = placeUnderFreeName(part, name) else {
                        let reason = code == EEXIST ? "it appeared while downloading" : POSIXFailure(code: code).description
                        return .output(OutputFailure(kind: .destinationExists, message: "cannot save '\(final)': \(reason); the download is in '\(part)'"))
                    }
                    notice("'\(final)' appeared while downloading; saving this one as '\(saved)'")
                    final = saved
                    state.finalPath = saved
                }
            }
            state.report = Report(
                path: final, bytes: FileIO.size(final) ?? state.written, resumedFrom: state.resumedFrom,
                restarted: state.restarted, alreadyComplete: state.alreadyComplete && !state.savedThisResponse, verified: verified
            )
            return nil
        }
    }

    private func finishInPlace(_ state: inout State, error: AFError?) -> AFError? {
        guard error == nil, state.savedThisResponse else { return error }
        var verified = false
        if let checksum = configuration.checksum, let digest = state.digest {
            let actual = digest.finalize()
            let written = holderName(state)
            guard actual == checksum.expected else {
                return .output(OutputFailure(
                    kind: .checksumMismatch,
                    message: "\(checksum.algorithm.rawValue) of the download is \(Digest.hex(actual)), not \(Digest.hex(checksum.expected)); what was written to \(written) is not what you expected"
                ))
            }
            verified = true
        }
        state.report = Report(path: state.finalPath ?? "", bytes: state.written, resumedFrom: 0, restarted: false, alreadyComplete: false, verified: verified)
        return nil
    }

    // MARK: Files

    /// Writes out what the buffer holds and closes the file (one written in place only when
    /// the download is `ending`); 0, or the `errno` of a failed write or close (a network
    /// file system may report a write the server refused only there), after which `written`
    /// is what the file holds (so a retry resumes from there).
    private func closeFile(_ state: inout State, ending: Bool = false) -> Int32 {
        guard state.fd >= 0 else { return 0 }
        var code = state.pending.drain(to: state.fd)
        // A destination written in place stays open from one attempt to the next: closed, a
        // FIFO's reader saw the end of its data and went, and opening it again for the retry
        // waited for a reader that never came.
        if state.inPlace, configuration.fileDescriptor != nil || !ending {
            if code != 0 { Self.resynchronise(&state) }
            return code
        }
        let closed = calls.finish(state.fd, syncing: false)
        state.fd = -1
        if code == 0 { code = closed }
        if code != 0 { Self.resynchronise(&state) }
        return code
    }

    /// After a failed write, `written` is what the `.part` file holds, and the digest is
    /// made again from the file if a later attempt continues it.
    private static func resynchronise(_ state: inout State) {
        guard let part = state.partPath, let size = FileIO.size(part) else { return }
        state.written = size
        state.digestCurrent = false
    }

    /// A failed write, naming what the user knows the bytes by (`holderName`): the file
    /// given or its part, a destination written in place, or standard output unquoted.
    private func writeFailure(_ code: Int32, _ state: State) -> AFError {
        .output(OutputFailure(kind: .writeFailed, message: "cannot write \(holderName(state)): \(POSIXFailure(code: code).description)"))
    }

    /// `directory/name`, or `name-1.ext`, `name-2.ext`… when that or its `.part` exists (unless
    /// replacing) or another download of this process is writing either; with the claim on
    /// both. Replacing, downloads that want one name at once take `name`, `name-1.ext`… in
    /// turn, the same names each time.
    private func uniquePath(_ name: String) throws(AFError) -> (path: String, claim: [String]) {
        let replacing = configuration.options.contains(.removePreviousFile)
        let first = Self.join(configuration.directory, name)
        for attempt in 0..<10_000 {
            let path = Self.join(configuration.directory, DownloadNaming.numbered(name, attempt))
            guard replacing || (!FileIO.exists(path) && !FileIO.exists(path + ".part")) else { continue }
            if let claim = PartFileClaims.claim([path, path + ".part"]) {
                // The name was free but for an earlier run's partial download: say where it is.
                if attempt > 0, !FileIO.exists(first), !PartFileClaims.isClaimed(first + ".part"), let size = FileIO.size(first + ".part"), size > 0 {
                    notice("'\(first).part' holds \(Format.bytes(size)) of an earlier download of '\(first)'; saving this one as '\(path)' (resuming would continue that part)")
                }
                return (path, claim)
            }
        }
        throw .output(OutputFailure(kind: .destinationExists, message: "no free name for '\(name)' in '\(configuration.directory)'"))
    }

    /// Moves `part` to `name-1.ext`, `name-2.ext`… (the first one free), for a download whose
    /// name was taken while it ran; the path, or nil when none could be made.
    private func placeUnderFreeName(_ part: String, _ name: String) -> String? {
        for attempt in 1..<10_000 {
            let path = Self.join(configuration.directory, DownloadNaming.numbered(name, attempt))
            guard !FileIO.exists(path), let claim = PartFileClaims.claim([path]) else { continue }
            defer { PartFileClaims.release(claim) }
            let code = calls.place(part, at: path)
            if code == 0 { return path }
            guard code == EEXIST else { return nil }
        }
        return nil
    }

    private static func inUse(_ path: String) -> AFError {
        .output(OutputFailure(kind: .inUse, message: "another download in progress is saving '\(path)'; give each download a file of its own"))
    }

    private static func prepareDirectory(_ path: String, create: Bool) throws(AFError) {
        if FileIO.isDirectory(path) { return }
        if FileIO.exists(path) {
            throw .output(OutputFailure(kind: .writeFailed, message: "'\(path)' is not a directory"))
        }
        guard create else {
            throw .output(OutputFailure(kind: .directoryMissing, message: "directory '\(path)' does not exist"))
        }
        if case .failure(let failure) = FileIO.makeDirectories(path, mode: 0o755) {
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot create directory '\(failure.path)': \(failure.reason.description)"))
        }
    }

    private static func hashFile(_ path: String, into digest: Digest) throws(AFError) {
        digest.reset()
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot read '\(path)' to verify it: \(POSIXFailure(code: errno).description)"))
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    /// Where a fixed name (`-o`) lands: itself when absolute, else in `directory`.
    package static func path(of name: String, in directory: String) -> String {
        name.hasPrefix("/") ? name : join(directory, name)
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory == "." ? name : (directory.hasSuffix("/") ? directory + name : directory + "/" + name)
    }
}
