/// Formatting helpers shared by messages.
package enum Format {
    /// `1.5s`, `2s`, `250ms`.
    package static func seconds(_ value: Double) -> String {
        // A positive time never reads "0ms" (a limit under half a millisecond is applied as 1 ms).
        if value < 1, value > 0 { return "\(max(1, Saturating.int((value * 1000).rounded())))ms" }
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)s" }
        if value == value.rounded() { return "\(Int(value))s" }
        return "\(decimal(value, places: 1))s"
    }

    /// A decimal with a fixed number of places, without Foundation.
    package static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        let sign = value < 0 && scaled > 0 ? "-" : ""
        guard places > 0 else { return "\(sign)\(whole)" }
        var digits = String(fraction)
        while digits.count < places { digits = "0" + digits }
        return "\(sign)\(whole).\(digits)"
    }

    /// `512 B`, `1.5 KiB`, `3.2 MiB`, `1.1 GiB`.
    package static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : "\(decimal(value, places: 1)) \(units[unit])"
    }
}
