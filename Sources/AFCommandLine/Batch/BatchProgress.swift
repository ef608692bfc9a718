@_spi(Locking) import AFEngine

/// The progress line of `af batch` on a terminal: done/total, failures, requests per second.
/// Messages about a line clear it first, and so does output for the same terminal
/// (`eraseIfShown`); the next completion draws it again.
struct BatchProgress: Sendable {
    let stderr: OutputChannel
    /// Whether a line is drawn at all (standard error is a terminal, no `-q`).
    let enabled: Bool
    /// The terminal's width when af started, for when it cannot be read at a drawing.
    let columns: Int
    let startedAt = Monotonic.now()
    private struct Drawing {
        var last = 0.0
        /// A line is on the terminal.
        var shown = false
    }

    private let drawing = Protected(Drawing())

    init(stderr: OutputChannel, enabled: Bool, columns: Int) {
        self.stderr = stderr
        self.enabled = enabled
        self.columns = columns
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
        stderr.writeQuietly(Self.erase + Self.line(count: count, failed: failed, rate: rate, columns: stderr.columns(fallback: columns)))
    }

    /// The line, as much of it as `columns` can show on one row.
    static func line(count: String, failed: Int, rate: Double, columns: Int) -> String {
        let rateText = Format.decimal(rate, places: 1)
        return StatusLine.fitting([
            "af: \(count) done, \(failed) failed, \(rateText) requests/s",
            "af: \(count) done, \(failed) failed, \(rateText)/s",
            "af: \(count) done, \(failed) failed",
            "\(count), \(failed) failed",
            count,
        ], columns: columns)
    }

    /// Ends the line, if one is shown, so that it stays on the terminal as the run's summary
    /// (as curl -Z leaves its last meter); a run that failed erases it for its error line.
    func keep() {
        guard enabled, drawing.write({ drawing -> Bool in
            defer { drawing.shown = false }
            return drawing.shown
        }) else { return }
        stderr.writeQuietly("\n")
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
