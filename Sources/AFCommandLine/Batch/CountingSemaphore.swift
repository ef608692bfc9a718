#if canImport(Glibc)
import Glibc
#endif

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
