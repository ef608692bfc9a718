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

    /// Quotation marks that stand for `'` and `"` in text copied from a document: the curly
    /// ones, low-9 ones, guillemets, primes and fullwidth ones. A JSON error and the command
    /// line's check of a URL name them.
    package static let typographicQuotes: Set<Unicode.Scalar> = [
        "\u{2018}", "\u{2019}", "\u{201A}", "\u{201B}", "\u{201C}", "\u{201D}", "\u{201E}", "\u{201F}",
        "\u{00AB}", "\u{00BB}", "\u{2039}", "\u{203A}", "\u{2032}", "\u{2033}", "\u{FF02}", "\u{FF07}",
    ]

    /// `U+00E9`: a code point as Unicode writes it, in four hex digits at least.
    package static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// A decimal with a fixed number of places, without Foundation.
    package static func decimal(_ value: Double, places: Int) -> String {
        var bytes: [UInt8] = []
        appendDecimal(value, places: places, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `decimal(value, places:)`'s text to `out`, digit by digit (a report writes
    /// several a line). A value whose scaled digits would not fit an `Int` is written as
    /// Swift prints it.
    package static func appendDecimal(_ value: Double, places: Int, to out: inout [UInt8]) {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard value.isFinite, abs(value) < 1e15, scaled < 9e18 else {
            out.append(contentsOf: "\(value)".utf8)
            return
        }
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        if value < 0, scaled > 0 { out.append(UInt8(ascii: "-")) }
        appendDigits(UInt(whole), atLeast: 1, to: &out)
        guard places > 0 else { return }
        out.append(UInt8(ascii: "."))
        appendDigits(UInt(fraction), atLeast: places, to: &out)
    }

    /// Appends `value`'s decimal digits (and sign) to `out`, as `String(value)` writes them.
    package static func appendInteger(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, atLeast: 1, to: &out)
    }

    /// The decimal digits of `number`, with leading zeros up to `count`: written from the
    /// end of a small buffer on the stack, then appended at once.
    private static func appendDigits(_ number: UInt, atLeast count: Int, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var start = buffer.count
            var rest = number
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            for _ in 0..<max(0, count - (buffer.count - start)) { out.append(UInt8(ascii: "0")) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
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
