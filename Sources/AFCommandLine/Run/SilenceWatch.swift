@_spi(Locking) import AFEngine

/// The one timer behind every `SilenceNotice` of the process: a request that waits for an
/// answer is watched here until its answer comes, and a single check, scheduled for the
/// earliest time one of them may turn silent, looks at them all. A timer of each request's
/// own would stay scheduled after its answer came, and a long `af batch` would pile them up
/// by the hundred thousand; this holds only the requests that wait.
final class SilenceWatch: Sendable {
    static let shared = SilenceWatch()

    private struct State: Sendable {
        /// The notices of requests that wait for an answer.
        var waiting: [ObjectIdentifier: SilenceNotice] = [:]
        /// When the scheduled check runs, and its number: a check that is not the latest
        /// one scheduled does nothing.
        var check: (due: Double, number: Int)?
        var checks = 0
    }

    private let state = Protected(State())
    /// Where checks run: a thread of af's notices (`NoticeTimer`), which runs even when
    /// every thread that does work is busy (or blocked), as a watchdog's must.
    private let timer = NoticeTimer.shared

    /// How many requests are watched now.
    var count: Int { state.read { $0.waiting.count } }

    /// Watches `notice`, whose request may turn silent at `due` (a `Monotonic` time).
    func watch(_ notice: SilenceNotice, due: Double) {
        state.write { $0.waiting[ObjectIdentifier(notice)] = notice }
        schedule(due)
    }

    /// Stops watching `notice`: its request was answered or ended.
    func unwatch(_ notice: SilenceNotice) {
        state.write { _ = $0.waiting.removeValue(forKey: ObjectIdentifier(notice)) }
    }

    /// Makes sure a check runs at `due` or before it.
    private func schedule(_ due: Double) {
        let number = state.write { state -> Int? in
            if let check = state.check, check.due <= due { return nil }
            state.checks += 1
            state.check = (due, state.checks)
            return state.checks
        }
        guard let number else { return }
        timer.run(after: due - Monotonic.now()) { [self] in
            run(number)
        }
    }

    /// Check `number`: each waiting notice tells a silence that has lasted (and leaves) or
    /// says when it may turn silent next; the earliest of those times is the next check.
    /// The watch's lock is not held while a notice looks: a notice tells the watch of its
    /// turns under its own lock.
    private func run(_ number: Int) {
        let notices = state.write { state -> [SilenceNotice]? in
            guard state.check?.number == number else { return nil }
            state.check = nil
            return Array(state.waiting.values)
        }
        guard let notices else { return }
        let now = Monotonic.now()
        var next: Double?
        for notice in notices {
            if let due = notice.check(at: now) { next = min(next ?? due, due) }
        }
        if let next { schedule(next) }
    }
}
