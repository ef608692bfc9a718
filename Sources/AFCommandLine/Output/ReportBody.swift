@_spi(Locking) import AFEngine

/// A body kept whole, handed on in pieces: what `ReportBodyWriter` reads.
protocol ReportBodySource {
    func replay(_ piece: (UnsafeRawBufferPointer) throws(AFError) -> Bool) throws(AFError)
    /// The first bytes of the body, up to `count`.
    func prefix(_ count: Int) -> [UInt8]
}

/// The response body for `--report=json`, which prints it only once the request has ended:
/// a `Spool`, in memory while it is small and in a temporary file past that, so a report of
/// a 1 GB download holds no more memory than one of 1 KB.
final class ReportBody: ResponseBodySink, ReportBodySource {
    private let spool: Locked<Spool>

    init(temporaryDirectory: String) {
        spool = Locked(Spool(directory: temporaryDirectory))
    }

    func open(_ head: ResponseHead, attempt: Int) throws(AFError) {
        rollback()
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        try spool.withLock { spool throws(AFError) in try spool.write(bytes) }
    }

    func rollback() {
        spool.withLock { $0.reset() }
    }

    func finish(error: AFError?) -> AFError? { error }

    func replay(_ piece: (UnsafeRawBufferPointer) throws(AFError) -> Bool) throws(AFError) {
        try spool.withLock { spool throws(AFError) in try spool.replay(while: piece) }
    }

    func prefix(_ count: Int) -> [UInt8] {
        spool.withLock { $0.prefix(count) }
    }
}
