@_spi(Locking) import AFEngine

/// The progress line of `af batch` on a terminal: done/total, failures, requests per second.
/// Messages about a line clear it first, and so does output for the same terminal
/// (`eraseIfShown`); the next completion draws it again.
struct BatchProgress: Sendable {
    let stderr: OutputChannel
    /// Whether a line is drawn at all (standard error is a terminal, no `-q`).
    let enabled: Bool
    let startedAt = Monotonic.now()
    private struct Drawing {
        var last = 0.0
        /// A line is on the terminal.
        var shown = false
    }

    private let drawing = Protected(Drawing())

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
        let due = drawing.write { drawing -> Bool in
            guard force || now - drawing.last >= 0.1 else { return false }
            drawing.last = now
            drawing.shown = true
            return true
        }
        guard due else { return }
        let elapsed = now - startedAt
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let count = total.map { "\(done)/\($0)" } ?? "\(done)"
        stderr.writeQuietly("\(Self.erase)af: \(count) done, \(failed) failed, \(Format.decimal(rate, places: 1)) requests/s")
    }

    /// Erases the line, if one is shown, until the next completion draws it again (before
    /// output for the terminal it shares, which was written on after the line), or for good
    /// at the end of the run.
    func eraseIfShown() {
        guard enabled, drawing.write({ drawing -> Bool in
            defer { drawing.shown = false }
            return drawing.shown
        }) else { return }
        stderr.writeQuietly(Self.erase)
    }
}
