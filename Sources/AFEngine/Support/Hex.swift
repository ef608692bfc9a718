/// Hexadecimal text for bytes: the one encoder digests, fingerprints and percent-escapes use.
package enum Hex {
    /// Two digits per byte, lower-case unless `uppercase`, joined by `separator`.
    package static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false, separator: String = "") -> String {
        var out: [UInt8] = []
        let separatorBytes = Array(separator.utf8)
        for (index, byte) in bytes.enumerated() {
            if index > 0 { out.append(contentsOf: separatorBytes) }
            append(byte, to: &out, uppercase: uppercase)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the two digits of `byte` to `out`, lower-case unless `uppercase`.
    package static func append(_ byte: UInt8, to out: inout [UInt8], uppercase: Bool = false) {
        let letters = uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")
        let high = byte >> 4, low = byte & 15
        out.append(high < 10 ? UInt8(ascii: "0") + high : letters + high - 10)
        out.append(low < 10 ? UInt8(ascii: "0") + low : letters + low - 10)
    }
}
