/// Conversions from floating point that cannot trap: values from users and servers can be
/// huge, infinite or NaN, and Swift's `Int(_:)` traps on all three.
package enum Saturating {
    /// `value` rounded toward zero and clamped to `Int`'s range; NaN becomes 0.
    package static func int(_ value: Double) -> Int {
        guard !value.isNaN else { return 0 }
        if value >= 9.2e18 { return Int.max }
        if value <= -9.2e18 { return Int.min }
        return Int(value)
    }

    /// `seconds` as whole milliseconds, rounded, at least `minimum`, at most `Int32.max` (the
    /// range libcurl's millisecond options take as a C `long` on every platform).
    package static func milliseconds(_ seconds: Double, minimum: Int = 0) -> Int {
        min(Int(Int32.max), max(minimum, int((seconds * 1000).rounded())))
    }
}
