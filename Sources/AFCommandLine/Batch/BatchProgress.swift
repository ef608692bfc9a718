@_spi(Locking) import AFEngine

/// The progress line of `af batch` on a terminal: done/total, failures, requests per second.
/// Messages about a line clear it first (`clearing`); the next completion draws it again.
struct BatchProgress: Sendable {
    let stderr: OutputChannel
    /// Whether a line is drawn at all (standard error is a terminal, no `-q`).
    let enabled: Bool
    let startedAt = Monotonic.now()
    private let lastDrawn = Protected(0.0)

    init(stderr: OutputChannel, enabled: Bool) {
        self.stderr = stderr
        self.enabled = enabled
    }

    /// The escape that returns to the start of the line and erases it.
    static let erase = "\r\u{1B}[K"

    /// Draws the line, at most ten times a second unless `force`.
    func draw(done: Int, total: Int?, failed: Int, force: Bool = false) {
        guard enabled else { return }
        let now = Monotonic.now()
        let due = lastDrawn.write { last -> Bool in
            guard force || now - last >= 0.1 else { return false }
            last = now
            return true
        }
        guard due else { return }
        let elapsed = now - startedAt
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let count = total.map { "\(done)/\($0)" } ?? "\(done)"
        stderr.writeQuietly("\(Self.erase)af: \(count) done, \(failed) failed, \(Format.decimal(rate, places: 1)) requests/s")
    }

    /// Erases the line for good.
    func clear() {
        if enabled { stderr.writeQuietly(Self.erase) }
    }
}
