@_spi(Locking) import AFEngine

/// The download progress bar on standard error (only when it is a terminal): percent,
/// size, speed and ETA, or a spinner when the size is unknown. Fed by the engine's progress
/// events; reads the byte counts from the download sink.
final class ProgressBar: EventMonitor, @unchecked Sendable {
    private struct State {
        var lastDraw = -1.0
        var startTime: Double?
        var startBytes: Int64 = 0
        var spinner = 0
        var drawn = false
    }

    private let sink: DownloadSink
    private let output: OutputChannel
    /// The terminal's width when af started, for when it cannot be read at a drawing.
    private let width: Int
    private let state = Locked(State())
    private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    init(sink: DownloadSink, output: OutputChannel, width: Int) {
        self.sink = sink
        self.output = output
        self.width = width
    }

    var interests: RequestEvent.Interests { [.progress, .attemptFinished, .finished, .cancelled] }

    func request(_ request: Request, didEmit event: RequestEvent) {
        switch event.kind {
        case .progress:
            draw(at: event.time, final: false)
        case .attemptFinished:
            // Off the line before a retry's notice, which was written on after it; the sink
            // saves nothing again before the next attempt's head.
            clear()
        case .finished, .cancelled:
            clear()
        default:
            break
        }
    }

    private func draw(at time: Double, final: Bool) {
        let line: String? = state.withLock { state in
            // Not before the body is being saved: libcurl reports progress from the start, and
            // a line drawn then stayed in front of the response head printed after it.
            guard time - state.lastDraw >= 0.1 || final, sink.isSaving else { return nil }
            state.lastDraw = time
            let done = sink.partialBytes
            if state.startTime == nil {
                state.startTime = time
                state.startBytes = done
            }
            let elapsed = max(time - (state.startTime ?? time), 0.001)
            let speed = Double(done - state.startBytes) / elapsed
            state.drawn = true
            return Self.render(done: done, total: sink.expectedTotal, speed: speed, spinner: &state.spinner, columns: output.columns(fallback: width))
        }
        if let line { output.writeQuietly("\r" + line + "\u{1b}[K") }
    }

    /// The line for a terminal `columns` wide: percent, bar, sizes, speed and ETA, the bar
    /// narrower and then the ETA, speed, sizes and bar left out, in turn, as the terminal
    /// narrows (StatusLine).
    static func render(done: Int64, total: Int64?, speed: Double, spinner: inout Int, columns: Int) -> String {
        let speedText = "\(Format.bytes(Int64(Saturating.int(speed))))/s"
        guard let total, total > 0 else {
            spinner = (spinner + 1) % Self.frames.count
            let frame = Self.frames[spinner]
            return StatusLine.fitting(["\(frame) \(Format.bytes(done))  \(speedText)", "\(frame) \(Format.bytes(done))"], columns: columns)
        }
        let fraction = min(1, Double(done) / Double(total))
        let percent = Int(fraction * 100)
        let remaining = speed > 0 ? Double(total - done) / speed : 0
        let eta = speed > 0 ? Self.clock(remaining) : "--:--"
        let percentText = percent < 10 ? "  \(percent)%" : (percent < 100 ? " \(percent)%" : "\(percent)%")
        let sizes = " \(Format.bytes(done)) / \(Format.bytes(total))"
        let tails = [sizes + "  \(speedText)  ETA \(eta)", sizes + "  \(speedText)", sizes]
        // The bar takes what the rest leaves (up to 40 columns); under 10 it says too little.
        let forms = tails.compactMap { tail -> String? in
            let barWidth = min(40, columns - 1 - percentText.count - 1 - tail.count)
            guard barWidth >= 10 else { return nil }
            let filled = Int(Double(barWidth) * fraction)
            return "\(percentText) " + String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled) + tail
        }
        return StatusLine.fitting(forms + [percentText + sizes, percentText], columns: columns)
    }

    private func clear() {
        let drawn = state.withLock { state -> Bool in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn { output.writeQuietly("\r\u{1b}[K") }
    }

    static func clock(_ seconds: Double) -> String {
        // A speed near zero makes the estimate huge (or infinite): saturate, never trap.
        let total = min(Saturating.int(seconds.rounded()), 359_999)
        let hours = total / 3600
        let minutes = (total % 3600) / 60
        let secs = total % 60
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
    }
}
