/// Punycode (RFC 3492): a label of Unicode scalars written with ASCII letters, digits and
/// hyphens, the encoding internationalised host names travel in (`xn--` labels).
enum Punycode {
    private static let base: UInt32 = 36
    private static let tMin: UInt32 = 1
    private static let tMax: UInt32 = 26
    private static let skew: UInt32 = 38
    private static let damp: UInt32 = 700
    private static let initialBias: UInt32 = 72
    private static let initialN: UInt32 = 128

    /// `scalars` encoded (without the `xn--` prefix): the ASCII scalars in order, a hyphen when
    /// there were any, then the others as generalized variable-length integers. Nil when a
    /// count would overflow, which takes a label far longer than any host name allows.
    static func encode(_ scalars: [Unicode.Scalar]) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(scalars.count * 2 + 1)
        for scalar in scalars where scalar.isASCII { output.append(UInt8(scalar.value)) }
        let basicCount = UInt32(output.count)
        if basicCount > 0 { output.append(UInt8(ascii: "-")) }
        var n = initialN
        var delta: UInt32 = 0
        var bias = initialBias
        var handled = basicCount
        while handled < UInt32(scalars.count) {
            // The smallest code point not handled yet.
            var next = UInt32.max
            for scalar in scalars where scalar.value >= n && scalar.value < next { next = scalar.value }
            let (step, stepOverflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            guard !stepOverflow, case (let sum, false) = delta.addingReportingOverflow(step) else { return nil }
            delta = sum
            n = next
            for scalar in scalars {
                if scalar.value < n {
                    guard case (let sum, false) = delta.addingReportingOverflow(1) else { return nil }
                    delta = sum
                }
                guard scalar.value == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, points: handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            guard case (let advanced, false) = delta.addingReportingOverflow(1) else { return nil }
            delta = advanced
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bias for the next integer (RFC 3492, section 6.1).
    private static func adapt(_ delta: UInt32, points: UInt32, first: Bool) -> UInt32 {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k: UInt32 = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + ((base - tMin + 1) * delta) / (delta + skew)
    }

    /// 0–25 as `a`–`z`, 26–35 as `0`–`9`.
    private static func digit(_ value: UInt32) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }
}
