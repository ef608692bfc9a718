/// Deterministic bytes for large bodies: byte `i` depends only on `i`, so any range of a
/// resource can be produced (and checked) on its own.
public enum TestData {
    /// The period of the pattern: prime, so it never lines up with buffer sizes.
    static let period = 65_521
    static let block: [UInt8] = (0..<period).map { index in
        UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 11 ^ index)
    }

    /// `count` bytes of the pattern starting at `offset`.
    public static func bytes(count: Int, offset: Int = 0) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        var position = offset % period
        var remaining = count
        while remaining > 0 {
            let take = min(remaining, period - position)
            out.append(contentsOf: block[position..<(position + take)])
            remaining -= take
            position = 0
        }
        return out
    }

    /// Writes `count` bytes of the pattern from `offset` through `write`, in chunks of
    /// `chunkSize`; stops early when `write` returns false.
    @discardableResult
    public static func stream(count: Int, offset: Int = 0, chunkSize: Int = 256 * 1024, write: ([UInt8]) -> Bool) -> Bool {
        var sent = 0
        while sent < count {
            let take = min(chunkSize, count - sent)
            guard write(bytes(count: take, offset: offset + sent)) else { return false }
            sent += take
        }
        return true
    }
}

/// Minimal JSON text building for server replies.
public enum JSONText {
    /// A JSON string literal, escaped as `JSONWriter` escapes (the short forms where JSON
    /// has one, `\u00XX` for other control characters).
    public static func string(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

import COpenSSL

/// Digests for checking downloads.
public enum Digests {
    /// Lower-case hex SHA-256.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha256(), nil) }
        return digest.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }
}
