@_spi(Locking) import AFEngine

/// A body kept whole, handed on in pieces: what `ReportBodyWriter` reads.
protocol ReportBodySource {
    func replay(_ piece: (UnsafeRawBufferPointer) throws(AFError) -> Bool) throws(AFError)
    /// The first bytes of the body, up to `count`.
    func prefix(_ count: Int) -> [UInt8]
}

/// The response body for `--report=json`, which prints it only once the request has ended:
/// in memory while it is small, in a temporary file (`Spool`) once it outgrows
/// `memoryLimit`, so a report of a 1 GB download holds no more memory than one of 1 KB.
final class ReportBody: ResponseBodySink, ReportBodySource {
    private final class State {
        var bytes: [UInt8] = []
        var spool: Spool?
    }

    /// What a body may hold in memory before it moves to a file.
    static let memoryLimit = 1 << 20

    private let state = Locked(State())
    private let temporaryDirectory: String

    init(temporaryDirectory: String) {
        self.temporaryDirectory = temporaryDirectory
    }

    func open(_ head: ResponseHead, attempt: Int) throws(AFError) {
        rollback()
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        try state.withLock { state throws(AFError) in
            if let spool = state.spool {
                try spool.write(bytes)
            } else if state.bytes.count + bytes.count <= Self.memoryLimit {
                state.bytes.append(contentsOf: bytes)
            } else {
                let spool = try Spool(directory: temporaryDirectory)
                try state.bytes.withBytes { held throws(AFError) in try spool.write(held) }
                try spool.write(bytes)
                state.bytes = []
                state.spool = spool
            }
        }
    }

    func rollback() {
        state.withLock { state in
            state.bytes = []
            state.spool?.reset()
        }
    }

    func finish(error: AFError?) -> AFError? { error }

    func replay(_ piece: (UnsafeRawBufferPointer) throws(AFError) -> Bool) throws(AFError) {
        try state.withLock { state throws(AFError) in
            if let spool = state.spool {
                try spool.replay(while: piece)
            } else if !state.bytes.isEmpty {
                _ = try state.bytes.withBytes { held throws(AFError) in try piece(held) }
            }
        }
    }

    func prefix(_ count: Int) -> [UInt8] {
        state.withLock { state in
            if let spool = state.spool { return spool.prefix(count) }
            return Array(state.bytes.prefix(count))
        }
    }
}
