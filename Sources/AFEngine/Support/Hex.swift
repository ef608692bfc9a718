/// Hexadecimal text for bytes: the one encoder digests, fingerprints and percent-escapes use.
package enum Hex {
    /// Two digits per byte, lower-case unless `uppercase`, joined by `separator`.
    package static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false, separator: String = "") -> String {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var out: [UInt8] = []
        let separatorBytes = Array(separator.utf8)
        for (index, byte) in bytes.enumerated() {
            if index > 0 { out.append(contentsOf: separatorBytes) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
