#if canImport(Glibc)
import Glibc
#endif

/// Runs blocking work (a token command) on a short-lived thread of its own, so that the
/// transfer thread never waits for it.
package enum BackgroundWork {
    private final class Box {
        let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }

    /// Runs `work` on a new detached thread and returns at once; where the system refuses a
    /// thread, runs it here.
    package static func run(_ work: @escaping @Sendable () -> Void) {
        if start(work) != 0 { work() }
    }

    /// Starts `work` on a new detached thread; `pthread_create`'s result: 0 when it started,
    /// else the reason the system refused it (`work` then never runs).
    package static func start(_ work: @escaping @Sendable () -> Void) -> Int32 {
        let context = Unmanaged.passRetained(Box(work)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().work()
            return nil
        }, context)
        if created == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Box>.fromOpaque(context).release()
        }
        return created
    }
}
