#if canImport(Glibc)
import Glibc
#endif

/// Seconds on the monotonic clock. (`ContinuousClock` would do, but it lives in the
/// concurrency runtime, which a CLI that never awaits should not have to load.)
package enum Monotonic {
    /// Seconds since an arbitrary fixed point; only differences mean anything.
    package static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
