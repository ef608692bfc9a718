#if canImport(Glibc)
import Glibc
#endif

/// A detached POSIX thread running one closure (af uses no Foundation).
enum Thread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread with signals blocked (the main thread takes
    /// them); false when the system refuses a thread.
    @discardableResult
    static func detached(_ body: @escaping @Sendable () -> Void) -> Bool {
        var all = sigset_t()
        var previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Body>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}

/// A counting semaphore (POSIX `sem_t`).
final class CountingSemaphore: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    init(_ count: Int) {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, UInt32(max(0, count)))
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Takes one unit, waiting for it.
    func wait() {
        while sem_wait(semaphore) != 0, errno == EINTR {}
    }

    /// Gives one unit back.
    func signal() {
        sem_post(semaphore)
    }
}
