import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Runs the checks behind af's notices (a silent server, standard input that gives nothing)
/// at their times, on one thread of its own, started on first use.
///
/// Not Dispatch: where the system refuses another thread (`ulimit -u`, a container's limit
/// on tasks), a Dispatch timer retries for ever, on the thread that asked for it, to get a
/// worker, and that thread was the one that drives the transfers, so af hung. Here a refused
/// thread only drops the checks: a run does without its notices.
final class NoticeTimer: @unchecked Sendable {
    static let shared = NoticeTimer()

    private struct Item {
        /// When it runs (`Monotonic` seconds).
        let due: Double
        let work: @Sendable () -> Void
    }

    private enum Thread {
        case notStarted
        case running
        /// The system refused it: work is dropped.
        case refused
    }

    /// `items` (earliest first) and `thread`, under `mutex`; `condition` wakes the thread for
    /// an item earlier than those it waits for.
    private struct State {
        var items: [Item] = []
        var thread = Thread.notStarted
    }

    private var state = State()
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    private init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Waits are measured on the clock `Monotonic` reads: a change of the wall clock
        // moves no notice.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    // `shared` lives as long as the process: no deinit frees the mutex under its thread.

    /// Runs `work` on the timer's thread `seconds` from now (at once when not positive),
    /// unless the system refused the thread. `work` runs with no lock of the timer's held,
    /// one item at a time, so it must be short.
    func run(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
        let item = Item(due: Monotonic.now() + max(0, seconds), work: work)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        switch state.thread {
        case .refused:
            return
        case .notStarted:
            guard startThread() else {
                state.thread = .refused
                return
            }
            state.thread = .running
        case .running:
            break
        }
        let index = state.items.firstIndex { $0.due > item.due } ?? state.items.endIndex
        state.items.insert(item, at: index)
        if index == 0 { pthread_cond_signal(condition) }
    }

    /// Starts the thread (detached: it waits for work as long as the process runs).
    private func startThread() -> Bool {
        BackgroundWork.start { [self] in loop() } == 0
    }

    /// The thread's body: runs each item at its time, waiting in between.
    private func loop() -> Never {
        pthread_mutex_lock(mutex)
        while true {
            guard let first = state.items.first else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            let now = Monotonic.now()
            guard first.due <= now else {
                var deadline = Self.timespec(at: first.due)
                _ = pthread_cond_timedwait(condition, mutex, &deadline)
                continue
            }
            state.items.removeFirst()
            pthread_mutex_unlock(mutex)
            first.work()
            pthread_mutex_lock(mutex)
        }
    }

    /// `seconds` of the monotonic clock as a `timespec`.
    private static func timespec(at seconds: Double) -> Glibc.timespec {
        let whole = seconds.rounded(.down)
        return Glibc.timespec(tv_sec: Int(whole), tv_nsec: min(999_999_999, Int((seconds - whole) * 1e9)))
    }
}
