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

    /// Runs `work` on a new detached thread and returns at once.
    package static func run(_ work: @escaping @Sendable () -> Void) {
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
            Unmanaged<Box>.fromOpaque(context).takeRetainedValue().work()
        }
    }
}
