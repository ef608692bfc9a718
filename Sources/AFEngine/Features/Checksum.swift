/// An expected digest for a download: `sha256:HEX` (also sha1, sha512, md5).
public struct Checksum: Sendable, Equatable {
    /// The hash function.
    public var algorithm: Digest.Algorithm
    /// The expected digest.
    public var expected: [UInt8]

    /// Parses `ALGO:HEX`, or explains what is wrong with it.
    public init(parsing text: String) throws(AFError) {
        let parts = text.split(byte: UInt8(ascii: ":"), maxSplits: 1)
        let names = Digest.Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
        guard parts.count == 2, let algorithm = Digest.Algorithm(rawValue: parts[0].lowercased()) else {
            throw .invalidRequest(reason: "invalid checksum '\(text)': expected ALGO:HEX with ALGO one of \(names)")
        }
        let hex = Array(parts[1].lowercased().utf8)
        guard hex.count == algorithm.length * 2 else {
            throw .invalidRequest(reason: "invalid checksum '\(text)': a \(algorithm.rawValue) digest has \(algorithm.length * 2) hexadecimal digits, not \(hex.count)")
        }
        var bytes: [UInt8] = []
        var index = 0
        while index < hex.count {
            guard let high = Self.nibble(hex[index]), let low = Self.nibble(hex[index + 1]) else {
                throw .invalidRequest(reason: "invalid checksum '\(text)': '\(parts[1])' is not hexadecimal")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.algorithm = algorithm
        expected = bytes
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - 48
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - 87
        default: return nil
        }
    }
}
